package snowflake

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
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

// Options configure a Generator. The zero value of each field is a
// documented default, so Options{} is a Twitter-layout generator for node 0
// on the system clock.
type Options struct {
	// Layout is the ID layout. The zero Layout means Twitter().
	Layout Layout
	// Node holds this process's node field values by name, each in
	// 0 to 2^Bits-1; a missing field is 0. Processes that run at the same
	// time must have distinct node values.
	Node map[string]int64
	// Claim, when set, supplies the node instead of Node (which must then
	// be empty) and keeps the high-water marks instead of Store (which must
	// then be nil): its number is split into the layout's node fields, and
	// the generator fails with ErrNodeLost once the claim is lost. Its
	// number is the whole node value, all of the layout's node fields
	// together (see Layout.SplitNode). See store.NodeClaim.
	Claim store.NodeClaim
	// Clock is the source of time. Nil means the system clock; tests pass
	// a fake one.
	Clock clock.Clock

	// ClockPolicy says what to do when the wall clock steps back; zero is
	// ClockHybrid.
	ClockPolicy ClockPolicy
	// MaxWait is how far behind the clock may be for ClockWait and
	// ClockHybrid to wait for it, 0 to 1h. Zero means 10 ms for ClockWait
	// and 5 ms for ClockHybrid.
	MaxWait time.Duration
	// MaxContinue is how far behind the clock may be for ClockContinue
	// and ClockHybrid to keep issuing on the last tick, 0 to 1h. Zero means
	// no limit for ClockContinue and 100 ms for ClockHybrid.
	MaxContinue time.Duration

	// ExhaustPolicy says what to do when a tick's sequence runs out; zero
	// is ExhaustWait.
	ExhaustPolicy ExhaustPolicy
	// MaxLead bounds how far ahead of the clock ExhaustBorrow may take
	// ticks, rounded up to whole ticks, 0 to 1h. Zero means 100 ms (at least
	// one tick).
	MaxLead time.Duration
	// SequenceStart says where each tick's sequence starts; zero is
	// StartZero.
	SequenceStart SequenceStart

	// Store, when set, makes restarts safe across a clock stepped back
	// while the process was down; see store.HighWater (launchlog.Log is
	// one). Nil means a new
	// generator only skips the tick it was created in (and, under
	// ExhaustBorrow, the lead an earlier run may have borrowed).
	Store store.HighWater
	// StoreKey names this generator's mark in Store. Empty means
	// "snowflake/" + the layout's name (or "custom") + "/" + each node field
	// as name=value, comma-separated, for example
	// "snowflake/twitter/datacenter=1,worker=3".
	StoreKey string
	// Lease is how far ahead of the current tick the mark in Store is
	// moved, rounded up to whole ticks (at least two), 0 to 1h. A longer
	// lease writes the store less often; a restart may wait up to the
	// lease. Zero means one second, or the claim's store.MarkLeaser
	// suggestion.
	Lease time.Duration

	// Logger, when set, receives one record per clock anomaly: the wall
	// clock found stepped back, and caught up again.
	Logger *slog.Logger
}

