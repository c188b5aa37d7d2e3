// Package cores runs a benchmark's work on every processor at once.
package cores

import (
	"runtime"
	"sync"
	"testing"
)

// Split runs GOMAXPROCS goroutines that share b.N iterations between
// them, each calling work once with its share, and waits for them. Unlike
// b.RunParallel it keeps no shared counter: pb.Next adds to one on every
// call under a fixed -benchtime count, which measures the framework as
// much as the work. ns/op is then the wall time per iteration.
func Split(b *testing.B, work func(n int)) {
	procs := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for k := range procs {
		wg.Go(func() { work(b.N/procs + min(1, b.N%procs/(k+1))) })
	}
	wg.Wait()
}
