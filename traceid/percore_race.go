//go:build race

package traceid

import "sync/atomic"

// advance returns r's next low value and moves it on. Under the race
// detector it counts atomically: the detector cannot see that only the
// goroutine pinned to r's processor touches r, and would report two
// goroutines that took turns on that processor.
func (r *run) advance() uint64 { return atomic.AddUint64(&r.n, 1) - 1 }

// put makes r the slot's run. Under the race detector it stores a new one,
// since the detector cannot see that the one it replaces is no longer read
// (see advance).
func (s *coreSlot) put(r run) { s.run.Store(&r) }
