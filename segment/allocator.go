package segment

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
)

// Defaults of Options.
const (
	// DefaultStep is the first step when Options.Step is zero: Leaf's
	// default.
	DefaultStep int64 = 1000
	// DefaultMinStep is the least step when Options.MinStep is zero (or
	// the first step, if smaller).
	DefaultMinStep int64 = 1000
	// DefaultMaxStep is the greatest step when Options.MaxStep is zero (or
	// the first step, if larger): Leaf's MAX_STEP.
	DefaultMaxStep int64 = 1_000_000
	// DefaultTimeout bounds one block reservation when Options.Timeout is
	// zero.
	DefaultTimeout = 5 * time.Second
)

// The adaptive step's thresholds, Leaf's: a block reserved less than
// GrowBelow after the one before doubles the step; one reserved more than
// ShrinkAbove after it halves the step.
const (
	GrowBelow   = 15 * time.Minute
	ShrinkAbove = 30 * time.Minute
)

// FetchesPerBlock is how many reservations' time a block should last at
// the rate the current block is used at: the next step is at least that
// rate times the last reservation's latency times FetchesPerBlock (within
// MinStep and MaxStep), so that a burst stops waiting for blocks after one
// or two of them, where doubling alone would wait for one per doubling.
const FetchesPerBlock = 10

// Options configure an Allocator.
type Options struct {
	// Store reserves the blocks. It is required.
	Store BlockStore
	// Tag names the sequence, a business key such as "order": 1 to
	// MaxTagLen bytes of ASCII letters, digits, '.', '_', '-' and ':' (see
	// CheckTag). Allocators of one tag on one store share its IDs.
	Tag string
	// Step is the size of the first block, 1 to MaxStep. Zero means
	// DefaultStep.
	Step int64
	// MinStep and MaxStep bound the adaptive step, 1 to MaxStep each, with
	// MinStep <= Step <= MaxStep. Zero MinStep means DefaultMinStep, or
	// Step if that is smaller; zero MaxStep means DefaultMaxStep, or Step
	// if that is larger. Equal bounds fix the step.
	MinStep, MaxStep int64
	// Clock times the blocks, their use and the reservations for the
	// adaptive step. Nil means the system clock; tests pass a fake one.
	Clock clock.Clock
	// Timeout bounds one block reservation through its context; a caller
	// waits for a store that ignores its context at most half as long
	// again. Zero means DefaultTimeout; a negative timeout is invalid.
	Timeout time.Duration
}

// check validates o and fills in its defaults.
func (o *Options) check() error {
	if o.Store == nil {
		return fmt.Errorf("%w: Options.Store is nil, want a BlockStore", ErrInvalid)
	}
	if err := CheckTag(o.Tag); err != nil {
		return fmt.Errorf("Options.Tag: %w", err)
	}
	if o.Step == 0 {
		o.Step = DefaultStep
	}
	if o.MinStep == 0 {
		o.MinStep = min(o.Step, DefaultMinStep)
	}
	if o.MaxStep == 0 {
		o.MaxStep = max(o.Step, DefaultMaxStep)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"Step", o.Step}, {"MinStep", o.MinStep}, {"MaxStep", o.MaxStep}} {
		if f.v < 1 || f.v > MaxStep {
			return fmt.Errorf("%w: Options.%s = %d, want 1 to %d", ErrInvalid, f.name, f.v, MaxStep)
		}
	}
	if o.MinStep > o.Step || o.Step > o.MaxStep {
		return fmt.Errorf("%w: Options.MinStep, Step, MaxStep = %d, %d, %d, want MinStep <= Step <= MaxStep",
			ErrInvalid, o.MinStep, o.Step, o.MaxStep)
	}
	if o.Timeout < 0 {
		return fmt.Errorf("%w: Options.Timeout = %v, want > 0 (or 0 for %v)", ErrInvalid, o.Timeout, DefaultTimeout)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	return nil
}

// State describes an Allocator's blocks and steps.
type State struct {
	// Step is the length of the last block reserved: the step now, which
	// the next reservation adapts. It differs from the step asked for
	// where the store rounds steps to a unit of its own.
	Step int64
	// LargestStep is the largest step reserved so far, and LargestAt the
	// block, counted from 1, that first had it.
	LargestStep, LargestAt int64
	// LastFetch is how long the last successful reservation took.
	LastFetch time.Duration
	// Current is the block IDs come from now, and Left how many of its IDs
	// are not issued yet.
	Current Block
	Left    int64
	// Ready reports whether the next block is reserved already.
	Ready bool
}

