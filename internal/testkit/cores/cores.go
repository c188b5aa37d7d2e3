// Package cores runs a benchmark's work on every processor at once.
package cores

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// warmUp is how long every goroutine spins before the timed work starts.
const warmUp = 20 * time.Millisecond

// Split runs GOMAXPROCS goroutines that share b.N iterations between
// them, each calling work once with its share, and waits for them. Unlike
// b.RunParallel it keeps no shared counter: pb.Next adds to one on every
// call under a fixed -benchtime count, which measures the framework as
// much as the work. ns/op is then the wall time per iteration.
//
// The timer starts once every goroutine has spun for warmUp: a thread
// woken from idle started a few milliseconds late here, and ran slower
// at first, which in a run of a few milliseconds measured the machine's
// wake-up rather than the work.
func Split(b *testing.B, work func(n int)) {
	procs := runtime.GOMAXPROCS(0)
	b.StopTimer()
	var ready atomic.Int32
	var start atomic.Bool
	var wg sync.WaitGroup
	for k := range procs {
		wg.Go(func() {
			ready.Add(1)
			for !start.Load() {
				// Spin, keeping this goroutine's core busy.
			}
			work(b.N/procs + min(1, b.N%procs/(k+1)))
		})
	}
	for ready.Load() < int32(procs) {
		runtime.Gosched()
	}
	time.Sleep(warmUp)
	b.StartTimer()
	start.Store(true)
	wg.Wait()
}
