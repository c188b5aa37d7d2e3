// Package store declares, once, what idkit's generators need from a
// store: high-water marks (traceid, snowflake, flake128) and generator ids
// (decimalid). Each scheme names them under its own name as an alias
// (traceid.HighWaterStore is store.HighWater), so that one type serves
// them all. launchlog.Log (a bbolt file) and fleet.Log (etcd) implement
// both; fleet.Claim keeps a node's marks. segment.BlockStore is the third
// such interface, declared with its Block in package segment.
//
// Every call takes a context: a store returns the context's error,
// wrapped, when it ends before the write is known to be durable. A write
// whose outcome is unknown may have been applied; callers treat it as
// applied where that is the safe side (a mark moved, a generator id
// used).
package store

import (
	"context"
	"time"
)

// HighWater persists, per key, a time that only ever moves forward. A
// generator leases units of time ahead in it, and a new generator for the
// same key starts after the mark, so that no run reuses a unit an earlier
// run may have issued IDs in, even if the clock was stepped back while the
// process was down.
type HighWater interface {
	// HighWater returns the mark stored for key, or the zero time if there
	// is none.
	HighWater(ctx context.Context, key string) (time.Time, error)
	// AdvanceHighWater moves the mark for key to t unless it is already
	// later, durably, and returns the mark now stored.
	AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error)
}

// Generators hands out generator ids for a launch: every call returns an
// id in 0 to 99999 that no earlier call for that launch returned,
// anywhere in the system, and persists that fact before it returns.
type Generators interface {
	NextGenerator(ctx context.Context, launch int) (int, error)
}
