package decimalid

import "errors"

var (
	// ErrSyntax reports text that is neither form of a DecimalId.
	ErrSyntax = errors.New("decimalid: not a DecimalId (want decimal digits without leading zeros, or counter-ggggg-lllll)")
	// ErrRange reports a value outside the ID domain
	// 10000000000..=9223372029999999999 (counter 1..=922337202).
	ErrRange = errors.New("decimalid: out of range 10000000000..=9223372029999999999")
	// ErrInvalid reports a field or option outside its allowed range.
	ErrInvalid = errors.New("decimalid: invalid")
	// ErrSource reports that the generator source failed or returned a
	// generator id that cannot be used; no ID is issued until it succeeds.
	ErrSource = errors.New("decimalid: generator source failed")
)
