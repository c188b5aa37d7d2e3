package traceid

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/closing"
	"github.com/idkit/idkit/internal/intid"
	"github.com/idkit/idkit/internal/lease"
	"github.com/idkit/idkit/store"
)

// Options configure a Generator. The zero value of each field is a sane
// default except Node, which must come from deployment configuration.
type Options struct {
	// Node is this process's node number, 0 to 65535. Processes that run at
	// the same time must have distinct nodes.
	Node int
	// Claim, when set, supplies the node number instead of Node (which
	// must then be 0 or the same number) and keeps the high-water marks
	// instead of Store (which must then be nil); the generator fails with
	// ErrNodeLost once the claim is lost. See store.NodeClaim.
	Claim store.NodeClaim
	// ThreadBits is T, the number of the 22 low bits that name a thread,
	// 0 to 16. Each Shard claims one thread value for a second at a time, so
	// a larger T lets more shards share a second; zero leaves all 22 bits to
	// the counter.
	ThreadBits int
	// NoWait makes Next, Fill and Shard.Next return ErrExhausted instead of
	// waiting when no ID is left in the current second.
	NoWait bool
	// Store, when set, makes restarts safe across a clock stepped back
	// while the process was down; see store.HighWater (launchlog.Log is
	// one). Nil means a new
	// generator only skips the second it was created in (or, with a Claim,
	// that the claim keeps the marks).
	Store store.HighWater
	// StoreKey names this generator's mark in Store. Empty means
	// "traceid/node/N".
	StoreKey string
	// Lease is how far ahead of the current second the mark in Store is
	// moved, rounded up to whole seconds, 1s to 1h. A longer lease writes the
	// store less often; a restart after a crash may wait up to the lease.
	// Zero means one second, or the claim's store.MarkLeaser suggestion.
	Lease time.Duration
	// Clock is the source of time. Nil means the system clock; tests pass a
	// fake one.
	Clock clock.Clock
	// Logger, when set, receives one record per clock anomaly: the wall
	// clock found behind the generator, and caught up again.
	Logger *slog.Logger
}

// Generator issues TraceIds for one node. It is safe for concurrent use.
//
// Its state is one atomic word, second<<32 | the last low value handed out
// (thread and counter). Next adds one to it; the 32-bit low half leaves
// room for adds past the last valid value without carrying into the second.
// Close sets it to closedState, which the fast path's own checks send to a
// slow path, and the slow paths report ErrClosed.
type Generator struct {
	_     cpu.CacheLinePad // keep state on a cache line of its own
	state atomic.Uint64
	_     cpu.CacheLinePad

	coarse clock.Coarse
	// steps is the clock's count of steps back (clock.Coarse.Steps) under
	// which the logical second was entered and its claim checked. Once the
	// clock counts more, the wall clock may pass through that second
	// again, later than the check foresaw: every ID checks the claim until
	// the generator enters a new second. Beside coarse, which every fast
	// path reads with it.
	steps       atomic.Uint64
	clock       clock.Clock
	hi          uint64 // node bits
	counterMask uint32 // low bits that hold the counter
	chunk       uint64 // low values per thread: 1 << (22-T)
	noWait      bool
	key         string       // the mark's key in the store
	lease       *lease.Lease // restart safety: seconds leased in the store
	log         *slog.Logger
	node        int
	threadBits  int
	claim       store.NodeClaim

	behind  atomic.Bool  // the wall clock is behind the logical second
	lagging atomic.Int64 // a coarse reading found merely lagging the precise clock

	closed    atomic.Bool     // Close has begun; the state is closedState
	closing   *closing.Signal // ends the waits for the next second at Close
	closeOnce sync.Once
	views     views // the PerCores and Shards, which Close stops

	mu            sync.Mutex // serialises the slow paths below
	lastExhausted uint64     // the last second counted in Stats.Exhausted

	backward, waits, exhausted atomic.Uint64
}

