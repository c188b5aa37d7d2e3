package scheme

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrUnknownScheme reports a scheme name that is not in the registry.
	ErrUnknownScheme = errkind.New(idkit.ErrInvalid, "compare: unknown scheme")
	// ErrKey reports a generator that returned a key of the wrong length,
	// which would make the measurements meaningless.
	ErrKey = errkind.New(idkit.ErrCorrupt, "compare: bad key")
)
