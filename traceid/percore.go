package traceid

import (
	"context"
	"math"
	"runtime"
	"sync/atomic"
	_ "unsafe" // for go:linkname

	"golang.org/x/sys/cpu"

	"github.com/idkit/idkit/clock"
)

// A PerCore claims a run of low values for one processor with one atomic
// add on the generator. A run's values not issued when its second ends go
// unused, so a run is a 256th of a second's values shared among the
// processors, within minRun..maxRun: on up to 64 processors at most 16,384
// of a second's 4,194,303 values go unused, beyond that 256 a processor.
// The claim's shared word moves between cores once per run: once per 4,096
// IDs on 2 processors, per 2,048 on 8, per 256 on 64.
const (
	minRun = 256
	maxRun = 4096
)

// runLength is the length of a run on procs processors.
func runLength(procs int) uint64 {
	return min(max((maxLow+1)/256/uint64(procs), minRun), maxRun)
}

// PerCore issues a Generator's TraceIds on every core at once: each
// processor takes IDs from a run of low values of the current second that
// it claimed with one atomic add on the generator, so that cores write the
// generator's shared word once per run (256 to 4,096 IDs, fewer on more
// processors) rather than once per ID, and otherwise touch only memory of
// their own. Get one with
// Generator.PerCore. It is safe for concurrent use.
//
// Next keeps the layout and meaning of a TraceId, and every guarantee of
// Generator.Next but one: IDs are unique, and a goroutine's IDs never go
// back to an earlier second, but within a second they increase only while
// the goroutine stays on one processor, since each processor issues from
// its own run. Use Generator.Next where a goroutine needs its IDs in order.
type PerCore struct {
	g      *Generator
	slots  []coreSlot   // one per processor
	coarse clock.Coarse // g's, copied here to save a load per ID
	mask   uint64       // g's counterMask
	runLen uint64       // values a processor claims at once
	// floor is the start (Unix ns) of the latest second that a run was
	// claimed in while the coarse clock still read an earlier one, as it
	// may for a moment after a second's IDs ran out early. Runs of earlier
	// seconds are over then, even while the coarse clock reads them, so
	// that a goroutine that moves to another processor never goes back a
	// second. It is read with every ID and written about once a second at
	// most, on a cache line of its own. The generator's Close sets it to
	// MaxInt64, which ends every run.
	floor atomic.Int64
	// steps is the clock's count of steps back that the runs were
	// claimed under, read with every ID beside floor; refill takes the
	// generator's count once it has entered a second since a step (see
	// Generator.steps).
	steps atomic.Uint64
	_     cpu.CacheLinePad
}

// coreSlot is a processor's run, on a cache line of its own.
type coreSlot struct {
	run atomic.Pointer[run]
	_   cpu.CacheLinePad
}

// run is a claimed run of low values: n is the next one to issue. Once in
// a processor's slot it is touched only by goroutines pinned to that
// processor, one at a time, so n needs no atomic update (see advance), and
// the next run is written over it (see coreSlot.put). It fills a cache line
// of its own, so that the runs of two processors never share one.
type run struct {
	hi    ID    // second and node bits
	start int64 // when the run's second begins, Unix ns
	last  uint64
	n     uint64
	_     cpu.CacheLinePad
}

// PerCore returns a PerCore issuing g's IDs. Once g is closed its calls
// fail with ErrClosed.
func (g *Generator) PerCore() *PerCore {
	procs := max(runtime.GOMAXPROCS(0), runtime.NumCPU())
	p := &PerCore{
		g:      g,
		slots:  make([]coreSlot, procs),
		coarse: g.coarse,
		mask:   uint64(g.counterMask),
		runLen: runLength(procs),
	}
	p.steps.Store(g.steps.Load())
	g.views.addPerCore(p)
	return p
}

// stop ends every run, claimed or yet to be, so that every call takes
// refill, which finds the generator closed.
func (p *PerCore) stop() { p.floor.Store(math.MaxInt64) }