const (
	nsPerSec = uint64(time.Second)
	lowHalf  = 1<<32 - 1
	maxClaim = 1 << 16 // the most low values one Fill claim takes
	// closedState is the state of a closed generator: the last second a
	// state can hold, used up. The clock never reads that second, so
	// every call finds the coarse time outside it and takes the slow
	// path, and no caller moves the state to a later second.
	closedState = math.MaxUint32<<32 | maxLow + 1
)

// New returns a Generator for o.Node. It reads the clock and, with a
// Store, the stored mark; the first ID comes from a second that begins
// after both.
func New(ctx context.Context, o Options) (*Generator, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	g := &Generator{
		coarse:      clock.CoarseOf(o.Clock),
		clock:       o.Clock,
		hi:          uint64(o.Node) << LowBits,
		counterMask: 1<<(LowBits-o.ThreadBits) - 1,
		chunk:       1 << (LowBits - o.ThreadBits),
		noWait:      o.NoWait,
		key:         o.StoreKey,
		log:         o.Logger,
		node:        o.Node,
		threadBits:  o.ThreadBits,
		claim:       o.Claim,
		closing:     closing.New(),
	}
	g.steps.Store(g.coarse.Steps())
	if err := g.fenceNow(); err != nil {
		return nil, err
	}
	now := o.Clock.Now().Unix()
	if now < 0 || now > math.MaxUint32 {
		return nil, fmt.Errorf("%w: clock reads %v, want a time from 1970 to 2106", ErrInvalid, o.Clock.Now())
	}
	start := uint64(now)
	// Marks cover whole seconds, the mark's own included: a run that
	// leased up to mark m may have issued in second m, and a new run starts
	// in m+1.
	var store store.HighWater
	switch {
	case o.Claim != nil:
		store = o.Claim
	case o.Store != nil:
		store = o.Store
	}
	g.lease = lease.New(store, g.key, uint64((o.Lease+time.Second-1)/time.Second), lease.Units{
		Mark: func(end uint64) time.Time { return time.Unix(int64(end)-1, 0) },
		End:  func(mark time.Time) uint64 { return uint64(max(mark.Unix()+1, 0)) },
	}, func(err error) {
		g.logf(slog.LevelWarn, "traceid: lease renewal failed; will retry before the lease runs out", "err", err)
	})
	first, err := g.lease.Start(ctx)
	if err != nil && lease.Refused(err) {
		return nil, fmt.Errorf("traceid: node %d: %w", o.Node, err)
	}
	if err != nil {
		return nil, lease.StoreFailed(ErrStore, ErrNodeLost, g.fenceNow, fmt.Sprintf("read %q", g.key), err)
	}
	if first > start+1 {
		// An earlier run leased seconds up to first-1: wait them out. Until
		// then the clock is behind by design, not by an anomaly.
		start = first - 1
		g.behind.Store(true)
		g.logf(slog.LevelInfo, "traceid: high-water mark ahead of the clock; the first ID waits until the clock passes it",
			"mark", time.Unix(int64(start), 0).UTC(), "wait", time.Duration(int64(start)-now)*time.Second)
	}
	// Start as if second start were used up, so that the first ID waits for
	// a second that began after this run started and after the mark.
	g.state.Store(start<<32 | maxLow + 1)
	g.lastExhausted = start
	if c, ok := o.Claim.(interface{ Done() <-chan struct{} }); ok {
		go g.watchClaim(c.Done())
	} else if lost := g.lease.Done(); lost != nil {
		go g.watchClaim(lost)
	}
	return g, nil
}

// watchClaim waits until the claim, or the hold of a launch log, is found
// lost (lost is closed), or the generator closed, and on a loss sends
// every fast path to the checks of a slow one, which report ErrNodeLost:
// no ID is handed out after the loss is known, even within a second whose
// check passed.
func (g *Generator) watchClaim(lost <-chan struct{}) {
	select {
	case <-lost:
		g.steps.Store(math.MaxUint64) // no clock counts that many steps
		g.views.close()               // every run and chunk ends
	case <-g.closing.Done():
	}
}

