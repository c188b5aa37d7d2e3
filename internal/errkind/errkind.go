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
