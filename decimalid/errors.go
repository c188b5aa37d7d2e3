package decimalid

import "errors"

var (
	// ErrSyntax reports text that is neither canonical form of a DecimalId.
	ErrSyntax = errors.New("decimalid: invalid syntax")
	// ErrRange reports a number that is not a DecimalId: outside
	// 10000000000 to 9223372029999999999 (counter 1 to 922337202).
	ErrRange = errors.New("decimalid: not an ID")
	// ErrInvalid reports a field or option outside its allowed range.
	ErrInvalid = errors.New("decimalid: invalid")
	// ErrSource reports that the generator source failed or returned a
	// generator id that cannot be used; no ID is issued until it succeeds.
	ErrSource = errors.New("decimalid: generator source failed")
)