// buffer is one block being issued. The counter has a cache line of its
// own, so that the fields every call reads stay in each core's cache
// while the counter moves between cores.
type buffer struct {
	first   int64
	n       uint64 // the block's length; an ID v is in it if v-first < n
	trigger int64  // the ID whose issue starts the next reservation
	block   Block
	since   time.Time // when it became the current block; guarded by Allocator.mu
	_       cpu.CacheLinePad
	next    atomic.Int64 // the last ID claimed: First-1 at the start
	_       cpu.CacheLinePad
}

func newBuffer(b Block) *buffer {
	buf := &buffer{first: b.First, n: uint64(b.Len()), block: b}
	buf.next.Store(b.First - 1)
	buf.trigger = b.First + b.Len()/10
	return buf
}

// closedBuffer holds no ID: a closed Allocator's calls all take the slow
// path.
var closedBuffer = &buffer{first: 1}

// fetch is one reservation in flight; err is set before done is closed.
type fetch struct {
	done chan struct{}
	err  error
}

// Allocator issues dense, increasing IDs for one tag from blocks reserved
// in a BlockStore, two blocks at a time: it issues from the current block
// and reserves the next in the background once a tenth of the current one
// is issued. It is safe for concurrent use. Next and Fill cost one atomic
// add while the current block lasts and allocate nothing.
//
// IDs increase in the order the calls take them: one goroutine's IDs
// strictly increase; IDs of concurrent calls interleave.
type Allocator struct {
	_   cpu.CacheLinePad // keep the hot pointer on a cache line of its own
	cur atomic.Pointer[buffer]
	_   cpu.CacheLinePad

	store   BlockStore
	tag     string
	clock   clock.Clock
	timeout time.Duration
	minStep int64
	maxStep int64
	ctx     context.Context // ends at Close; parent of background reservations
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	mu          sync.Mutex
	spare       *buffer // the next block, reserved; nil if none
	inflight    *fetch  // the reservation in flight; nil if none
	closed      bool
	step        int64     // the step of the last reservation
	reserved    time.Time // when the last reservation started
	last        int64     // the last ID of the newest block
	blocks      uint64
	largest     int64 // the largest step reserved, first in block largestAt
	largestAt   int64
	waits       uint64
	fetchErrors uint64
	latency     time.Duration
	failures    int           // reservations failed in a row
	retry       *time.Timer   // the next background retry; nil if none
	retryBase   time.Duration // the first retry's delay
}

// retryBase is how long after a failed reservation the allocator first
// tries again in the background; it doubles with each failure in a row,
// up to Options.Timeout.
const retryBase = 100 * time.Millisecond

// New returns an Allocator for o.Tag. It reserves the first block before
// it returns, under ctx and Options.Timeout, and returns an error wrapping
// ErrUnavailable and the store's error if that fails. ctx bounds only that
// first reservation; Close ends the later ones.
func New(ctx context.Context, o Options) (*Allocator, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	a := &Allocator{
		store:     o.Store,
		tag:       o.Tag,
		clock:     o.Clock,
		timeout:   o.Timeout,
		minStep:   o.MinStep,
		maxStep:   o.MaxStep,
		step:      o.Step,
		retryBase: retryBase,
	}
	now := a.clock.Now()
	rctx, cancel := context.WithTimeout(ctx, a.timeout)
	b, err := a.store.ReserveBlock(rctx, a.tag, a.step)
	cancel()
	if err == nil {
		err = checkBlock(b, 0)
	}
	if err != nil {
		return nil, a.storeError(err)
	}
	cur := newBuffer(b)
	cur.since = a.clock.Now()
	a.latency = cur.since.Sub(now)
	a.reserved, a.last, a.blocks = now, b.Last, 1
	a.step = b.Len()
	a.largest, a.largestAt = a.step, 1
	a.cur.Store(cur)
	a.ctx, a.cancel = context.WithCancel(context.Background())
	return a, nil
}

// Tag returns the allocator's tag.
func (a *Allocator) Tag() string { return a.tag }

// Next returns the next ID. It waits for the store only when both blocks
// are used up, and then fails with an error wrapping ErrUnavailable and
// the store's error if the store does not reserve a block within
// Options.Timeout. After Close it fails with ErrClosed.
func (a *Allocator) Next() (ID, error) {
	b := a.cur.Load()
	v := b.next.Add(1)
	if uint64(v-b.first) < b.n && v != b.trigger {
		return ID(v), nil
	}
	return a.next(context.Background(), b, v)
}