// Generator issues Snowflake IDs for one node. It is safe for concurrent
// use.
//
// Its state is one atomic word, tick<<(64-TimeBits) | the next sequence
// number. Next reads a coarse clock and adds one to the word; the bits
// between the sequence's maximum and the tick leave room for adds past the
// last valid sequence without carrying into the tick. Everything else (a
// new tick, an exhausted sequence, a clock found behind) takes a mutex and
// reads the precise clock. Close sets okFrom, which Next reads anyway, to
// MaxInt64, so that every call takes the slow path, which reports
// ErrClosed.
type Generator struct {
	_      cpu.CacheLinePad // keep state on a cache line of its own
	state  atomic.Uint64    // tick<<shift | next sequence
	okFrom atomic.Int64     // coarse readings (ns) at or after this need no check, even before the tick starts
	_      cpu.CacheLinePad

	// Read-only after New.
	coarse      clock.Coarse
	epoch, unit int64  // ns
	shift       uint   // of the tick in state
	seqMask     uint64 // sequence bits of state, with headroom
	maxSeq      uint64
	useCAS      bool // too little headroom for blind adds: claim with CAS
	timeShift   uint
	seqShift    uint
	node        uint64 // node bits, in place
	maxTick     uint64

	clk         clock.Clock
	layout      Layout
	nodeValues  map[string]int64
	policy      ClockPolicy
	maxWait     time.Duration
	maxContinue time.Duration
	exhaust     ExhaustPolicy
	leadTicks   uint64
	seqStart    SequenceStart
	key         string
	leaseTicks  uint64
	lease       *lease.Lease // restart safety: ticks leased in the store
	log         *slog.Logger
	spin        bool // the clock is the system clock: spin out the last of a wait
	claim       store.NodeClaim
	closing     *closing.Signal // ends the waits at Close

	closeOnce sync.Once

	mu            sync.Mutex // serialises the slow path; guards the fields below
	high          int64      // the latest precise clock reading, ns
	behind        bool       // the clock was found stepped back and has not caught up
	behindLow     int64      // the earliest reading while behind, ns
	startFrom     uint64     // the tick the clock must reach before the first ID
	startTick     uint64     // the first tick this run may issue
	lastExhausted uint64     // the last tick counted in Stats.Exhausted
	closed        bool       // Close has begun; okFrom is MaxInt64

	backward, waits, borrowed, rejected, exhausted atomic.Uint64
}

const (
	// slack is how far a coarse reading may lag behind a tick's start and
	// still be taken as within the tick without asking the precise clock.
	slack = int64(clock.Resolution)
	// minHeadroom is the number of adds past the last sequence that the
	// state word must absorb for Next to claim with a blind atomic add.
	minHeadroom = 1 << 20
	maxDuration = time.Hour
	// spinBelow is the longest wait on the system clock spent spinning on
	// the precise clock rather than sleeping. Sleeps here last at least
	// about a millisecond whatever they ask for, and now and then two (the
	// runtime's timers wait in whole milliseconds), which would skip whole
	// ticks of a millisecond layout at full rate; spinning the wait for the
	// next millisecond keeps a Twitter-layout node at its cap.
	spinBelow = 1200 * time.Microsecond
)

// New returns a Generator for o. It reads the clock and, with a Store, the
// stored mark; the first ID comes from a tick that begins after both (so
// the first Next may wait up to a tick, or until the clock passes the mark).
// An invalid option is an error naming it; a layout whose timestamp has run
// out is ErrExpired.
func New(ctx context.Context, o Options) (*Generator, error) {
	l, err := o.check()
	if err != nil {
		return nil, err
	}
	g, err := build(l, o)
	if err != nil {
		return nil, err
	}
	g.setPolicies(o)
	store := o.Store
	if o.Claim != nil {
		store = o.Claim
	}
	if err := g.start(ctx, store); err != nil {
		return nil, err
	}
	return g, nil
}

// check validates o and returns its layout, the zero Layout read as
// Twitter's. A claim's node number becomes o.Node.
func (o *Options) check() (Layout, error) {
	l := o.Layout.resolve()
	if err := l.Validate(); err != nil {
		return l, err
	}
	l.Fields = slices.Clone(l.Fields)
	if o.Claim != nil {
		if len(o.Node) != 0 {
			return l, fmt.Errorf("%w: Options.Node and Options.Claim are both set, want one of them", ErrInvalid)
		}
		if o.Store != nil {
			return l, fmt.Errorf("%w: Options.Store and Options.Claim are both set, want Store nil: a claim keeps its node's marks itself, fenced by the claim", ErrInvalid)
		}
		var err error
		if o.Node, err = l.SplitNode(int64(o.Claim.Node())); err != nil {
			return l, fmt.Errorf("%w (Options.Claim)", err)
		}
	}
	for _, e := range []struct {
		name  string
		v     int
		names []string
	}{
		{"ClockPolicy", int(o.ClockPolicy), clockPolicyNames},
		{"ExhaustPolicy", int(o.ExhaustPolicy), exhaustPolicyNames},
		{"SequenceStart", int(o.SequenceStart), sequenceStartNames},
	} {
		if err := checkEnum("Options."+e.name, e.v, e.names); err != nil {
			return l, err
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"MaxWait", o.MaxWait}, {"MaxContinue", o.MaxContinue}, {"MaxLead", o.MaxLead}, {"Lease", o.Lease}} {
		if d.v < 0 || d.v > maxDuration {
			return l, fmt.Errorf("%w: Options.%s = %v, want 0 to %v", ErrInvalid, d.name, d.v, maxDuration)
		}
	}
	return l, nil
}

