package decimalid

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/cpu"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/intid"
	"github.com/idkit/idkit/store"
)

// Options configure a Generator.
type Options struct {
	// Launch is the launch id, 1 to 99999, from the launch log or the
	// deployment configuration. 0 is refused unless TestLaunch is set.
	Launch int
	// Source hands out the generator ids (see store.Generators;
	// launchlog.Log and fleet.Log are ones). It is required.
	Source store.Generators
	// TestLaunch allows Launch 0, which marks IDs made by tests. Production
	// code never sets it.
	TestLaunch bool
	// StartCounter is the counter of the first ID, 1 to 922337202; zero
	// means 1. It is meant for tests, which start near MaxCounter to see
	// the generator take a new generator id.
	StartCounter int
}

// Generator issues DecimalIds for one launch. It is safe for concurrent
// use.
//
// It takes a generator id from its source when it is created and again each
// time the counter passes MaxCounter; the counter then restarts at 1. So
// the IDs of one generator id increase, for all goroutines together; IDs
// of a later generator id start low again (sharded monotonicity).
//
// Its state is one atomic word, generator id<<40 | the last counter handed
// out. Next adds one to it. The 40-bit counter half leaves room for
// 2^40 - MaxCounter adds past the end, which callers make only until one of
// them takes the mutex to fetch the next generator id, and the slow path
// pulls the counter back to MaxCounter, so the addition never carries into
// the generator id. Close, too, sets the counter to MaxCounter, so that
// every later call takes the slow path, which reports ErrClosed.
type Generator struct {
	_     cpu.CacheLinePad // keep state on a cache line of its own
	state atomic.Uint64
	_     cpu.CacheLinePad

	launch uint64
	source store.Generators
	ctx    context.Context // of every source call; Close cancels it
	cancel context.CancelFunc

	mu       sync.Mutex // guards the fields below, never held across a source call
	inflight *fetchCall // the source call in flight, if any
	closed   bool       // Close has begun; the counter stays used up

	exhausted, writes, failures atomic.Uint64
}

// fetchCall is one source call, which the callers that need a new
// generator id wait for.
type fetchCall struct {
	done chan struct{}
	err  error // set before done is closed
}

const (
	counterBits = 40
	counterMask = 1<<counterBits - 1
	maxClaim    = 1 << 16 // the most IDs one Fill claim takes
)

// New returns a Generator for o.Launch, holding a generator id fetched from
// o.Source.
func New(ctx context.Context, o Options) (*Generator, error) {
	lo := 1
	if o.TestLaunch {
		lo = 0
	}
	if o.Launch < lo || o.Launch > MaxLaunch {
		if o.Launch == 0 {
			return nil, fmt.Errorf("%w: Options.Launch = 0, want 1 to %d (0 is for tests: set Options.TestLaunch)", ErrInvalid, MaxLaunch)
		}
		return nil, fmt.Errorf("%w: Options.Launch = %d, want %d to %d", ErrInvalid, o.Launch, lo, MaxLaunch)
	}
	if o.Source == nil {
		return nil, fmt.Errorf("%w: Options.Source is nil, want a store.Generators such as a launchlog.Log", ErrInvalid)
	}
	if o.StartCounter == 0 {
		o.StartCounter = 1
	}
	if o.StartCounter < 1 || o.StartCounter > MaxCounter {
		return nil, fmt.Errorf("%w: Options.StartCounter = %d, want 1 to %d (or 0 for 1)", ErrInvalid, o.StartCounter, MaxCounter)
	}
	g := &Generator{launch: uint64(o.Launch), source: o.Source}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	gen, err := g.fetch(ctx, -1)
	if err != nil {
		return nil, err
	}
	g.state.Store(gen<<counterBits | uint64(o.StartCounter-1))
	return g, nil
}

// Launch returns the generator's launch id.
func (g *Generator) Launch() int { return int(g.launch) }

// Stats returns the generator's counts of events. It reads counters only,
// so it works after Close too.
//
// A decimalid Generator counts Exhausted (generator ids whose counters ran
// out), StoreWrites (generator ids taken from the source) and StoreErrors
// (source calls that failed).
func (g *Generator) Stats() idkit.Stats {
	return idkit.Stats{Exhausted: g.exhausted.Load(), StoreWrites: g.writes.Load(), StoreErrors: g.failures.Load()}
}

// Close stops the generator: every later call of Next, NextContext, Fill
// and FillContext fails at once with ErrClosed, and so do the calls
// waiting for the source, whose call in flight Close cancels. The counters
// left of the generator id it holds are lost. It returns nil; calling it
// again does nothing.
func (g *Generator) Close() error {
	g.mu.Lock()
	g.closed = true
	g.usedUp()
	g.mu.Unlock()
	g.cancel()
	return nil
}

// usedUp sets the counter to MaxCounter, unless it is there already: past
// it, every add fails the fast path's check, and the counter keeps its
// headroom. g.mu is held, so the generator id stays.
func (g *Generator) usedUp() {
	for {
		s := g.state.Load()
		if s&counterMask == MaxCounter || g.state.CompareAndSwap(s, s&^counterMask|MaxCounter) {
			return
		}
	}
}

// errClosed is the error of a call on a closed generator.
func (g *Generator) errClosed() error {
	return fmt.Errorf("%w: launch %d", ErrClosed, g.launch)
}

