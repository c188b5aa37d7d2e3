package flake128

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrSyntax reports text that is neither base-62 text without leading
	// zeros nor 32 lowercase hexadecimal digits.
	ErrSyntax = errkind.New(idkit.ErrInvalid, "flake128: invalid syntax")
	// ErrRange reports a value that is not an ID: zero, or base-62 text
	// above 2^128-1.
	ErrRange = errkind.New(idkit.ErrInvalid, "flake128: not an ID")
	// ErrInvalid reports an option or part outside its allowed range; the
	// wrapping error names it and the range.
	ErrInvalid = errkind.New(idkit.ErrInvalid, "flake128: invalid")
	// ErrClockBackwards reports that IDs have run further ahead of the
	// wall clock than Options.MaxLead and the clock would not catch up
	// within Options.MaxWait.
	ErrClockBackwards = errkind.New(idkit.ErrUnavailable, "flake128: clock moved backwards beyond tolerance")
	// ErrStore reports that the high-water store failed, so no ID past the
	// leased milliseconds can be issued safely.
	ErrStore = errkind.New(idkit.ErrUnavailable, "flake128: high-water store failed")
	// ErrNodeLost reports a worker's hold in a launch log taken over by
	// another holder (store.Held): the generator issues no more IDs past
	// the milliseconds it leased.
	ErrNodeLost = errkind.New(idkit.ErrNodeLost, "flake128: worker's hold lost")
	// ErrClosed reports a call on a closed Generator.
	ErrClosed = errkind.New(idkit.ErrClosed, "flake128: generator closed")
)
