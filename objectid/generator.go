package objectid

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/closing"
)

// Options configure a Generator.
type Options struct {
	// Clock is the source of time. Nil means the system clock; tests pass
	// a fake one.
	Clock clock.Clock
}

// Generator makes ObjectIDs. It is safe for concurrent use.
//
// A Generator is what the ObjectID specification calls a process: it draws
// its 5 random process bytes and the random start of its counter from
// crypto/rand when it is made, so two Generators in one process never
// share IDs either. Most programs use the package's New, which draws from
// one Generator on the system clock, through NewID.
type Generator struct {
	_ cpu.CacheLinePad // keep the hot words on a cache line of their own
	// window is second<<32 | base: the logical second (Unix seconds, mod
	// 2^32) and the counter value that began it. An ID of that second may
	// use counter values base .. base+2^24-1, so none repeats. Close puts
	// base half the counter's range away from the counter, so that every
	// call takes the slow path, which reports ErrClosed and puts it there
	// again.
	window  atomic.Uint64
	counter atomic.Uint32 // the last counter value handed out
	_       cpu.CacheLinePad

	coarse  clock.Coarse
	clk     clock.Clock
	process [ProcessLen]byte
	closing *closing.Signal // ends the waits at Close

	mu     sync.Mutex // serialises moving the window, never held across a sleep
	closed bool       // Close has begun; guarded by mu
	waits  atomic.Uint64
}

// std is the package's Generator, made at the first NewID: its random
// process bytes cost a program that never calls NewID nothing at start.
var std = sync.OnceValue(func() *Generator { return newGenerator(Options{}) })

// NewID returns a new ID from the package's Generator, on the system clock.
func NewID() ID {
	id, _ := std().Next() // never fails without a context
	return id
}

// New returns a Generator with fresh random process bytes and counter
// start. Every Options value is valid today; the error is there for the
// face every idkit generator shares, New(Options) (*Generator, error).
func New(o Options) (*Generator, error) { return newGenerator(o), nil }

func newGenerator(o Options) *Generator {
	g := &Generator{clk: o.Clock, closing: closing.New()}
	if g.clk == nil {
		g.clk = clock.System()
	}
	g.coarse = clock.CoarseOf(g.clk)
	var seed [ProcessLen + 4]byte
	rand.Read(seed[:]) // never fails; see crypto/rand.Read
	copy(g.process[:], seed[:ProcessLen])
	start := binary.BigEndian.Uint32(seed[ProcessLen:])
	g.counter.Store(start - 1)
	g.window.Store(uint64(uint32(g.clk.Now().Unix()))<<32 | uint64(start))
	return g
}

// Process returns the generator's 5 random process bytes.
func (g *Generator) Process() [ProcessLen]byte { return g.process }

// Next returns a new ID: the current second, the process bytes and the
// next counter value. The second never moves backwards: if the wall clock
// steps back, IDs keep the last second until the clock catches up. A
// generator issues at most 2^24 IDs a second, as the counter's three bytes
// allow, and waits for the next second beyond that. It fails only after
// Close, with ErrClosed.
func (g *Generator) Next() (ID, error) {
	w := g.window.Load()
	c := g.counter.Add(1)
	sec := uint32(w >> 32)
	now := uint32(uint64(g.coarse.UnixNano()) / uint64(time.Second))
	if int32(now-sec) <= 0 && c-uint32(w) <= MaxCounter {
		return compose(sec, &g.process, c), nil
	}
	return g.slow(context.Background(), c)
}

// NextContext is Next, whose wait for the next second ends early with
// ctx's error when ctx ends.
func (g *Generator) NextContext(ctx context.Context) (ID, error) {
	w := g.window.Load()
	c := g.counter.Add(1)
	sec := uint32(w >> 32)
	now := uint32(uint64(g.coarse.UnixNano()) / uint64(time.Second))
	if int32(now-sec) <= 0 && c-uint32(w) <= MaxCounter {
		return compose(sec, &g.process, c), nil
	}
	return g.slow(ctx, c)
}

// Stats returns the generator's counts of events. It reads counters only,
// so it works after Close too.
//
// An objectid Generator counts Waits, the calls that waited for the next
// second because a second's 2^24 counter values ran out.
func (g *Generator) Stats() idkit.Stats { return idkit.Stats{Waits: g.waits.Load()} }