// check validates o and sets its defaults: the claim's node, the lease,
// the clock and the store key.
func (o *Options) check() error {
	if o.Claim != nil {
		if n := o.Claim.Node(); o.Node != 0 && o.Node != n {
			return fmt.Errorf("%w: Options.Node = %d but Options.Claim holds node %d, want 0 or the same", ErrInvalid, o.Node, n)
		}
		if o.Store != nil {
			return fmt.Errorf("%w: Options.Store and Options.Claim are both set, want Store nil: a claim keeps its node's marks itself, fenced by the claim", ErrInvalid)
		}
		o.Node = o.Claim.Node()
	}
	if o.Node < 0 || o.Node > MaxNode {
		return fmt.Errorf("%w: Options.Node = %d, want 0 to %d", ErrInvalid, o.Node, MaxNode)
	}
	if err := checkThreadBits("Options.ThreadBits", o.ThreadBits); err != nil {
		return err
	}
	if o.Lease == 0 {
		o.Lease = time.Second
		if c, ok := o.Claim.(store.MarkLeaser); ok {
			o.Lease = max(o.Lease, c.MarkLease())
		}
	}
	if o.Lease < 0 || o.Lease > time.Hour {
		return fmt.Errorf("%w: Options.Lease = %v, want 1s to 1h", ErrInvalid, o.Lease)
	}
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	if o.StoreKey == "" {
		o.StoreKey = "traceid/node/" + strconv.Itoa(o.Node)
	}
	return nil
}

// Node returns the generator's node number.
func (g *Generator) Node() int { return g.node }

// ThreadBits returns T, the number of low bits that name a thread.
func (g *Generator) ThreadBits() int { return g.threadBits }

// Close stops the generator: every later call of Next, NextContext, Fill
// and FillContext, and of its PerCores' and Shards' methods, fails at once
// with ErrClosed, and so do the calls waiting for the next second or the
// store. Close then waits for the background renewal of the lease in the
// store, if one runs, and releases the node's hold. It returns nil;
// calling it again does nothing.
func (g *Generator) Close() error {
	g.closeOnce.Do(func() {
		g.closed.Store(true)
		g.state.Store(closedState)
		g.views.close()
		g.closing.Close()
		g.lease.Close()
	})
	return nil
}

// errClosed is the error of a call on a closed generator.
func (g *Generator) errClosed() error {
	return fmt.Errorf("%w: node %d", ErrClosed, g.node)
}

// Stats returns the generator's counts of events. It reads counters only,
// so it works after Close too.
//
// A traceid Generator counts Waits (for the next second), ClockBackward
// (the wall clock found behind the second it issues in), Exhausted
// (seconds whose IDs ran out) and its lease's StoreWrites and StoreErrors.
func (g *Generator) Stats() idkit.Stats {
	writes, failures := g.lease.Counts()
	return idkit.Stats{
		ClockBackward: g.backward.Load(),
		Waits:         g.waits.Load(),
		Exhausted:     g.exhausted.Load(),
		StoreWrites:   writes,
		StoreErrors:   failures,
	}
}

// Next returns a new ID. IDs from one goroutine strictly increase within a
// Period. It waits when the current second's IDs have run out (see
// Options.NoWait) and fails only with ErrExhausted or ErrStore (or
// ErrNodeLost, on a claim), and with ErrClosed after Close.
func (g *Generator) Next() (ID, error) { return g.NextContext(context.Background()) }

// NextContext is Next under ctx, which bounds its waits: for the next
// second and for the store. A call whose ctx ends returns ctx's error.
func (g *Generator) NextContext(ctx context.Context) (ID, error) {
	for {
		st := g.state.Load()
		now, ok := g.coarse.Peek()
		if !ok {
			now = g.coarse.UnixNano()
		}
		if outside(now, st) || g.stepped() {
			if err := g.sync(ctx, st, now, true); err != nil {
				return 0, err
			}
		}
		v := g.state.Add(1)
		if low := uint32(v); low <= maxLow {
			if low&g.counterMask != 0 {
				return g.id(v), nil
			}
			continue // counter 0 of a thread: never issued
		}
		if err := g.nextSecond(ctx, v>>32, true); err != nil {
			return 0, err
		}
	}
}

