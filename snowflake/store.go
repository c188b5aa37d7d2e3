package snowflake

import (
	"time"

	"github.com/idkit/idkit/store"
)

// HighWaterStore persists, per key, a time that only ever moves forward.
// A Generator with a store leases ticks ahead in it, and a new Generator
// for the same key starts only once the wall clock has passed the mark, so
// that no run reuses a tick an earlier run may have issued IDs in, even if
// the clock was stepped back while the process was down. launchlog.Log
// implements it.
type HighWaterStore = store.HighWater

// NodeClaim is a node number held for a limited time, such as a claim in
// etcd (package fleet). Its number is the whole node value, all of the
// layout's node fields together (see Layout.SplitNode). A Generator on a claim
// keeps its high-water marks in the claim, whose writes are fenced by it: a
// write fails once the claim is lost, and a mark written by another holder
// never raises this one's limit. So a later holder of the node starts
// above every tick an earlier one could issue in, whatever their clocks
// read.
//
// The Generator checks the claim where it already reads the precise clock
// (a new tick, a wait, after every store call, every ID while the clock
// is behind), never per ID, and enters a tick only if the claim holds
// until the tick ends (plus clock.CoarseLag), so that no ID is handed out
// after the claim's deadline. Once the claim is lost it fails with
// ErrNodeLost. *fleet.Claim implements NodeClaim.
type NodeClaim interface {
	// Node returns the claimed node number.
	Node() int
	// Check returns nil if the claim holds until t, as far as is known
	// now, and an error once it is lost; a lost claim stays lost. t may be
	// later than now: a claim that will not hold until t is lost at once.
	Check(t time.Time) error
	// HighWaterStore keeps the node's marks, every write fenced by the
	// claim.
	HighWaterStore
}
