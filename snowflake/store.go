package snowflake

import "time"

// HighWaterStore persists, per key, a time that only ever moves forward.
// A Generator with a store leases ticks ahead in it, and a new Generator
// for the same key starts only once the wall clock has passed the mark, so
// that no run reuses a tick an earlier run may have issued IDs in, even if
// the clock was stepped back while the process was down. launchlog.Log
// implements it.
type HighWaterStore interface {
	// HighWater returns the mark stored for key, or the zero time if there
	// is none.
	HighWater(key string) (time.Time, error)
	// AdvanceHighWater moves the mark for key to t unless it is already
	// later, durably, and returns the mark now stored.
	AdvanceHighWater(key string, t time.Time) (time.Time, error)
}

// NodeClaim is a node number held for a limited time, such as a claim in
// etcd (package fleet). Its number is the whole node value, all of the
// layout's node fields together (see Layout.SplitNode). A Generator with a
// claim checks it where it already reads the precise clock (a new tick, a
// wait, a lease renewal), never per ID, and fails with ErrNodeLost once it
// is lost. *fleet.Claim implements it.
type NodeClaim interface {
	// Node returns the claimed node number.
	Node() int
	// Check returns nil while the claim is held at time now and an error
	// once it is lost; a lost claim stays lost.
	Check(now time.Time) error
}
