package decimalid

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrSyntax reports text that is neither canonical form of a DecimalId.
	ErrSyntax = errkind.New(idkit.ErrInvalid, "decimalid: invalid syntax")
	// ErrRange reports a number that is not a DecimalId: outside
	// 10000000000 to 9223372029999999999 (counter 1 to 922337202).
	ErrRange = errkind.New(idkit.ErrInvalid, "decimalid: not an ID")
	// ErrInvalid reports a field or option outside its allowed range.
	ErrInvalid = errkind.New(idkit.ErrInvalid, "decimalid: invalid")
	// ErrSource reports that the generator source failed or returned a
	// generator id that cannot be used; no ID is issued until it succeeds.
	ErrSource = errkind.New(idkit.ErrUnavailable, "decimalid: generator source failed")
	// ErrClosed reports a call on a closed Generator.
	ErrClosed = errkind.New(idkit.ErrClosed, "decimalid: generator closed")
)
