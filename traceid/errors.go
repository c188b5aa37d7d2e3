package traceid

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrSyntax reports text that is not the canonical decimal form of a
	// TraceId.
	ErrSyntax = errkind.New(idkit.ErrInvalid, "traceid: invalid syntax")
	// ErrRange reports a number that is not a TraceId (see ID).
	ErrRange = errkind.New(idkit.ErrInvalid, "traceid: not an ID")
	// ErrInvalid reports a field or option outside its allowed range.
	ErrInvalid = errkind.New(idkit.ErrInvalid, "traceid: invalid")
	// ErrExhausted reports that no ID can be issued until the clock reaches
	// the next second: the second's counters ran out (with Options.NoWait),
	// or a new generator has not yet reached a fresh second.
	ErrExhausted = errkind.New(idkit.ErrExhausted, "traceid: counter exhausted for this second")
	// ErrStore reports that the high-water store failed, so no ID past the
	// leased seconds can be issued safely.
	ErrStore = errkind.New(idkit.ErrUnavailable, "traceid: high-water store failed")
	// ErrNodeLost reports that the generator's node claim is lost (see
	// Options.Claim): it issues no more IDs.
	ErrNodeLost = errkind.New(idkit.ErrNodeLost, "traceid: node claim lost")
	// ErrClosed reports a call on a closed Generator, or on a PerCore or
	// Shard of one.
	ErrClosed = errkind.New(idkit.ErrClosed, "traceid: generator closed")
)