// build returns a generator of layout l for the node of o: the bit
// positions of its state word and IDs, its key and its clock.
func build(l Layout, o Options) (*Generator, error) {
	node, err := l.node(o.Node, "Options.Node")
	if err != nil {
		return nil, err
	}
	g := &Generator{
		epoch:      l.Epoch.UnixNano(),
		unit:       int64(l.Unit),
		shift:      uint(64 - l.TimeBits),
		maxSeq:     uint64(l.PerTick() - 1),
		maxTick:    1<<l.TimeBits - 1,
		layout:     l,
		nodeValues: maps.Clone(o.Node),
		key:        cmp.Or(o.StoreKey, defaultKey(l, o.Node)),
		log:        o.Logger,
		clk:        o.Clock,
		claim:      o.Claim,
		closing:    closing.New(),
	}
	g.seqMask = 1<<g.shift - 1
	g.useCAS = g.seqMask-g.maxSeq < minHeadroom
	ts, ns, ss := l.shifts()
	g.timeShift, g.seqShift, g.node = ts, ss, node<<ns
	if g.clk == nil {
		g.clk = clock.System()
	}
	g.spin = g.clk == clock.System()
	g.coarse = clock.CoarseOf(g.clk)
	return g, nil
}

// setPolicies sets the policies of o and their tolerances, with each
// zero value's documented default.
func (g *Generator) setPolicies(o Options) {
	g.policy, g.exhaust, g.seqStart = o.ClockPolicy, o.ExhaustPolicy, o.SequenceStart
	g.maxWait, g.maxContinue = o.MaxWait, o.MaxContinue
	switch g.policy {
	case ClockHybrid:
		g.maxWait = cmpOr(g.maxWait, 5*time.Millisecond)
		g.maxContinue = cmpOr(g.maxContinue, 100*time.Millisecond)
	case ClockWait:
		g.maxWait = cmpOr(g.maxWait, 10*time.Millisecond)
	case ClockContinue:
		g.maxContinue = cmpOr(g.maxContinue, time.Duration(math.MaxInt64))
	}
	g.leadTicks = max(1, ceilDiv(cmpOr(o.MaxLead, 100*time.Millisecond), g.layout.Unit))
	lease := cmpOr(o.Lease, time.Second)
	if c, ok := o.Claim.(store.MarkLeaser); ok && o.Lease == 0 {
		lease = max(lease, c.MarkLease())
	}
	g.leaseTicks = max(2, ceilDiv(lease, g.layout.Unit))
}