// Close stops the generator: every later call of Next, NextContext, Fill
// and FillContext fails at once with ErrClosed, and so do the calls
// waiting for the next second. A Generator starts no goroutine and holds
// nothing else. Close returns nil; calling it again does nothing.
func (g *Generator) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		g.closed = true
		g.shut()
		g.closing.Close()
	}
	return nil
}

// shut puts the window's base half the counter's range, 2^31, past the
// last counter value, so that the next 2^31 - 2^24 values fail the fast
// path's check. Only the calls that took a value since the last shut
// move the counter meanwhile, and each of them takes the slow path,
// which shuts it again. g.mu is held.
func (g *Generator) shut() {
	w := g.window.Load()
	g.window.Store(w&^(1<<32-1) | uint64(g.counter.Load()+1<<31))
}

// fillRun is the most counter values one Fill claim takes.
const fillRun = 256

// Fill fills dst with new IDs in increasing order, claiming runs of up to
// 256 counter values with one atomic add each, and returns len(dst). Like
// Next, it waits for the next second when the counter runs out, and fails
// only after Close, with ErrClosed.
func (g *Generator) Fill(dst []ID) (int, error) { return g.FillContext(context.Background(), dst) }

// FillContext is Fill, whose wait for the next second ends early when ctx
// ends: it then returns the IDs filled so far and ctx's error.
func (g *Generator) FillContext(ctx context.Context, dst []ID) (int, error) {
	for n := 0; n < len(dst); {
		w := g.window.Load()
		k := uint32(min(len(dst)-n, fillRun))
		last := g.counter.Add(k)
		first := last - k + 1
		sec, base := uint32(w>>32), uint32(w)
		now := uint32(uint64(g.coarse.UnixNano()) / uint64(time.Second))
		if int32(now-sec) > 0 || first-base > MaxCounter || last-base > MaxCounter {
			id, err := g.slow(ctx, first) // the rest of the run is lost: a gap, never a repeat
			if err != nil {
				return n, err
			}
			dst[n] = id
			n++
			continue
		}
		id := compose(sec, &g.process, 0) // time and process bytes, once a run
		for c := first; n < len(dst); c++ {
			id[9], id[10], id[11] = byte(c>>16), byte(c>>8), byte(c)
			dst[n] = id
			n++
			if c == last {
				break
			}
		}
	}
	return len(dst), nil
}

// slow moves the window to a new second, starting it at counter value c,
// or waits for one when the current second's counters are used up. Seconds
// compare as serial numbers, so the 32-bit second may wrap (in 2106). The
// mutex is released for the wait.
func (g *Generator) slow(ctx context.Context, c uint32) (ID, error) {
	for {
		id, ok, wait, err := g.move(c)
		if err != nil || ok {
			return id, err
		}
		g.waits.Add(1)
		if err := g.closing.Sleep(ctx, g.clk, wait); err != nil && !g.closing.Closed() {
			return ID{}, err
		}
		c = g.counter.Add(1) // after Close, move reports it
	}
}

// move is one try of slow under the mutex: it returns the ID of counter
// value c, or of a fresh value, or how long to wait for the next second,
// or ErrClosed.
func (g *Generator) move(c uint32) (id ID, ok bool, wait time.Duration, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		g.shut()
		return ID{}, false, 0, ErrClosed
	}
	w := g.window.Load()
	sec, base := uint32(w>>32), uint32(w)
	now := g.clk.Now()
	if s := uint32(now.Unix()); int32(s-sec) > 0 {
		g.window.Store(uint64(s)<<32 | uint64(c))
		return compose(s, &g.process, c), true, 0, nil
	}
	if c-base <= MaxCounter {
		return compose(sec, &g.process, c), true, 0, nil
	}
	// c may predate the window; only a fresh value past it too means
	// the second is used up.
	if c = g.counter.Add(1); c-base <= MaxCounter {
		return compose(sec, &g.process, c), true, 0, nil
	}
	return ID{}, false, time.Unix(now.Unix()+1, 0).Sub(now), nil
}