// procPin and procUnpin keep the calling goroutine on its processor, and
// return and release the processor's index: what sync.Pool does to reach
// its per-processor lists. A Get and Put of sync.Pool cost about 11 ns
// here, more than an ID; pinned, a processor's run costs about 3 ns. The
// runtime keeps both linkable for packages outside the standard library.
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// Next returns a new ID. Like Generator.Next it waits when no ID is left
// in the current second, and fails only with ErrExhausted, ErrStore or
// ErrNodeLost, and with ErrClosed once the generator is closed.
func (p *PerCore) Next() (ID, error) { return p.NextContext(context.Background()) }

// NextContext is Next with a context, which bounds its waits for the next
// second and for the store.
func (p *PerCore) NextContext(ctx context.Context) (ID, error) {
	i := procPin()
	if i < len(p.slots) {
		// The processor's run, if it is not over and the coarse clock is
		// in its second, or merely lags it (a clock behind the
		// generator's second, or stepped back since the generator entered
		// it, goes through its checks for every ID).
		if r := p.slots[i].run.Load(); r != nil && r.start >= p.floor.Load() {
			now, ok := p.coarse.Peek()
			if !ok {
				now = p.coarse.UnixNano()
			}
			if (uint64(now-r.start) < nsPerSec || p.g.lags(now)) && p.coarse.Steps() == p.steps.Load() {
				if id, ok := r.pop(p.mask); ok {
					procUnpin()
					return id, nil
				}
			}
		}
	}
	procUnpin()
	return p.refill(ctx, true)
}

// TryNext is Next for callers that must never wait, such as a log
// handler: where Next would wait for the next second or for the store to
// lease it, TryNext fails at once with ErrExhausted (and starts the
// lease's renewal in the background). It is Next's fast path otherwise.
func (p *PerCore) TryNext() (ID, error) {
	i := procPin()
	if i < len(p.slots) {
		if r := p.slots[i].run.Load(); r != nil && r.start >= p.floor.Load() {
			now, ok := p.coarse.Peek()
			if !ok {
				now = p.coarse.UnixNano()
			}
			if (uint64(now-r.start) < nsPerSec || p.g.lags(now)) && p.coarse.Steps() == p.steps.Load() {
				if id, ok := r.pop(p.mask); ok {
					procUnpin()
					return id, nil
				}
			}
		}
	}
	procUnpin()
	return p.refill(context.Background(), false)
}

// refill claims a new run, unpinned since the claim may wait or call the
// store (unless wait is false), hands out its first ID and leaves the rest
// to the processor it is on by then. While the clock is behind the
// generator's second, or stepped back since the generator entered it, it
// claims one value at a time, through the generator's checks, as Next
// takes them. A run of a second the coarse clock has not reached yet ends
// the runs of earlier seconds (see floor).
func (p *PerCore) refill(ctx context.Context, wait bool) (ID, error) {
	g := p.g
	for {
		want := p.runLen
		if now := g.coarse.UnixNano(); now < int64(g.state.Load()>>32*nsPerSec) && !g.lags(now) || g.stepped() {
			want = 1
		} else if steps := g.steps.Load(); p.steps.Load() != steps {
			p.steps.Store(steps) // the generator entered a second since the step
		}
		v, first, last, err := g.claimRun(ctx, want, wait)
		if err != nil {
			return 0, err
		}
		r := run{hi: g.id(v &^ lowHalf), start: int64(v >> 32 * nsPerSec), last: last, n: first}
		if g.coarse.UnixNano() < r.start {
			p.raiseFloor(r.start)
		}
		id, ok := r.pop(p.mask)
		if !ok {
			continue // a run of counter-0 values only
		}
		i := procPin()
		if i < len(p.slots) {
			p.slots[i].put(r)
		}
		procUnpin()
		return id, nil
	}
}

// raiseFloor ends the runs of seconds before the one that starts at start
// (Unix ns).
func (p *PerCore) raiseFloor(start int64) {
	for {
		f := p.floor.Load()
		if f >= start || p.floor.CompareAndSwap(f, start) {
			return
		}
	}
}

// pop returns the next ID of r, skipping values whose counter (the bits of
// mask) is 0 (never issued), and false when r is used up.
func (r *run) pop(mask uint64) (ID, bool) {
	for {
		low := r.advance()
		if low > r.last {
			return 0, false
		}
		if low&mask != 0 {
			return r.hi | ID(low), true
		}
	}
}