// start reads the clock and, with a store, the stored mark, and sets the
// generator's first tick after both, as if the tick before were used up,
// so that the first Next waits for it on the slow path.
func (g *Generator) start(ctx context.Context, hw store.HighWater) error {
	l := g.layout
	now := g.clk.Now()
	if err := g.fence(now.Add(clock.CoarseLag)); err != nil {
		return err
	}
	if now.Before(l.Epoch) {
		return fmt.Errorf("%w: clock reads %v, before layout %s's Epoch %v", ErrInvalid, now.UTC(), l.label(), l.Epoch.UTC())
	}
	if exp := l.Expires(); !now.Before(exp) {
		return fmt.Errorf("%w: layout %s expired at %v (clock reads %v)", ErrExpired, l.label(), exp, now.UTC())
	}
	g.high = now.UnixNano()
	g.startFrom = uint64(g.tickOf(g.high)) + 1
	g.lease = newLease(hw, g.key, g.leaseTicks, l, g.logf)
	first, err := g.lease.Start(ctx)
	if err != nil && lease.Refused(err) {
		return fmt.Errorf("snowflake: %w", err)
	}
	if err != nil {
		return lease.StoreFailed(ErrStore, ErrNodeLost, func() error { return g.fence(g.clk.Now().Add(clock.CoarseLag)) }, fmt.Sprintf("read %q", g.key), err)
	}
	if first > g.maxTick {
		g.lease.Close()
		return fmt.Errorf("%w: layout %s expires at %v, before the stored mark", ErrExpired, l.label(), l.Expires())
	}
	if first > g.startFrom {
		g.startFrom = first
		mark := l.tickTime(first)
		g.logf(slog.LevelWarn, "snowflake: high-water mark ahead of the clock; waiting for the clock to pass it",
			"mark", mark, "wait", mark.Sub(now))
	}
	g.startTick = g.startFrom
	if hw == nil && g.exhaust == ExhaustBorrow {
		g.startTick += g.leadTicks // an earlier run may have borrowed this far
	}
	if g.startTick > g.maxTick {
		g.lease.Close()
		return fmt.Errorf("%w: layout %s expires at %v, before a fresh tick", ErrExpired, l.label(), l.Expires())
	}
	g.state.Store((g.startTick-1)<<g.shift | (g.maxSeq + 1))
	g.lastExhausted = g.startTick - 1
	g.okFrom.Store(g.high)
	if lost := g.lease.Done(); lost != nil && g.claim == nil {
		go g.watchHold(lost)
	}
	return nil
}

func checkEnum(name string, v int, names []string) error {
	if v < 0 || v >= len(names) {
		return fmt.Errorf("%w: %s = %d, want 0 to %d (%s)", ErrInvalid, name, v, len(names)-1, strings.Join(names, ", "))
	}
	return nil
}

