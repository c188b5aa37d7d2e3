package traceid

import "sync"

// coreRun is the number of low values a PerCore claims for one processor
// with one atomic add. A run's values not issued when its second ends go
// unused: the rest of each processor's run, and of a run left on a
// processor that its last caller moved away from or that a garbage
// collection dropped. That is at most 255 each, a few per mille of a
// second's 4,194,303 on 64 processors.
const coreRun = 256

// PerCore issues a Generator's TraceIds on every core at once: each
// processor takes IDs from a run of low values of the current second that
// it claimed with one atomic add on the generator, so that cores write
// the generator's shared word once per 256 IDs rather than once per ID.
// Get one with Generator.PerCore. It is safe for concurrent use.
//
// Next keeps the layout and meaning of a TraceId, and every guarantee of
// Generator.Next but one: IDs are unique, and ordered by second, but a
// goroutine's IDs increase only while it stays on one processor, since
// each processor issues from its own run. Use Generator.Next where a
// goroutine needs its IDs in order.
type PerCore struct {
	g    *Generator
	runs sync.Pool // of *run, one per processor while in use
}

// run is the unused part of a claimed run of low values.
type run struct {
	hi         ID    // second and node bits
	start      int64 // when the run's second begins, Unix ns
	next, last uint64
}

// PerCore returns a PerCore issuing g's IDs.
func (g *Generator) PerCore() *PerCore { return &PerCore{g: g} }

// Next returns a new ID. Like Generator.Next it waits when no ID is left
// in the current second, and fails only with ErrExhausted, ErrStore or
// ErrNodeLost.
func (p *PerCore) Next() (ID, error) {
	r, _ := p.runs.Get().(*run)
	if r == nil {
		r = new(run)
	}
	id, err := r.take(p.g)
	p.runs.Put(r)
	return id, err
}

// take returns the next ID of r. It claims a new run when r is used up or
// the coarse clock has left r's second, before or after it: while the
// clock is behind the generator's second, every ID goes through the
// generator's checks, one value at a time, as Next takes them.
func (r *run) take(g *Generator) (ID, error) {
	if r.next <= r.last && uint64(g.coarse.UnixNano()-r.start) < nsPerSec {
		if id, ok := r.pop(g); ok {
			return id, nil
		}
	}
	for {
		want := uint64(coreRun)
		if g.coarse.UnixNano() < int64(g.state.Load()>>32*nsPerSec) {
			want = 1
		}
		v, first, last, err := g.claimRun(want)
		if err != nil {
			return 0, err
		}
		r.hi, r.next, r.last = g.id(v&^lowHalf), first, last
		r.start = int64(v >> 32 * nsPerSec)
		if id, ok := r.pop(g); ok { // at once: the claim just passed the checks
			return id, nil
		}
	}
}

// pop returns the next ID of r, skipping values whose counter is 0 (never
// issued), and false when r is used up.
func (r *run) pop(g *Generator) (ID, bool) {
	mask := uint64(g.counterMask)
	for r.next <= r.last {
		low := r.next
		r.next++
		if low&mask != 0 {
			return r.hi | ID(low), true
		}
	}
	return 0, false
}