// NextContext is Next, whose wait for a block ends early when ctx ends,
// with ctx's error. The reservation goes on for later calls.
func (a *Allocator) NextContext(ctx context.Context) (ID, error) {
	b := a.cur.Load()
	v := b.next.Add(1)
	if uint64(v-b.first) < b.n && v != b.trigger {
		return ID(v), nil
	}
	return a.next(ctx, b, v)
}

// next is Next's slow path: v, claimed from b, starts the next
// reservation or is past b's end.
func (a *Allocator) next(ctx context.Context, b *buffer, v int64) (ID, error) {
	for {
		if uint64(v-b.first) < b.n {
			if v == b.trigger {
				a.prefetch()
			}
			return ID(v), nil
		}
		if err := a.refill(ctx, b); err != nil {
			return 0, err
		}
		b = a.cur.Load()
		v = b.next.Add(1)
	}
}

// Fill fills dst with IDs, increasing, at the cost of one atomic add per
// block it takes them from, and returns len(dst). On error it returns how
// many IDs it issued, at the start of dst, and the rest of dst is zero.
func (a *Allocator) Fill(dst []ID) (int, error) { return a.FillContext(context.Background(), dst) }

// FillContext is Fill, whose wait for a block ends early when ctx ends:
// it then returns the IDs filled so far and ctx's error. The reservation
// goes on for later calls.
func (a *Allocator) FillContext(ctx context.Context, dst []ID) (int, error) {
	total := len(dst)
	for len(dst) > 0 {
		b := a.cur.Load()
		n := int64(len(dst))
		start := b.next.Add(n) - n + 1
		if uint64(start-b.first) < b.n {
			k := min(n, b.block.Last-start+1) // the claim may run past the block
			for i := range k {
				dst[i] = ID(start + i)
			}
			if start <= b.trigger && b.trigger < start+k {
				a.prefetch()
			}
			dst = dst[k:]
			continue
		}
		if err := a.refill(ctx, b); err != nil {
			clear(dst)
			return total - len(dst), err
		}
	}
	return total, nil
}

// prefetch starts reserving the next block unless it is reserved or on
// its way.
func (a *Allocator) prefetch() {
	a.mu.Lock()
	if !a.closed && a.spare == nil && a.inflight == nil {
		a.startFetch()
	}
	a.mu.Unlock()
}

// refill makes a block other than b current, reserving one and waiting
// for it if there is none. It returns nil once the caller may try again.
func (a *Allocator) refill(ctx context.Context, b *buffer) error {
	a.mu.Lock()
	waited := false
	for {
		switch {
		case a.closed:
			a.mu.Unlock()
			return fmt.Errorf("%w: tag %q", ErrClosed, a.tag)
		case a.cur.Load() != b:
			a.mu.Unlock()
			return nil
		case a.spare != nil:
			a.spare.since = a.clock.Now()
			a.cur.Store(a.spare)
			a.spare = nil
			a.mu.Unlock()
			return nil
		}
		f := a.inflight
		if f == nil {
			f = a.startFetch()
		}
		if !waited {
			a.waits++
			waited = true
		}
		a.mu.Unlock()
		err := a.wait(ctx, f)
		a.mu.Lock()
		if a.closed {
			continue // Close cancelled the reservation
		}
		if err != nil {
			a.mu.Unlock()
			return err
		}
	}
}

// wait waits for f to end and returns its error. A store that ignores
// the end of its context's deadline is given half the timeout more, after
// which the caller gives up on it. A caller whose ctx ends gives up at
// once, with ctx's error, and so does every caller at Close, whose error
// the caller reports instead.
func (a *Allocator) wait(ctx context.Context, f *fetch) error {
	d := a.timeout
	if d < math.MaxInt64/2 {
		d += d / 2
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	case <-a.ctx.Done():
		return context.Canceled // closed: refill reports ErrClosed
	case <-t.C:
		return fmt.Errorf("%w: tag %q: %T.ReserveBlock: no answer within %v: %w",
			ErrUnavailable, a.tag, a.store, a.timeout, context.DeadlineExceeded)
	}
}