func cmpOr(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func ceilDiv(d, unit time.Duration) uint64 { return uint64((d + unit - 1) / unit) }

func defaultKey(l Layout, node map[string]int64) string {
	var b strings.Builder
	b.WriteString("snowflake/")
	b.WriteString(cmp.Or(l.Name, "custom"))
	for i, f := range l.Fields {
		if i == 0 {
			b.WriteByte('/')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(f.Name + "=" + strconv.FormatInt(node[f.Name], 10))
	}
	return b.String()
}

// Layout returns the generator's layout.
func (g *Generator) Layout() Layout {
	l := g.layout
	l.Fields = slices.Clone(l.Fields)
	return l
}

// Node returns the generator's node field values by name.
func (g *Generator) Node() map[string]int64 {
	m := make(map[string]int64, len(g.layout.Fields))
	for _, f := range g.layout.Fields {
		m[f.Name] = g.nodeValues[f.Name]
	}
	return m
}

// Close stops the generator: every later call of Next, NextContext, Fill
// and FillContext fails at once with ErrClosed, and so do the calls
// waiting for a tick, the clock or the store. Close then waits for the
// background renewal of the lease in the store, if one runs, and releases
// the node's hold. It returns nil; calling it again does nothing.
func (g *Generator) Close() error {
	g.closeOnce.Do(func() {
		g.mu.Lock()
		g.closed = true
		g.okFrom.Store(math.MaxInt64)
		g.mu.Unlock()
		g.closing.Close()
		g.lease.Close()
	})
	return nil
}

// errClosed is the error of a call on a closed generator.
func (g *Generator) errClosed() error {
	return fmt.Errorf("%w: key %q", ErrClosed, g.key)
}

// Stats returns the generator's counts of events. It reads counters only,
// so it works after Close too.
//
// A snowflake Generator counts ClockBackward (the wall clock found stepped
// back to an earlier tick than it had read), Waits (sleeps for the next
// tick, for the clock to catch up or for a new generator's first tick),
// Borrowed (ticks taken ahead of the clock under ExhaustBorrow), Rejected
// (calls refused by a policy, with ErrClockBackwards or ErrExhausted),
// Exhausted (ticks whose sequence ran out) and its lease's StoreWrites and
// StoreErrors.
func (g *Generator) Stats() idkit.Stats {
	writes, failures := g.lease.Counts()
	return idkit.Stats{
		ClockBackward: g.backward.Load(),
		Waits:         g.waits.Load(),
		Borrowed:      g.borrowed.Load(),
		Rejected:      g.rejected.Load(),
		Exhausted:     g.exhausted.Load(),
		StoreWrites:   writes,
		StoreErrors:   failures,
	}
}

// Next returns a new ID. IDs from one goroutine strictly increase. Next
// waits when the ExhaustPolicy or ClockPolicy says to, and fails with
// ErrClockBackwards or ErrExhausted when they say to refuse, with ErrStore
// when the lease cannot be renewed, with ErrExpired once the layout's
// timestamp runs out, and with ErrClosed after Close.
//
// An ID's timestamp may lag the wall clock by about a millisecond (the
// coarse clock's resolution), and runs ahead of it while the generator
// continues on or borrows a tick.
func (g *Generator) Next() (ID, error) { return g.NextContext(context.Background()) }

// NextContext is Next under ctx, which bounds its waits: for the next
// tick, for the clock to catch up, and for the store. A call whose ctx
// ends returns ctx's error.
func (g *Generator) NextContext(ctx context.Context) (ID, error) {
	st := g.state.Load()
	now := g.coarse.UnixNano()
	if now >= g.epoch+int64(st>>g.shift+1)*g.unit || now < g.okFrom.Load() {
		return g.slow(ctx, now)
	}
	if v := g.take(); v&g.seqMask <= g.maxSeq {
		return g.id(v), nil
	}
	return g.slow(ctx, now)
}

// fillRun is the most sequence numbers one Fill claim takes with one
// atomic add. Adds past the last sequence number land in the state word's
// headroom (at least 2^20), so a run this short leaves room for thousands
// of concurrent claims that overshoot before the slow path clamps them.
const fillRun = 256

// Fill fills dst with new IDs in increasing order, claiming runs of up to
// 256 with one atomic add each. It returns len(dst), or fewer with the
// error that stopped it (see Next).
func (g *Generator) Fill(dst []ID) (int, error) { return g.FillContext(context.Background(), dst) }

// FillContext is Fill under ctx, which bounds its waits as NextContext's.
// A call whose ctx ends returns the IDs filled so far and ctx's error.
func (g *Generator) FillContext(ctx context.Context, dst []ID) (int, error) {
	n := 0
	for n < len(dst) {
		st := g.state.Load()
		now := g.coarse.UnixNano()
		if g.useCAS || now >= g.epoch+int64(st>>g.shift+1)*g.unit || now < g.okFrom.Load() {
			id, err := g.NextContext(ctx)
			if err != nil {
				return n, err
			}
			dst[n] = id
			n++
			continue
		}
		want := uint64(min(len(dst)-n, fillRun))
		v := g.state.Add(want) - want
		first := v & g.seqMask
		if first > g.maxSeq {
			id, err := g.slow(ctx, now)
			if err != nil {
				return n, err
			}
			dst[n] = id
			n++
			continue
		}
		// The run's IDs differ only in their sequence: each is the last
		// plus one sequence step.
		out := dst[n : n+int(min(first+want-1, g.maxSeq)-first+1)]
		intid.FillStep(out, g.id(v&^g.seqMask|first), ID(1)<<g.seqShift)
		n += len(out)
	}
	return n, nil
}

// take claims the next sequence number and returns the state word before
// the claim; its sequence may be past maxSeq.
func (g *Generator) take() uint64 {
	if !g.useCAS {
		return g.state.Add(1) - 1
	}
	for {
		v := g.state.Load()
		if v&g.seqMask > g.maxSeq || g.state.CompareAndSwap(v, v+1) {
			return v
		}
	}
}

// id composes the ID for state word v.
func (g *Generator) id(v uint64) ID {
	return ID(v>>g.shift<<g.timeShift | v&g.seqMask<<g.seqShift | g.node)
}

func (g *Generator) tickOf(ns int64) int64 {
	d := ns - g.epoch
	t := d / g.unit
	if d%g.unit < 0 {
		t--
	}
	return t
}

func (g *Generator) tickStart(t uint64) int64 { return g.epoch + int64(t)*g.unit }

// slow is Next's slow path: it brings the logical tick up to date with the
// precise clock under the policies and claims an ID under the mutex.
// coarse is the coarse reading that sent the caller here.
func (g *Generator) slow(ctx context.Context, coarse int64) (ID, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for first := true; ; first = false {
		if g.closed {
			return 0, g.errClosed()
		}
		if !first {
			coarse = g.coarse.UnixNano() // the caller's reading is stale after a wait
		}
		precise := g.clk.Now()
		// With a claim, this covers the ID about to be handed out when
		// the slow path stays in the current tick (every ID while the
		// clock is behind), and every pass after a wait.
		if err := g.fence(precise.Add(clock.CoarseLag)); err != nil {
			return 0, err
		}
		now := precise.UnixNano()
		again, err := g.checkClock(ctx, now)
		if err != nil {
			return 0, err
		}
		if again {
			continue
		}
		cur := g.state.Load() >> g.shift
		t := g.tickOf(now)
		switch {
		case cur < g.startTick && t < int64(g.startFrom):
			// A new generator: wait for its first tick whatever the policy.
			if err := g.sleep(ctx, time.Duration(g.tickStart(g.startFrom)-now)); err != nil {
				return 0, err
			}
			continue
		case cur < g.startTick:
			if err := g.install(ctx, max(uint64(t), g.startTick), now, coarse); err != nil {
				return 0, err
			}
		case t > int64(cur):
			if err := g.install(ctx, uint64(t), now, coarse); err != nil {
				return 0, err
			}
		case min(coarse, now) < g.okFrom.Load() && (g.claim == nil || !g.behind):
			// A coarse reading lagging the precise clock, or a clock behind
			// that the ClockPolicy lets the generator continue under. With
			// a claim, every ID under a clock behind comes here, so that
			// the claim is checked however long the clock stays behind.
			g.okFrom.Store(min(coarse, now))
		}
		v := g.take()
		if v&g.seqMask <= g.maxSeq {
			return g.id(v), nil
		}
		tick := v >> g.shift
		g.clamp(tick)
		if g.lastExhausted != tick {
			g.lastExhausted = tick
			g.exhausted.Add(1)
		}
		clockTick := uint64(max(g.tickOf(now), 0))
		switch {
		case g.exhaust == ExhaustError:
			g.rejected.Add(1)
			return 0, fmt.Errorf("%w: tick %d issued all %d IDs; the next begins in %v",
				ErrExhausted, tick, g.maxSeq+1, time.Duration(g.tickStart(tick+1)-now))
		case g.exhaust == ExhaustBorrow && tick+1 <= clockTick+g.leadTicks:
			if err := g.install(ctx, tick+1, now, coarse); err != nil {
				return 0, err
			}
			g.borrowed.Add(1)
		case g.exhaust == ExhaustBorrow:
			if err := g.sleep(ctx, time.Duration(g.tickStart(tick+1-g.leadTicks)-now)); err != nil {
				return 0, err
			}
		default:
			if err := g.sleep(ctx, time.Duration(g.tickStart(tick+1)-now)); err != nil {
				return 0, err
			}
		}
	}
}

// checkClock compares the precise reading now (ns) with the latest
// reading so far. When the clock has stepped back to an earlier tick it
// applies the ClockPolicy: it fails, sleeps and reports again = true, or
// lets the caller continue on the logical tick. The caller holds g.mu.
func (g *Generator) checkClock(ctx context.Context, now int64) (again bool, err error) {
	if g.tickOf(now) >= g.tickOf(g.high) {
		g.high = max(g.high, now)
		if g.behind {
			g.behind = false
			g.logf(slog.LevelInfo, "snowflake: wall clock caught up", "time", time.Unix(0, now).UTC())
		}
		return false, nil
	}
	drift := time.Duration(g.high - now)
	if !g.behind || g.tickOf(now) < g.tickOf(g.behindLow) {
		g.backward.Add(1)
		g.logf(slog.LevelWarn, "snowflake: wall clock moved backwards",
			"behind", drift, "policy", g.policy, "latest", time.Unix(0, g.high).UTC(), "now", time.Unix(0, now).UTC())
		g.behind, g.behindLow = true, now
	}
	g.behindLow = min(g.behindLow, now)
	switch {
	case g.policy == ClockWait && drift <= g.maxWait,
		g.policy == ClockHybrid && drift < g.maxWait:
		if err := g.sleep(ctx, time.Duration(g.tickStart(uint64(g.tickOf(g.high)))-now)); err != nil {
			return false, err
		}
		return true, nil
	case g.policy == ClockContinue && drift <= g.maxContinue,
		g.policy == ClockHybrid && drift < g.maxContinue:
		return false, nil
	}
	g.rejected.Add(1)
	return false, fmt.Errorf("%w: the clock is %v behind its latest reading (policy %v%s)",
		ErrClockBackwards, drift, g.policy, g.tolerance())
}

func (g *Generator) tolerance() string {
	switch g.policy {
	case ClockHybrid:
		return fmt.Sprintf(": waits below %v, continues below %v", g.maxWait, g.maxContinue)
	case ClockWait:
		return fmt.Sprintf(", tolerance %v", g.maxWait)
	case ClockContinue:
		return fmt.Sprintf(", tolerance %v", g.maxContinue)
	}
	return ""
}

// install moves the generator to tick t, which is later than its current
// tick, leasing it in the store first if needed. With a claim it enters t
// only if the claim holds until t ends, or until now if that is later,
// plus clock.CoarseLag for the fast path's coarse clock: checked before
// and again after the store call, which may have kept it waiting. The
// caller holds g.mu, which install releases during the store call; if
// another caller installed t or a later tick meanwhile, install leaves
// the state to it.
func (g *Generator) install(ctx context.Context, t uint64, now, coarse int64) error {
	if t > g.maxTick {
		return fmt.Errorf("%w: layout %s expired at %v", ErrExpired, g.layout.label(), g.layout.Expires())
	}
	if err := g.fenceTick(t); err != nil {
		return err
	}
	if !g.lease.Allows(t) {
		g.mu.Unlock()
		err := g.lease.Extend(ctx, t)
		g.mu.Lock()
		if g.closed {
			return g.errClosed() // Close ended the store call, or came after it
		}
		if ferr := g.fenceTick(t); ferr != nil { // the store may have kept it waiting
			return ferr
		}
		if err != nil && ctx.Err() != nil {
			return ctx.Err() // the caller gave up, not the store
		}
		if err != nil {
			return lease.StoreFailed(ErrStore, ErrNodeLost, nil, fmt.Sprintf("advance %q", g.key), err)
		}
		if g.state.Load()>>g.shift >= t {
			return nil
		}
	}
	var seq uint64
	if g.seqStart == StartRandom {
		seq = rand.Uint64N(min(10, g.maxSeq+1))
	}
	g.state.Store(t<<g.shift | seq)
	g.okFrom.Store(min(g.tickStart(t), now, coarse) - slack)
	g.lease.ExtendSoon(t)
	return nil
}

// clamp puts an exhausted tick's sequence back to just past the maximum,
// so that callers who keep adding past it never carry into the tick. The
// caller holds g.mu; only it changes the tick.
func (g *Generator) clamp(tick uint64) {
	for {
		v := g.state.Load()
		if v>>g.shift != tick || v&g.seqMask <= g.maxSeq+1 || g.state.CompareAndSwap(v, tick<<g.shift|(g.maxSeq+1)) {
			return
		}
	}
}

// sleep waits d on the generator's clock, or until ctx ends, and returns
// ctx's error if it ended first. On the system clock it spins on the
// precise clock, yielding the processor between readings, for waits of at
// most spinBelow. The caller holds g.mu, which sleep releases meanwhile;
// the caller looks at the state again after it. Close ends the wait, and
// sleep then fails with ErrClosed.
func (g *Generator) sleep(ctx context.Context, d time.Duration) (err error) {
	g.waits.Add(1)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		if g.closed {
			err = g.errClosed()
		}
	}()
	if !g.spin {
		return g.closing.Sleep(ctx, g.clk, d)
	}
	deadline := g.clk.Now().Add(d)
	for {
		r := deadline.Sub(g.clk.Now())
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case g.closing.Closed():
			return closing.ErrClosed
		case r <= 0:
			return nil
		case r > spinBelow:
			if err := g.closing.Sleep(ctx, g.clk, r); err != nil {
				return err
			}
		default:
			runtime.Gosched()
		}
	}
}