// Fill fills dst with new IDs, claiming each run of up to 65,536 IDs with
// one atomic add. IDs in dst increase. It returns len(dst), or fewer with
// the error that stopped it (see Next).
func (g *Generator) Fill(dst []ID) (int, error) { return g.FillContext(context.Background(), dst) }

// FillContext is Fill under ctx, which bounds its waits as NextContext's.
// A call whose ctx ends returns the IDs filled so far and ctx's error.
func (g *Generator) FillContext(ctx context.Context, dst []ID) (int, error) {
	n := 0
	for n < len(dst) {
		v, first, last, err := g.claimRun(ctx, uint64(min(len(dst)-n, maxClaim)), true)
		if err != nil {
			return n, err
		}
		hi := g.id(v &^ lowHalf)
		mask := uint64(g.counterMask)
		for low := first; low <= last; {
			if low&mask == 0 {
				low++ // counter 0 of a thread: never issued
				continue
			}
			end := min(last, low|mask) // the thread's last counter
			k := int(end - low + 1)
			intid.FillStep(dst[n:n+k], hi|ID(low), 1)
			n += k
			low = end + 1
		}
	}
	return n, nil
}

// claimRun claims a run of up to want consecutive low values of the
// current second with one atomic add: the values first to last (those with
// a counter of 0 are not IDs) of second v>>32, where v is the state word
// after the add. Like Next it moves on to a new second, or waits for one;
// unless wait is set, it fails with ErrExhausted where it would wait for
// the clock or the store (see PerCore.TryNext).
func (g *Generator) claimRun(ctx context.Context, want uint64, wait bool) (v, first, last uint64, err error) {
	for {
		st := g.state.Load()
		if now := g.coarse.UnixNano(); outside(now, st) || g.stepped() {
			if err := g.sync(ctx, st, now, wait); err != nil {
				return 0, 0, 0, err
			}
		}
		v = g.state.Add(want)
		first, last = v&lowHalf-want+1, min(v&lowHalf, maxLow)
		if first <= maxLow {
			return v, first, last, nil
		}
		if err := g.nextSecond(ctx, v>>32, wait); err != nil {
			return 0, 0, 0, err
		}
	}
}

// id composes the ID for state word v.
func (g *Generator) id(v uint64) ID {
	return ID((v>>32&secondMask)<<secondShift | g.hi | v&maxLow)
}

// outside reports whether the time now (ns) lies outside the second of
// state word st, before or after it: one unsigned comparison.
func outside(now int64, st uint64) bool {
	return uint64(now)-(st>>32)*nsPerSec >= nsPerSec
}

// stepped reports whether the clock stepped back since the generator
// entered its logical second (see Generator.steps): two atomic loads.
func (g *Generator) stepped() bool { return g.coarse.Steps() != g.steps.Load() }

// sync handles a coarse time outside the logical second of state st (a
// new second begins, or the wall clock is behind), or a clock that stepped
// back since the generator entered it. Unless wait is set, it never waits
// for the store (see advance).
func (g *Generator) sync(ctx context.Context, st uint64, now int64, wait bool) error {
	if g.closed.Load() {
		return g.errClosed()
	}
	sec := st >> 32
	if now < int64((sec+1)*nsPerSec) {
		// With a claim, every ID while the clock is behind, or back in
		// the second after a step, checks it.
		if err := g.fenceNow(); err != nil {
			return err
		}
		if now < int64(sec*nsPerSec) && !g.behind.Load() && g.lagging.Load() != now {
			g.checkBehind(sec, now)
		}
		return nil
	}
	steps := g.coarse.Steps()
	next := uint64(now) / nsPerSec
	if err := g.fence(next); err != nil {
		return err
	}
	if !g.lease.Allows(next) {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.advance(ctx, next, wait)
	}
	if g.behind.Load() {
		g.mu.Lock()
		g.caughtUp(next)
		g.mu.Unlock()
	}
	if g.state.CompareAndSwap(st, next<<32) { // on failure another caller moved it
		g.steps.Store(steps)
	}
	g.lease.ExtendSoon(next)
	return nil
}