// startFetch starts reserving the next block, with the step adapted to
// how long the last block lasted and how fast the current one is used.
// a.mu is held.
func (a *Allocator) startFetch() *fetch {
	f := &fetch{done: make(chan struct{})}
	a.inflight = f
	now := a.clock.Now()
	step := max(a.nextStep(now.Sub(a.reserved)), a.stepForRate(now))
	a.wg.Add(1)
	go a.reserve(f, step, now)
	return f
}

// nextStep returns the step of a block reserved d after the one before,
// as Leaf adapts it: double under GrowBelow, halve over ShrinkAbove,
// within the bounds.
func (a *Allocator) nextStep(d time.Duration) int64 {
	switch {
	case d < GrowBelow:
		return min(a.step*2, a.maxStep)
	case d <= ShrinkAbove:
		return a.step
	default:
		return max(a.step/2, a.minStep)
	}
}

// stepForRate returns the step at which a block lasts FetchesPerBlock
// reservations at the rate the current block has been used at since it
// became current, given the last reservation's latency, within the
// bounds; 0 when there is no rate to tell yet. a.mu is held.
func (a *Allocator) stepForRate(now time.Time) int64 {
	b := a.cur.Load()
	elapsed := now.Sub(b.since)
	used := min(b.next.Load()-b.first+1, int64(b.n))
	if b == closedBuffer || elapsed <= 0 || used <= 0 || a.latency <= 0 {
		return 0
	}
	want := float64(used) / elapsed.Seconds() * a.latency.Seconds() * FetchesPerBlock
	return int64(min(max(want, float64(a.minStep)), float64(a.maxStep)))
}

// reserve reserves a block of step IDs and makes it the spare, or
// records why it could not.
func (a *Allocator) reserve(f *fetch, step int64, started time.Time) {
	defer a.wg.Done()
	ctx, cancel := context.WithTimeout(a.ctx, a.timeout)
	b, err := a.store.ReserveBlock(ctx, a.tag, step)
	latency := a.clock.Now().Sub(started)
	cancel()

	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil {
		err = checkBlock(b, a.last)
	}
	if err != nil {
		a.fetchErrors++
		a.failures++
		f.err = a.storeError(err)
		if !a.closed && a.retry == nil {
			d := min(a.retryBase<<min(a.failures-1, 20), a.timeout)
			a.retry = time.AfterFunc(d, a.retryFetch)
		}
	} else {
		a.blocks++
		a.failures = 0
		if b.Len() > a.largest {
			a.largest, a.largestAt = b.Len(), int64(a.blocks)
		}
		a.step, a.reserved, a.last, a.latency = b.Len(), started, b.Last, latency
		if !a.closed {
			a.spare = newBuffer(b)
		}
	}
	a.inflight = nil
	close(f.done)
}

// retryFetch tries again, in the background, a reservation that failed,
// so that a store that fails for a moment does not make callers wait
// later.
func (a *Allocator) retryFetch() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.retry = nil
	if !a.closed && a.spare == nil && a.inflight == nil {
		a.startFetch()
	}
}

func (a *Allocator) storeError(err error) error {
	return fmt.Errorf("%w: tag %q: %T.ReserveBlock: %w", ErrUnavailable, a.tag, a.store, err)
}

// Stats returns the allocator's counts of events. It reads counters only,
// so it works after Close too.
//
// An Allocator counts Waits (calls of Next and Fill that waited for a
// block because both buffers were used up), StoreWrites (blocks reserved,
// the first one included) and StoreErrors (reservations that failed).
// State tells the rest.
func (a *Allocator) Stats() idkit.Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	return idkit.Stats{Waits: a.waits, StoreWrites: a.blocks, StoreErrors: a.fetchErrors}
}

// State returns the allocator's blocks and steps now.
func (a *Allocator) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := State{
		Step:        a.step,
		LargestStep: a.largest,
		LargestAt:   a.largestAt,
		LastFetch:   a.latency,
		Ready:       a.spare != nil,
	}
	if b := a.cur.Load(); b != closedBuffer {
		s.Current = b.block
		s.Left = max(0, b.block.Last-b.next.Load())
	}
	return s
}

// Close stops the allocator: later calls fail at once with ErrClosed, and
// so do the calls waiting for a block; a reservation in flight is
// cancelled and waited for. The IDs left in its blocks are lost. Close
// returns nil; calling it again does nothing.
func (a *Allocator) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.spare = nil
	if a.retry != nil {
		a.retry.Stop()
		a.retry = nil
	}
	a.cur.Store(closedBuffer)
	a.cancel()
	a.mu.Unlock()
	a.wg.Wait()
	return nil
}
