package flake128

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/closing"
	"github.com/idkit/idkit/internal/lease"
	"github.com/idkit/idkit/store"
)

// Options configure a Generator. Options{} is a generator whose worker is
// the MAC address of the host's first network interface, on the system
// clock, without a store.
type Options struct {
	// Worker tells this generator apart from every other running at the
	// same time, 1 to MaxWorker. Zero means the MAC address of Interface,
	// as Boundary's flake takes it.
	Worker uint64
	// Interface names the network interface whose MAC address is the
	// worker when Worker is 0. Empty means the first interface that is up,
	// not a loopback, and has a nonzero 48-bit hardware address, in the
	// order net.Interfaces lists them.
	Interface string
	// Clock is the source of time. Nil means the system clock; tests pass
	// a fake one.
	Clock clock.Clock
	// MaxLead bounds how far ahead of the latest clock reading IDs may
	// run when a millisecond's sequence runs out, 0 to 1h, in whole
	// milliseconds. Zero means 10 ms.
	MaxLead time.Duration
	// MaxWait bounds how long Next waits for the clock once IDs are
	// MaxLead ahead of it, 0 to 1h; a longer wait fails with
	// ErrClockBackwards. Zero means 1 s. The first ID of a generator waits
	// for the clock to pass a stored mark whatever MaxWait says.
	MaxWait time.Duration
	// Store, when set, makes restarts safe across a clock stepped back
	// while the process was down; see store.HighWater (launchlog.Log and
	// fleet.Log are ones).
	Store store.HighWater
	// StoreKey names this generator's mark in Store. Empty means
	// "flake128/" and the worker as 12 hexadecimal digits.
	StoreKey string
	// Lease is how far ahead of the current millisecond the mark in Store
	// is moved, 0 to 1h, at least 2 ms. Zero means one second.
	Lease time.Duration
}

const maxDuration = time.Hour

// Generator issues Flake IDs for one worker. It is safe for concurrent
// use.
//
// Its state is one atomic word, (millisecond - base)<<16 | sequence: an
// add past the last sequence of a millisecond carries into the next one,
// which is the next ID in order, so every add yields a distinct ID. Next
// takes the mutex only for a millisecond it has not issued in before.
// Close sets approved, which Next reads anyway, to 0, below every claim,
// so that every call takes the slow path, which reports ErrClosed.
type Generator struct {
	_        cpu.CacheLinePad
	state    atomic.Uint64 // (ms-base)<<16 | sequence of the last claim
	approved atomic.Uint64 // the highest ms-base the slow path has cleared
	_        cpu.CacheLinePad

	base    uint64 // ms
	low     uint64 // worker<<16
	worker  uint64
	coarse  clock.Coarse
	clk     clock.Clock
	lead    uint64 // ms
	maxWait time.Duration
	key     string
	lease   *lease.Lease
	closing *closing.Signal // ends the waits at Close

	waits, rejected atomic.Uint64
	closeOnce       sync.Once

	mu      sync.Mutex // serialises the slow path; guards the fields below
	high    uint64     // the latest clock reading, ms
	started bool       // an ID has been issued
	closed  bool       // Close has begun; approved is 0
}

// Stats returns the generator's counts of events. It reads counters only,
// so it works after Close too.
//
// A flake128 Generator counts Waits (for the clock to catch up with the
// IDs' millisecond), Rejected (calls refused with ErrClockBackwards) and
// its lease's StoreWrites and StoreErrors.
func (g *Generator) Stats() idkit.Stats {
	writes, failures := g.lease.Counts()
	return idkit.Stats{Waits: g.waits.Load(), Rejected: g.rejected.Load(), StoreWrites: writes, StoreErrors: failures}
}