// Next returns a new ID. IDs from one goroutine increase until the
// generator takes a new generator id. It fails when the source fails
// (ErrSource), and then issues nothing until a later call reaches the
// source successfully, and with ErrClosed after Close.
func (g *Generator) Next() (ID, error) {
	s := g.state.Add(1)
	if c := s & counterMask; c <= MaxCounter {
		return ID(c*counterUnit + s>>counterBits*generatorUnit + g.launch), nil
	}
	return g.nextSlow(context.Background(), s)
}

// NextContext is Next, whose wait for the source, when the counters of a
// generator id run out, ends early with ctx's error when ctx ends.
func (g *Generator) NextContext(ctx context.Context) (ID, error) {
	s := g.state.Add(1)
	if c := s & counterMask; c <= MaxCounter {
		return ID(c*counterUnit + s>>counterBits*generatorUnit + g.launch), nil
	}
	return g.nextSlow(ctx, s)
}

func (g *Generator) nextSlow(ctx context.Context, s uint64) (ID, error) {
	for {
		if err := g.roll(ctx, s>>counterBits); err != nil {
			return 0, err
		}
		s = g.state.Add(1)
		if c := s & counterMask; c <= MaxCounter {
			return ID(c*counterUnit + s>>counterBits*generatorUnit + g.launch), nil
		}
	}
}

// Fill fills dst with new IDs, claiming each run of up to 65,536 counters
// with one atomic add. IDs in dst increase until the generator takes a new
// generator id. It returns len(dst), or fewer with the error that stopped
// it (see Next).
func (g *Generator) Fill(dst []ID) (int, error) { return g.FillContext(context.Background(), dst) }

// FillContext is Fill, whose wait for the source ends early when ctx ends:
// it then returns the IDs filled so far and ctx's error.
func (g *Generator) FillContext(ctx context.Context, dst []ID) (int, error) {
	n := 0
	for n < len(dst) {
		k, usedUp, gen := g.claim(dst[n:])
		n += k
		if usedUp {
			if err := g.roll(ctx, gen); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// claim fills the start of dst from one claim of up to 65,536 counters and
// returns how many IDs it filled, and whether the counters of generator id
// gen ran out. It is apart from FillContext so that the loop has the
// registers to itself.
func (g *Generator) claim(dst []ID) (n int, usedUp bool, gen uint64) {
	want := uint64(min(len(dst), maxClaim))
	s := g.state.Add(want)
	gen, last := s>>counterBits, s&counterMask
	if first := last - want + 1; first <= MaxCounter {
		out := dst[:min(last, MaxCounter)-first+1]
		intid.FillStep(out, ID(first*counterUnit+gen*generatorUnit+g.launch), counterUnit)
		n = len(out)
	}
	return n, last > MaxCounter, gen
}

// roll is the slow path for a caller that found the counters of generator
// id gen used up: it installs a fresh generator id from the source, unless
// another caller already did. One source call runs at a time; the callers
// that arrive meanwhile wait for it, or for their ctx to end.
func (g *Generator) roll(ctx context.Context, gen uint64) error {
	for {
		g.mu.Lock()
		if g.closed {
			g.usedUp() // the calls since Close added to it
			g.mu.Unlock()
			return g.errClosed()
		}
		if g.state.Load()>>counterBits != gen {
			g.mu.Unlock()
			return nil // another caller moved on
		}
		if f := g.inflight; f != nil {
			g.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if g.ctx.Err() != nil {
				continue // closed: the loop reports it
			}
			if f.err != nil && g.state.Load()>>counterBits == gen && !(isContextErr(f.err) && ctx.Err() == nil) {
				return f.err
			}
			continue // moved on, or the caller that fetched gave up: try again
		}
		g.usedUp() // the headroom restored
		f := &fetchCall{done: make(chan struct{})}
		g.inflight = f
		g.mu.Unlock()

		next, err := g.fetch(ctx, int(gen))
		g.mu.Lock()
		closed := g.closed
		if err == nil && !closed {
			g.state.Store(next << counterBits)
			g.exhausted.Add(1)
		}
		g.inflight = nil
		g.mu.Unlock()
		f.err = err
		close(f.done)
		switch {
		case closed:
			return g.errClosed() // Close ended the call, or came after it
		case err != nil && ctx.Err() != nil:
			return ctx.Err() // the caller gave up, not the source
		}
		return err
	}
}

// isContextErr reports whether err is a context's.
func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// fetch asks the source, under ctx and the generator's own context, for a
// generator id other than current.
func (g *Generator) fetch(ctx context.Context, current int) (uint64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if g.ctx != nil {
		defer context.AfterFunc(g.ctx, cancel)()
	}
	gen, err := g.source.NextGenerator(ctx, int(g.launch))
	switch {
	case err != nil:
		g.failures.Add(1)
		return 0, fmt.Errorf("%w: launch %d: %w", ErrSource, g.launch, err)
	case gen < 0 || gen > MaxGenerator:
		g.failures.Add(1)
		return 0, fmt.Errorf("%w: launch %d: got generator id %d, want 0 to %d", ErrSource, g.launch, gen, MaxGenerator)
	case gen == current:
		g.failures.Add(1)
		return 0, fmt.Errorf("%w: launch %d: got generator id %d again", ErrSource, g.launch, gen)
	}
	g.writes.Add(1)
	return uint64(gen), nil
}