// checkBehind reads the precise clock to tell a wall clock stepped back
// from a coarse reading that merely lags it, as it may for a moment after a
// slow path moved to a new second by the precise clock. It remembers a
// lagging reading, so that the precise clock is read about once per coarse
// refresh at most.
func (g *Generator) checkBehind(sec uint64, coarse int64) {
	now := g.clock.Now().UnixNano()
	if now >= int64(sec*nsPerSec) {
		g.lagging.Store(coarse)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.noteBehind(sec, now)
}

// lags reports whether the coarse reading now is one that the precise
// clock showed merely lagging behind it, not a clock stepped back (see
// checkBehind).
func (g *Generator) lags(now int64) bool { return g.lagging.Load() == now }

// noteBehind records that the wall clock reads now, before second sec.
// The caller holds g.mu.
func (g *Generator) noteBehind(sec uint64, now int64) {
	if g.behind.Load() {
		return
	}
	g.behind.Store(true)
	g.backward.Add(1)
	g.logf(slog.LevelWarn, "traceid: wall clock behind the last second issued; continuing under that second",
		"second", time.Unix(int64(sec), 0).UTC(), "behind", time.Duration(int64(sec*nsPerSec)-now))
}

// caughtUp clears the behind state once the clock reaches second sec. The
// caller holds g.mu.
func (g *Generator) caughtUp(sec uint64) {
	if g.behind.Load() {
		g.behind.Store(false)
		g.logf(slog.LevelInfo, "traceid: wall clock caught up with the generator", "second", time.Unix(int64(sec), 0).UTC())
	}
}

// nextSecond is the slow path for a caller that found no ID left in second
// sec: it waits until the precise clock reaches a later second and moves
// the generator there, or fails with ErrExhausted under Options.NoWait or
// unless wait is set.
func (g *Generator) nextSecond(ctx context.Context, sec uint64, wait bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		if g.closed.Load() {
			return g.errClosed()
		}
		st := g.state.Load()
		if st>>32 != sec {
			return nil // another caller moved on
		}
		if uint32(st) > maxLow+1 {
			g.state.CompareAndSwap(st, sec<<32|maxLow+1) // keep the headroom
		}
		if g.lastExhausted != sec {
			g.lastExhausted = sec
			g.exhausted.Add(1)
		}
		if err := g.fenceNow(); err != nil { // after the wait, too
			return err
		}
		now := g.clock.Now().UnixNano()
		if now >= int64((sec+1)*nsPerSec) {
			return g.advance(ctx, uint64(now)/nsPerSec, wait)
		}
		if now < int64(sec*nsPerSec) {
			g.noteBehind(sec, now)
		}
		until := time.Duration(int64((sec+1)*nsPerSec) - now)
		if g.noWait || !wait {
			return fmt.Errorf("%w: next second in %v", ErrExhausted, until)
		}
		g.waits.Add(1)
		g.mu.Unlock() // others may wait, or move on, meanwhile
		err := g.closing.Sleep(ctx, g.clock, min(until, time.Second))
		g.mu.Lock()
		if err != nil && !g.closed.Load() {
			return err
		}
	}
}