// New returns a Generator for o. It reads the clock and, with a Store, the
// stored mark; the first ID comes from a millisecond after both, so the
// first Next may wait about MaxLead, or until the clock passes the mark.
// An invalid option is an error naming it.
func New(ctx context.Context, o Options) (*Generator, error) {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"MaxLead", o.MaxLead}, {"MaxWait", o.MaxWait}, {"Lease", o.Lease}} {
		if d.v < 0 || d.v > maxDuration {
			return nil, fmt.Errorf("%w: Options.%s = %v, want 0 to %v", ErrInvalid, d.name, d.v, maxDuration)
		}
	}
	if o.Lease != 0 && o.Lease < 2*time.Millisecond {
		return nil, fmt.Errorf("%w: Options.Lease = %v, want 0 (1s) or 2ms to %v", ErrInvalid, o.Lease, maxDuration)
	}
	worker := o.Worker
	if worker > MaxWorker {
		return nil, fmt.Errorf("%w: Options.Worker = %d, want 1 to %d, or 0 for a MAC address", ErrInvalid, worker, uint64(MaxWorker))
	}
	if worker == 0 {
		var err error
		if worker, err = MACWorker(o.Interface); err != nil {
			return nil, err
		}
	}
	g := &Generator{
		worker:  worker,
		low:     worker << 16,
		clk:     o.Clock,
		lead:    uint64(cmp.Or(o.MaxLead, 10*time.Millisecond) / time.Millisecond),
		maxWait: cmp.Or(o.MaxWait, time.Second),
		key:     cmp.Or(o.StoreKey, fmt.Sprintf("flake128/%012x", worker)),
		closing: closing.New(),
	}
	if g.clk == nil {
		g.clk = clock.System()
	}
	g.coarse = clock.CoarseOf(g.clk)
	now, err := g.now()
	if err != nil {
		return nil, err
	}
	g.high = now
	start := now + 1 // a run before may have issued in this millisecond
	ahead := uint64(cmp.Or(o.Lease, time.Second) / time.Millisecond)
	var store store.HighWater
	if o.Store != nil {
		store = o.Store
	} else {
		start += g.lead // ... or borrowed up to its lead
	}
	g.lease = lease.New(store, g.key, ahead, lease.Units{
		Mark: func(end uint64) time.Time { return msTime(end) },
		End: func(mark time.Time) uint64 {
			ns := mark.UnixNano()
			if ns <= 0 {
				return 0
			}
			return uint64((ns + int64(time.Millisecond) - 1) / int64(time.Millisecond))
		},
	}, nil)
	first, err := g.lease.Start(ctx)
	if err != nil && lease.Refused(err) {
		return nil, fmt.Errorf("flake128: worker %012x: %w", worker, err)
	}
	if err != nil {
		return nil, lease.StoreFailed(ErrStore, ErrNodeLost, nil, fmt.Sprintf("read %q", g.key), err)
	}
	start = max(start, first)
	// The first add yields (1<<16 | 0): start's sequence 0, on the slow
	// path, since nothing is approved yet.
	g.base = start - 1
	g.state.Store(1<<16 - 1)
	return g, nil
}

// MACWorker returns the MAC address of the network interface called name
// as a 48-bit worker; an empty name means the first interface that is up,
// not a loopback, and has a nonzero 48-bit hardware address.
func MACWorker(name string) (uint64, error) {
	var ifs []net.Interface
	if name != "" {
		i, err := net.InterfaceByName(name)
		if err != nil {
			return 0, fmt.Errorf("%w: Options.Interface %q: %w", ErrInvalid, name, err)
		}
		ifs = []net.Interface{*i}
	} else {
		var err error
		if ifs, err = net.Interfaces(); err != nil {
			return 0, fmt.Errorf("%w: list network interfaces for a worker: %w", ErrInvalid, err)
		}
	}
	for _, i := range ifs {
		if name == "" && (i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0) {
			continue
		}
		if len(i.HardwareAddr) != WorkerLen {
			continue
		}
		var w uint64
		for _, b := range i.HardwareAddr {
			w = w<<8 | uint64(b)
		}
		if w != 0 {
			return w, nil
		}
	}
	if name != "" {
		return 0, fmt.Errorf("%w: Options.Interface %q has no nonzero 48-bit MAC address; set Options.Worker", ErrInvalid, name)
	}
	return 0, fmt.Errorf("%w: no network interface up with a nonzero 48-bit MAC address; set Options.Worker (1 to %d)", ErrInvalid, uint64(MaxWorker))
}

// Worker returns the generator's worker.
func (g *Generator) Worker() uint64 { return g.worker }

// Close stops the generator: every later call of Next, NextContext, Fill
// and FillContext fails at once with ErrClosed, and so do the calls
// waiting for the clock or the store. Close then waits for the background
// renewal of the lease in the store, if one runs, and releases the
// worker's hold. It returns nil; calling it again does nothing.
func (g *Generator) Close() error {
	g.closeOnce.Do(func() {
		g.mu.Lock()
		g.closed = true
		g.approved.Store(0)
		g.mu.Unlock()
		g.closing.Close()
		g.lease.Close()
	})
	return nil
}

// errClosed is the error of a call on a closed generator.
func (g *Generator) errClosed() error {
	return fmt.Errorf("%w: worker %012x", ErrClosed, g.worker)
}

// StoreKey returns the key of the generator's mark in its store.
func (g *Generator) StoreKey() string { return g.key }

