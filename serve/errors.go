package serve

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

// ErrInvalid reports Options that cannot be served: a field out of its
// range, no scheme, a scheme twice, or a scheme without the store it
// needs. Errors of a scheme's own options wrap that package's ErrInvalid
// instead; both are of kind idkit.ErrInvalid.
var ErrInvalid = errkind.New(idkit.ErrInvalid, "serve: invalid options")
