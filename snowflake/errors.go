package snowflake

import "errors"

var (
	// ErrSyntax reports text that is not the canonical decimal form of an
	// ID.
	ErrSyntax = errors.New("snowflake: invalid syntax")
	// ErrRange reports a number that is not an ID: not from 1 to 2^63-1.
	ErrRange = errors.New("snowflake: not an ID")
	// ErrInvalid reports a layout, field, option or part outside its allowed
	// range; the wrapping error names it and the range.
	ErrInvalid = errors.New("snowflake: invalid")
	// ErrExpired reports that a layout's timestamp has run out: no tick
	// after Layout.Expires fits in its time bits.
	ErrExpired = errors.New("snowflake: layout's timestamp has run out")
	// ErrClockBackwards reports that the wall clock stepped back further
	// than the generator's ClockPolicy tolerates.
	ErrClockBackwards = errors.New("snowflake: clock moved backwards beyond tolerance")
	// ErrExhausted reports that the current tick's sequence ran out under
	// ExhaustError.
	ErrExhausted = errors.New("snowflake: sequence exhausted for this tick")
	// ErrStore reports that the high-water store failed, so no ID past the
	// leased ticks can be issued safely.
	ErrStore = errors.New("snowflake: high-water store failed")
	// ErrNodeLost reports that the generator's node claim is lost (see
	// Options.Claim): it issues no more IDs.
	ErrNodeLost = errors.New("snowflake: node claim lost")
)