// Next returns a new ID. IDs from one goroutine strictly increase. It
// fails with ErrClockBackwards when the clock is further behind the IDs
// than MaxLead and MaxWait allow, with ErrStore when the lease cannot be
// extended, and with ErrClosed after Close.
func (g *Generator) Next() (ID, error) { return g.NextContext(context.Background()) }

// NextContext is Next under ctx, which bounds its waits: for the clock to
// catch up and for the store. A call whose ctx ends returns ctx's error.
func (g *Generator) NextContext(ctx context.Context) (ID, error) {
	v := g.state.Add(1)
	off := v >> 16
	ms := g.base + off
	if off <= g.approved.Load() && ms >= uint64(g.coarse.UnixNano())/uint64(time.Millisecond) && g.lease.Allows(ms) {
		return compose(ms, g.low|v&MaxSequence), nil
	}
	return g.slow(ctx, v)
}

// Fill fills dst with new IDs, increasing, one Next each, and returns
// len(dst), or fewer with the error that stopped it (see Next).
func (g *Generator) Fill(dst []ID) (int, error) { return g.FillContext(context.Background(), dst) }

// FillContext is Fill under ctx, which bounds its waits as NextContext's.
// A call whose ctx ends returns the IDs filled so far and ctx's error.
func (g *Generator) FillContext(ctx context.Context, dst []ID) (int, error) {
	for i := range dst {
		id, err := g.NextContext(ctx)
		if err != nil {
			return i, err
		}
		dst[i] = id
	}
	return len(dst), nil
}

// now reads the precise clock in milliseconds.
func (g *Generator) now() (uint64, error) {
	t := g.clk.Now()
	ms := t.UnixMilli()
	if ms < 0 {
		return 0, fmt.Errorf("%w: clock reads %v, before 1970", ErrInvalid, t.UTC())
	}
	return uint64(ms), nil
}

// slow issues the claim v, or a fresh one, when the fast path cannot: the
// clock has moved to a later millisecond (start it at sequence 0), v is
// in a millisecond not yet cleared (check the lead and the lease), or the
// lease needs extending.
func (g *Generator) slow(ctx context.Context, v uint64) (ID, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if g.closed {
			return ID{}, g.errClosed()
		}
		now, err := g.now()
		if err != nil {
			return ID{}, err
		}
		g.high = max(g.high, now)
		ms := g.base + v>>16
		if ms < now {
			// The clock has moved on: begin its millisecond at sequence 0,
			// unless a claim is already there.
			target := (now - g.base) << 16
			if cur := g.state.Load(); cur < target && g.state.CompareAndSwap(cur, target) {
				v = target
			} else {
				v = g.state.Add(1)
			}
			continue
		}
		if ms > g.high+g.lead {
			wait := time.Duration(ms-g.lead-now) * time.Millisecond
			if g.started && wait > g.maxWait {
				g.rejected.Add(1)
				return ID{}, fmt.Errorf("%w: IDs are at %v, %v ahead of the clock (%v), more than MaxLead %v, and the clock would take %v to catch up, more than MaxWait %v",
					ErrClockBackwards, msTime(ms), time.Duration(ms-now)*time.Millisecond, msTime(now),
					time.Duration(g.lead)*time.Millisecond, wait, g.maxWait)
			}
			g.waits.Add(1)
			g.mu.Unlock() // no lock held across a sleep
			err := g.closing.Sleep(ctx, g.clk, wait)
			g.mu.Lock()
			if err != nil && !g.closed {
				return ID{}, err
			}
			continue
		}
		if off := v >> 16; off > g.approved.Load() {
			// A millisecond not yet cleared: the hold of the launch log,
			// looked at before each, must still be in place. A lost hold
			// also revokes the lease, which the fast path reads.
			if err := g.lease.Check(); err != nil {
				return ID{}, lease.NodeLost(ErrNodeLost, err)
			}
		}
		if !g.lease.Allows(ms) {
			g.mu.Unlock() // nor across a store call
			err := g.lease.Extend(ctx, ms)
			g.mu.Lock()
			if g.closed {
				return ID{}, g.errClosed() // Close ended the store call, or came after it
			}
			if err != nil && ctx.Err() != nil {
				return ID{}, ctx.Err() // the caller gave up, not the store
			}
			if err != nil {
				return ID{}, lease.StoreFailed(ErrStore, ErrNodeLost, nil, fmt.Sprintf("advance %q", g.key), err)
			}
			continue // look again: the clock and the state may have moved
		}
		g.lease.ExtendSoon(ms)
		if off := v >> 16; off > g.approved.Load() {
			g.approved.Store(off)
		}
		g.started = true
		return compose(ms, g.low|v&MaxSequence), nil
	}
}
