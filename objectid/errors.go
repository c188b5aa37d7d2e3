package objectid

import "errors"

var (
	// ErrSyntax reports text that is not 24 hexadecimal digits.
	ErrSyntax = errors.New("objectid: not 24 hexadecimal digits")
	// ErrInvalid reports a value outside its allowed range: raw bytes that
	// are not 12, a time outside 1970..2106, a counter above 2^24-1. The
	// wrapping error names it and the range.
	ErrInvalid = errors.New("objectid: invalid")
)