// markEnd returns the first tick of l that starts at or after mark: the
// ticks before it may hold IDs of the run that stored mark. It is 0 for a
// mark at or before the Epoch and MaxUint64 for one at or after Expires.
func markEnd(l Layout, mark time.Time) uint64 {
	switch {
	case !mark.After(l.Epoch):
		return 0
	case !mark.Before(l.Expires()):
		return math.MaxUint64
	}
	t, _ := l.tickOf(mark)
	if l.tickTime(t).Before(mark) {
		t++
	}
	return t
}

// newLease returns the generator's lease of ticks in store (none if store
// is nil). A mark covers the ticks that start before it; a new run starts
// at the first tick that starts at or after it.
func newLease(hw store.HighWater, key string, ahead uint64, l Layout, logf func(slog.Level, string, ...any)) *lease.Lease {
	var s store.HighWater
	if hw != nil {
		s = hw
	}
	return lease.New(s, key, ahead, lease.Units{
		Mark: l.tickTime,
		End:  func(mark time.Time) uint64 { return markEnd(l, mark) },
	}, func(err error) {
		logf(slog.LevelWarn, "snowflake: lease renewal failed; will retry before the lease runs out", "err", err)
	})
}

// fenceTick fails with ErrNodeLost unless the generator's claim holds
// until tick t ends, or until now if that is later, plus clock.CoarseLag.
// It reads the precise clock when the generator has a claim.
func (g *Generator) fenceTick(t uint64) error {
	if g.claim == nil {
		if err := g.lease.Err(); err != nil { // fence, on the same pass, looked at the hold
			return lease.NodeLost(ErrNodeLost, err)
		}
		return nil
	}
	// Moved from now by the wall time to the tick's end, the deadline
	// keeps now's monotonic reading, which the claim compares.
	now := g.clk.Now()
	until := now
	if d := time.Duration(g.tickStart(t+1) - now.UnixNano()); d > 0 {
		until = now.Add(d)
	}
	return g.fence(until.Add(clock.CoarseLag))
}

