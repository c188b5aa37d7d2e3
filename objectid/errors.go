package objectid

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrSyntax reports text that is not 24 hexadecimal digits.
	ErrSyntax = errkind.New(idkit.ErrInvalid, "objectid: invalid syntax")
	// ErrRange reports the all-zero ObjectID, which is not an ID.
	ErrRange = errkind.New(idkit.ErrInvalid, "objectid: not an ID")
	// ErrInvalid reports a value outside its allowed range: raw bytes that
	// are not 12, a time outside 1970 to 2106, a counter above 2^24-1. The
	// wrapping error names it and the range.
	ErrInvalid = errkind.New(idkit.ErrInvalid, "objectid: invalid")
	// ErrClosed reports a call on a closed Generator.
	ErrClosed = errkind.New(idkit.ErrClosed, "objectid: generator closed")
)
