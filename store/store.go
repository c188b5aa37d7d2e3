// Package store declares, once, what idkit's generators need from a
// store: high-water marks (traceid, snowflake, flake128), one live holder
// of a mark at a time (Holder), and generator ids (decimalid). Each scheme names them under its own name as an alias
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

// Holder is a HighWater store that lets one live holder at a time use a
// key, so that two processes configured with the same node cannot both
// issue under it. launchlog.Log is one: the processes of a host see each
// other's holds through an OS file lock that dies with its process.
//
// A generator whose store is a Holder holds its mark's key from its start
// until Close, and a Reserve call holds it for the call, keeping the mark
// through the Held: a second holder of the key fails at once. A Held
// passed as a generator's store is used as it is, so that a caller (a
// command line call made of several Reserve calls) can hold a key longer
// than one generator.
type Holder interface {
	HighWater
	// Hold takes key for the caller, or fails with an error of kind
	// idkit.ErrHeld that names the live holder. ctx bounds a wait for the
	// key, where the store waits at all.
	Hold(ctx context.Context, key string) (Held, error)
}

// Held is a key held in a Holder, and the store of its marks while it is
// held. Close releases the key once the writes in flight have ended; the
// writes after it fail. A holder that dies releases the key at once.
type Held interface {
	HighWater
	Close() error
}

// Generators hands out generator ids for a launch: every call returns an
// id in 0 to 99999 that no earlier call for that launch returned,
// anywhere in the system, and persists that fact before it returns.
type Generators interface {
	NextGenerator(ctx context.Context, launch int) (int, error)
}