// advance moves the generator to second next, which the clock has reached,
// leasing it in the store first if needed. It checks the claim before, and
// again after the store call, which may have kept it waiting. The caller
// holds g.mu, which advance releases during the store call: the state only
// ever moves forward, so another caller moving it meanwhile is harmless.
// Unless wait is set, it makes no store call: it starts the lease's
// renewal in the background and fails with ErrExhausted, or with ErrStore
// if the last renewal failed.
func (g *Generator) advance(ctx context.Context, next uint64, wait bool) error {
	steps := g.coarse.Steps() // read before the claim check it stands for
	if err := g.fence(next); err != nil {
		return err
	}
	if !g.lease.Allows(next) && !wait {
		failed := g.lease.RenewErr()
		g.lease.Renew(next)
		if failed != nil { // say why, rather than that the second is not leased yet
			return lease.StoreFailed(ErrStore, ErrNodeLost, nil, fmt.Sprintf("advance %q in the background", g.key), failed)
		}
		return fmt.Errorf("%w: second %d is not leased in the store yet; renewing in the background", ErrExhausted, next)
	}
	if !g.lease.Allows(next) {
		g.mu.Unlock()
		err := g.lease.Extend(ctx, next)
		g.mu.Lock()
		if g.closed.Load() {
			return g.errClosed() // Close ended the store call, or came after it
		}
		if ferr := g.fence(next); ferr != nil {
			return ferr
		}
		if err != nil && ctx.Err() != nil {
			return ctx.Err() // the caller gave up, not the store
		}
		if err != nil {
			return lease.StoreFailed(ErrStore, ErrNodeLost, nil, fmt.Sprintf("advance %q", g.key), err)
		}
	}
	for {
		st := g.state.Load()
		if st>>32 >= next {
			break
		}
		if g.state.CompareAndSwap(st, next<<32) {
			g.steps.Store(steps)
			break
		}
	}
	g.caughtUp(next)
	g.lease.ExtendSoon(next)
	return nil
}

// fence fails with ErrNodeLost unless the generator's claim holds until
// second sec ends, or until now if that is later (after a store call that
// kept it waiting), plus clock.CoarseLag: the fast path may hand out IDs of
// sec until the coarse clock leaves it. It reads the precise clock, so it
// runs on slow paths only: at each new second, and after each store call.
func (g *Generator) fence(sec uint64) error {
	if g.claim == nil {
		return g.checkHold()
	}
	return g.checkClaim(untilEnd(g.clock.Now(), time.Unix(int64(sec)+1, 0)).Add(clock.CoarseLag))
}

// untilEnd returns end, or now if that is later, as a reading of now's
// clock: moved from now by the wall time between them, it keeps now's
// monotonic reading, so that a claim compares it with its deadline on
// the monotonic clock, and a wall clock stepped meanwhile moves neither.
func untilEnd(now, end time.Time) time.Time {
	if d := end.Sub(now); d > 0 {
		return now.Add(d)
	}
	return now
}

// fenceNow fails with ErrNodeLost unless the generator's claim holds for
// clock.CoarseLag from now, for an ID handed out at once, or once the
// hold of its launch log is known lost. It reads the precise clock, so it
// runs on slow paths only: at start, after a wait and for each ID while
// the wall clock is behind.
func (g *Generator) fenceNow() error {
	if g.claim == nil {
		if g.lease == nil {
			return nil // at start, before the lease
		}
		if err := g.lease.Err(); err != nil {
			return lease.NodeLost(ErrNodeLost, err)
		}
		return nil
	}
	return g.checkClaim(g.clock.Now().Add(clock.CoarseLag))
}

// checkHold fails with ErrNodeLost once the hold of the generator's
// launch log is lost: its file removed or replaced. It looks at the file,
// so it runs where a claim is checked before a new second, and no second
// that began after the loss is entered.
func (g *Generator) checkHold() error {
	if err := g.lease.Check(); err != nil {
		return lease.NodeLost(ErrNodeLost, err)
	}
	return nil
}

func (g *Generator) checkClaim(until time.Time) error {
	if err := g.claim.Check(until); err != nil {
		return lease.NodeLost(ErrNodeLost, err)
	}
	return nil
}

func (g *Generator) logf(level slog.Level, msg string, args ...any) {
	if g.log != nil {
		g.log.Log(context.Background(), level, msg, append(args, "node", g.node)...)
	}
}
