package scheme

import "errors"

var (
	// ErrUnknownScheme reports a scheme name that is not in the registry.
	ErrUnknownScheme = errors.New("compare: unknown scheme")
	// ErrKey reports a generator that returned a key of the wrong length,
	// which would make the measurements meaningless.
	ErrKey = errors.New("compare: bad key")
)
