// Package errkind makes the sentinels of idkit's packages: errors with a
// message of their own that are of one of the kinds of package idkit.
package errkind

// New returns an error whose message is text and which errors.Is finds to
// be kind.
func New(kind error, text string) error { return &sentinel{text, kind} }

type sentinel struct {
	text string
	kind error
}

func (e *sentinel) Error() string { return e.text }
func (e *sentinel) Unwrap() error { return e.kind }

// Mark returns err with its message unchanged, and which errors.Is finds
// to be sentinel (and so of sentinel's kind) as well as what err wraps: a
// store marks its server's errors this way, keeping the words that name
// what failed.
func Mark(sentinel, err error) error { return &marked{err, sentinel} }

type marked struct {
	err      error
	sentinel error
}

func (e *marked) Error() string   { return e.err.Error() }
func (e *marked) Unwrap() []error { return []error{e.err, e.sentinel} }
