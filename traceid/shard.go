package traceid

import (
	"context"
	"math"
	"sync/atomic"

	"github.com/idkit/idkit/clock"
)

// Shard issues IDs from chunks it claims from its Generator: one thread
// value (2^(22-T) - 1 counters) of one second at a time, claimed with one
// compare-and-swap. Between claims Next touches no shared memory, so a
// Shard is the cheapest way to key entries from one goroutine.
//
// A Shard is not safe for concurrent use: give each goroutine its own. IDs
// from one Shard strictly increase within a Period. With T = 0 a chunk is a
// whole second, so only one Shard (or Next caller) issues IDs per second.
type Shard struct {
	g      *Generator
	coarse clock.Coarse
	hi     ID // second and node bits of the chunk
	// until is when the chunk's second ends, in Unix ns; the generator's
	// Close sets it to MinInt64, which ends the chunk. Only Close writes
	// it from another goroutine; an atomic load costs what a plain one
	// does on amd64.
	until atomic.Int64
	next  uint64 // the next low value to issue
	last  uint64 // the last low value of the chunk
	steps uint64 // the clock's steps back the shard has seen (see Generator.steps)
}

// Shard returns a new Shard of g. Once g is closed its calls fail with
// ErrClosed.
func (g *Generator) Shard() *Shard {
	s := &Shard{g: g, coarse: g.coarse, next: 1, steps: g.steps.Load()}
	g.views.addShard(s)
	return s
}

// stop ends the chunk, so that the next call claims one and finds the
// generator closed.
func (s *Shard) stop() { s.until.Store(math.MinInt64) }

// Next returns a new ID. Like Generator.Next it waits when no ID is left
// in the current second, and fails only with ErrExhausted or ErrStore,
// and with ErrClosed once the generator is closed.
func (s *Shard) Next() (ID, error) { return s.NextContext(context.Background()) }

// NextContext is Next with a context, which bounds its waits for the next
// second and for the store.
func (s *Shard) NextContext(ctx context.Context) (ID, error) {
	if s.next <= s.last {
		now, ok := s.coarse.Peek()
		if !ok {
			now = s.coarse.UnixNano()
		}
		if now < s.until.Load() {
			if s.coarse.Steps() != s.steps {
				if err := s.stepped(); err != nil {
					return 0, err
				}
			}
			id := s.hi | ID(s.next)
			s.next++
			return id, nil
		}
	}
	if err := s.claim(ctx); err != nil {
		return 0, err
	}
	id := s.hi | ID(s.next)
	s.next++
	return id, nil
}

// stepped handles a clock that counts steps back the shard has not seen:
// while the generator has not entered a second since, the wall clock may
// be back in the chunk's second, and every ID checks the claim; once it
// has, the count is the one its seconds were checked under, which the
// shard takes (a chunk of an earlier second is over by then).
func (s *Shard) stepped() error {
	if s.g.stepped() {
		return s.g.fenceNow()
	}
	s.steps = s.g.steps.Load()
	return nil
}

// claim takes the next whole chunk of the generator's current second.
func (s *Shard) claim(ctx context.Context) error {
	g := s.g
	for {
		st := g.state.Load()
		if now := g.coarse.UnixNano(); outside(now, st) || g.stepped() {
			if err := g.sync(ctx, st, now, true); err != nil {
				return err
			}
			st = g.state.Load()
		}
		// The first chunk none of whose counters was handed out.
		first := (st&lowHalf + g.chunk - 1) / g.chunk * g.chunk
		last := first + g.chunk - 1
		if last > maxLow {
			if err := g.nextSecond(ctx, st>>32, true); err != nil {
				return err
			}
			continue
		}
		if g.state.CompareAndSwap(st, st&^lowHalf|last) {
			s.hi = g.id(st &^ lowHalf)
			s.until.Store(int64((st>>32 + 1) * nsPerSec))
			s.next, s.last = first+1, last
			if g.closed.Load() {
				// Close came after the claim, and may have stopped the
				// chunk before the store above: end it here.
				s.last = 0
				return g.errClosed()
			}
			return nil
		}
	}
}
