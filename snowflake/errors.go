package snowflake

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrSyntax reports text that is not the canonical decimal form of an
	// ID.
	ErrSyntax = errkind.New(idkit.ErrInvalid, "snowflake: invalid syntax")
	// ErrRange reports a number that is not an ID: not from 1 to 2^63-1.
	ErrRange = errkind.New(idkit.ErrInvalid, "snowflake: not an ID")
	// ErrInvalid reports a layout, field, option or part outside its allowed
	// range; the wrapping error names it and the range.
	ErrInvalid = errkind.New(idkit.ErrInvalid, "snowflake: invalid")
	// ErrExpired reports that a layout's timestamp has run out: no tick
	// after Layout.Expires fits in its time bits.
	ErrExpired = errkind.New(idkit.ErrExhausted, "snowflake: layout's timestamp has run out")
	// ErrClockBackwards reports that the wall clock stepped back further
	// than the generator's ClockPolicy tolerates.
	ErrClockBackwards = errkind.New(idkit.ErrUnavailable, "snowflake: clock moved backwards beyond tolerance")
	// ErrExhausted reports that the current tick's sequence ran out under
	// ExhaustError.
	ErrExhausted = errkind.New(idkit.ErrExhausted, "snowflake: sequence exhausted for this tick")
	// ErrStore reports that the high-water store failed, so no ID past the
	// leased ticks can be issued safely.
	ErrStore = errkind.New(idkit.ErrUnavailable, "snowflake: high-water store failed")
	// ErrNodeLost reports that the generator's node claim is lost (see
	// Options.Claim): it issues no more IDs.
	ErrNodeLost = errkind.New(idkit.ErrNodeLost, "snowflake: node claim lost")
	// ErrClosed reports a call on a closed Generator.
	ErrClosed = errkind.New(idkit.ErrClosed, "snowflake: generator closed")
)
