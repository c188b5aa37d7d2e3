package compare

import "errors"

var (
	// ErrUnknownScheme reports a scheme name that is not in the registry.
	ErrUnknownScheme = errors.New("compare: unknown scheme")
	// ErrOptions reports an option outside its allowed range.
	ErrOptions = errors.New("compare: invalid options")
	// ErrKey reports a generator that returned a key of the wrong length,
	// which would make the measurements meaningless.
	ErrKey = errors.New("compare: bad key")
	// ErrNoSpace reports a directory with less free space than a run's
	// largest load needs.
	ErrNoSpace = errors.New("compare: not enough free disk")
	// ErrEmptyReport reports a report with no schemes to show.
	ErrEmptyReport = errors.New("compare: report has no schemes")
)
