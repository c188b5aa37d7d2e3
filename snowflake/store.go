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
