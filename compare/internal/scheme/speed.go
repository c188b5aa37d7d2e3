package scheme

import (
	"runtime"
	"sync"
	"time"
)

// Speed is the measured cost of generating one ID.
type Speed struct {
	// NsPerID is wall time per ID on one goroutine, key encoding included.
	NsPerID float64 `json:"ns_per_id"`
	// ParallelNsPerID is wall time per ID with Goroutines goroutines
	// sharing one generator: the inverse of its throughput.
	ParallelNsPerID float64 `json:"parallel_ns_per_id"`
	// Goroutines is how many goroutines the parallel run used (GOMAXPROCS).
	Goroutines int `json:"goroutines"`
	// AllocsPerID is heap allocations per ID on one goroutine.
	AllocsPerID float64 `json:"allocs_per_id"`
	// IDs is how many IDs the final single and parallel rounds generated.
	IDs         int `json:"ids"`
	ParallelIDs int `json:"parallel_ids"`
	// AtCap says the generator waits when a tick's allowance runs out and
	// its single-goroutine rate came within 0.8x..1.25x of the layout's
	// IDs per second per node: the figure is the layout's limit, not the
	// cost of an ID.
	AtCap bool `json:"at_cap"`
}

// MeasureSpeed times g for about d on one goroutine and about d on
// GOMAXPROCS goroutines. Like testing.B it grows the round until a round
// lasts d; it then runs that round twice more and reports the fastest of
// the three, which keeps a busy neighbour on a shared machine out of the
// figure. For a scheme whose layout caps the IDs per second a round stops
// at an eighth of a second's allowance, so that all the rounds together
// stay inside one second's and the figure is the cost of an ID rather than
// the wait for the next second; a cap per millisecond is reached
// regardless, and then the figure is the cap.
func MeasureSpeed(g Generator, keyLen int, d time.Duration, design Design) (Speed, error) {
	var s Speed
	perSecond := design.PerSecond
	maxN := 1 << 30
	if perSecond > 0 {
		maxN = int(max(1, min(perSecond/8, int64(maxN))))
	}
	// A new generator may wait for a fresh tick before its first ID.
	if _, err := g.Next(make([]byte, 0, keyLen)); err != nil {
		return s, err
	}
	single := func(n int) (time.Duration, uint64, error) { return runSingle(g, keyLen, n) }
	n, elapsed, mallocs, err := grow(d, maxN, single)
	if err == nil {
		elapsed, mallocs, err = fastest(n, elapsed, mallocs, single)
	}
	if err != nil {
		return s, err
	}
	s.IDs = n
	s.NsPerID = float64(elapsed.Nanoseconds()) / float64(n)
	s.AtCap = atCap(s.NsPerID, design)
	s.AllocsPerID = float64(mallocs) / float64(n)

	p := runtime.GOMAXPROCS(0)
	s.Goroutines = p
	parallel := func(n int) (time.Duration, uint64, error) { return runParallel(g, keyLen, n, p) }
	n, elapsed, _, err = grow(d, maxN, parallel)
	if err == nil {
		elapsed, _, err = fastest(n, elapsed, 0, parallel)
	}
	if err != nil {
		return s, err
	}
	s.ParallelIDs = n
	s.ParallelNsPerID = float64(elapsed.Nanoseconds()) / float64(n)
	return s, nil
}

// atCap says whether a generator measured at nsPerID runs at its layout's
// limit: it waits when a tick's allowance runs out, and its rate is near
// the allowance. A short round may also use the allowance of the tick it
// starts in, so it can beat the limit by up to a tick's worth.
func atCap(nsPerID float64, d Design) bool {
	if !d.Waits || d.PerSecond <= 0 || nsPerID <= 0 {
		return false
	}
	rate, limit := 1e9/nsPerID, float64(d.PerSecond)
	return rate >= 0.8*limit && rate <= 1.25*limit
}

// fastest runs round(n) twice more and returns the shortest of those and
// the round already run (elapsed, mallocs).
func fastest(n int, elapsed time.Duration, mallocs uint64, round func(n int) (time.Duration, uint64, error)) (time.Duration, uint64, error) {
	for range 2 {
		e, m, err := round(n)
		if err != nil {
			return 0, 0, err
		}
		if e < elapsed {
			elapsed, mallocs = e, m
		}
	}
	return elapsed, mallocs, nil
}

// grow runs round with n = 1, then larger n predicted from the last
// round, until a round takes at least d or has maxN IDs.
func grow(d time.Duration, maxN int, round func(n int) (time.Duration, uint64, error)) (int, time.Duration, uint64, error) {
	n := 1
	for {
		elapsed, mallocs, err := round(n)
		if err != nil {
			return 0, 0, 0, err
		}
		if elapsed >= d || n >= maxN {
			return n, elapsed, mallocs, nil
		}
		next := 100 * n
		if elapsed > 0 {
			if predicted := int(float64(n) * 1.2 * float64(d) / float64(elapsed)); predicted < next {
				next = predicted
			}
		}
		n = min(max(next, n+1), maxN)
	}
}

// runSingle generates n IDs on this goroutine and returns the time it took
// and the heap allocations it made.
func runSingle(g Generator, keyLen, n int) (time.Duration, uint64, error) {
	buf := make([]byte, 0, keyLen)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range n {
		b, err := g.Next(buf[:0])
		if err != nil {
			return 0, 0, err
		}
		if len(b) != keyLen {
			return 0, 0, keyLenError(len(b), keyLen)
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	return elapsed, after.Mallocs - before.Mallocs, nil
}

// runParallel generates n IDs split over p goroutines sharing g.
func runParallel(g Generator, keyLen, n, p int) (time.Duration, uint64, error) {
	var wg sync.WaitGroup
	errs := make([]error, p)
	runtime.GC()
	start := time.Now()
	for w := range p {
		share := n / p
		if w < n%p {
			share++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, keyLen)
			for range share {
				b, err := g.Next(buf[:0])
				if err == nil && len(b) != keyLen {
					err = keyLenError(len(b), keyLen)
				}
				if err != nil {
					errs[w] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			return 0, 0, err
		}
	}
	return elapsed, 0, nil
}