// fence fails with ErrNodeLost unless the generator's claim holds until
// until, a precise time, or once the hold of its launch log is lost: its
// file removed or replaced. It looks at the hold's file, on the slow
// path's every pass, so that no tick that began after the loss is
// entered.
func (g *Generator) fence(until time.Time) error {
	if g.claim == nil {
		if g.lease == nil {
			return nil // at start, before the lease
		}
		if err := g.lease.Check(); err != nil {
			return lease.NodeLost(ErrNodeLost, err)
		}
		return nil
	}
	if err := g.claim.Check(until); err != nil {
		return lease.NodeLost(ErrNodeLost, err)
	}
	return nil
}

// watchHold waits until the hold of the generator's launch log is found
// lost (lost is closed), or the generator closed, and on a loss sends
// every call to the slow path, whose fence reports ErrNodeLost: no ID is
// handed out after the loss is known, even within a tick already entered.
func (g *Generator) watchHold(lost <-chan struct{}) {
	select {
	case <-lost:
		g.mu.Lock()
		g.okFrom.Store(math.MaxInt64)
		g.mu.Unlock()
	case <-g.closing.Done():
	}
}

func (g *Generator) logf(level slog.Level, msg string, args ...any) {
	if g.log != nil {
		g.log.Log(context.Background(), level, msg, append(args, "layout", g.layout.label(), "key", g.key)...)
	}
}
