package snowflake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// t0 is on a second boundary, so that it starts a tick of every unit the
// tests use.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// small is a layout with four IDs per millisecond, to run out of ticks
// quickly.
func small() Layout {
	return Layout{
		Name:         "small",
		Epoch:        time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		Unit:         time.Millisecond,
		TimeBits:     41,
		Fields:       []Field{{"node", 4}},
		SequenceBits: 2,
	}
}

// start returns a generator on a fake clock at t0, with the clock already
// moved one tick on, so that the first Next need not wait for a fresh tick.
func start(t *testing.T, o Options) (*Generator, *clock.Fake) {
	t.Helper()
	fake := clock.NewFake(t0)
	o.Clock = fake
	g, err := New(context.Background(), o)
	require.NoError(t, err)
	fake.Advance(g.Layout().Unit)
	return g, fake
}

func next(t *testing.T, g *Generator) ID {
	t.Helper()
	id, err := g.Next()
	require.NoError(t, err)
	return id
}

// take returns n IDs from g.Next.
func take(t *testing.T, g *Generator, n int) []ID {
	t.Helper()
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = next(t, g)
	}
	return ids
}

func parts(t *testing.T, g *Generator, id ID) Parts {
	t.Helper()
	p, err := g.Layout().Decode(id)
	require.NoError(t, err)
	return p
}

// tick returns the time of id's tick as an offset from t0.
func tick(t *testing.T, g *Generator, id ID) time.Duration {
	t.Helper()
	return parts(t, g, id).Time.Sub(t0)
}

func requireIncreasing(t *testing.T, ids []ID) {
	t.Helper()
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("IDs not strictly increasing at %d: %d then %d", i, ids[i-1], ids[i])
		}
	}
}

func requireDistinct(t *testing.T, ids []ID) {
	t.Helper()
	seen := make(map[ID]int, len(ids))
	for i, id := range ids {
		if j, dup := seen[id]; dup {
			t.Fatalf("ID %d issued twice, at %d and %d", id, j, i)
		}
		seen[id] = i
	}
}

type result struct {
	id  ID
	err error
}

// nextAsync calls g.Next on another goroutine.
func nextAsync(g *Generator) <-chan result {
	ch := make(chan result, 1)
	go func() {
		id, err := g.Next()
		ch <- result{id, err}
	}()
	return ch
}

// waitSleeping waits until a goroutine sleeps on fake, failing the test if
// ch delivers a result first: Next returned without waiting.
func waitSleeping(t *testing.T, fake *clock.Fake, ch <-chan result) {
	t.Helper()
	testwait.Until(t, func() bool {
		select {
		case r := <-ch:
			t.Fatalf("Next returned %d, %v without waiting", r.id, r.err)
		default:
		}
		return fake.Sleepers() > 0
	}, "Next asleep on the fake clock")
}

// nextAfterWait calls g.Next, checks that it sleeps, runs move (which
// should move the clock far enough) and returns what Next returned.
func nextAfterWait(t *testing.T, g *Generator, fake *clock.Fake, move func()) (ID, error) {
	t.Helper()
	ch := nextAsync(g)
	waitSleeping(t, fake, ch)
	require.True(t, g.mu.TryLock(), "the mutex is held across the sleep")
	g.mu.Unlock()
	move()
	r := testwait.Recv(t, ch, "Next's result once the clock moved")
	return r.id, r.err
}

// TestNoLockAcrossTheStore: while the store is slow to lease the next
// tick, the generator's mutex is free; the ID comes once it answered.
func TestNoLockAcrossTheStore(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	store := memstore.NewGated(4)
	g, err := New(context.Background(), Options{Layout: small(), Node: map[string]int64{"node": 7}, Store: store, Clock: fake})
	require.NoError(t, err)
	fake.Advance(time.Millisecond)
	ch := nextAsync(g)
	testwait.Recv(t, store.Entered, "the lease's write")
	require.True(t, g.mu.TryLock(), "the mutex is held across the store call")
	g.mu.Unlock()
	close(store.Release)
	r := testwait.Recv(t, ch, "Next once the store answered")
	require.NoError(t, r.err)
	require.NoError(t, g.Close())
}

// NextContext's and FillContext's waits, for the store and for the next
// tick, end with their context, with its error rather than ErrStore.
func TestContextEndsTheWait(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	store := memstore.NewGated(4)
	g, err := New(context.Background(), Options{Layout: small(), Node: map[string]int64{"node": 7}, Store: store, Clock: fake})
	require.NoError(t, err)
	fake.Advance(time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() {
		_, err := g.NextContext(ctx)
		errs <- err
	}()
	testwait.Recv(t, store.Entered, "the lease's write")
	cancel()
	err = testwait.Recv(t, errs, "NextContext's return once its context ended")
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrStore, "the caller gave up, not the store")
	close(store.Release)
	_, err = g.Next()
	require.NoError(t, err, "the next caller leases the tick")
	require.NoError(t, g.Close())

	g, fake = start(t, Options{Layout: small()})
	take(t, g, 4) // the tick's sequence used up
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		_, err := g.NextContext(ctx)
		errs <- err
	}()
	go func() {
		n, err := g.FillContext(ctx, make([]ID, 5))
		assert.Zero(t, n, "IDs of an exhausted tick")
		errs <- err
	}()
	testwait.Sleepers(t, fake, 2)
	cancel()
	for range 2 {
		assert.ErrorIs(t, testwait.Recv(t, errs, "the return once the context ended"), context.Canceled)
	}
	fake.Advance(time.Millisecond)
	_, err = g.Next()
	require.NoError(t, err)
	assert.Equal(t, uint64(2), g.Stats().Waits)
}

// drive calls g.Next and moves fake on by step whenever Next sleeps, until
// Next returns, or fails after testwait.Bound.
func drive(g *Generator, fake *clock.Fake, step time.Duration) (ID, error) {
	ch := nextAsync(g)
	for giveUp := time.Now().Add(testwait.Bound); time.Now().Before(giveUp); {
		select {
		case r := <-ch:
			return r.id, r.err
		default:
		}
		if fake.Sleepers() == 0 {
			runtime.Gosched()
			continue
		}
		fake.Advance(step)
		fake.WaitForWakes() // the sleeper sees the move before the clock moves again
	}
	return 0, fmt.Errorf("Next did not return within %v of moving the clock", testwait.Bound)
}

// recorder is a slog.Handler that keeps the records it handles.
type recorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records = append(r.records, rec)
	return nil
}

// messages returns the messages logged at level.
func (r *recorder) messages(level slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var m []string
	for _, rec := range r.records {
		if rec.Level == level {
			m = append(m, rec.Message)
		}
	}
	return m
}

func TestNewRejectsOptions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		o    Options
		err  error
		msg  string
	}{
		{"unknown field", Options{Node: map[string]int64{"wroker": 1}}, ErrInvalid,
			`Options.Node["wroker"]: layout twitter has no such field, want one of datacenter, worker`},
		{"field too big", Options{Node: map[string]int64{"worker": 32}}, ErrInvalid, `Options.Node["worker"] = 32, want 0 to 31`},
		{"field negative", Options{Node: map[string]int64{"datacenter": -1}}, ErrInvalid, `Options.Node["datacenter"] = -1, want 0 to 31`},
		{"clock policy", Options{ClockPolicy: 4}, ErrInvalid, "Options.ClockPolicy = 4, want 0 to 3 (hybrid, reject, wait, continue)"},
		{"exhaust policy", Options{ExhaustPolicy: -1}, ErrInvalid, "Options.ExhaustPolicy = -1, want 0 to 2 (wait, borrow, error)"},
		{"sequence start", Options{SequenceStart: 2}, ErrInvalid, "Options.SequenceStart = 2, want 0 to 1 (zero, random)"},
		{"max wait", Options{MaxWait: -time.Millisecond}, ErrInvalid, "Options.MaxWait = -1ms, want 0 to 1h0m0s"},
		{"max continue", Options{MaxContinue: 2 * time.Hour}, ErrInvalid, "Options.MaxContinue = 2h0m0s, want 0 to 1h0m0s"},
		{"max lead", Options{MaxLead: -1}, ErrInvalid, "Options.MaxLead = -1ns"},
		{"lease", Options{Lease: 61 * time.Minute}, ErrInvalid, "Options.Lease = 1h1m0s"},
		{"layout", Options{Layout: Layout{Name: "x", Epoch: t0.AddDate(-1, 0, 0), Unit: time.Second, TimeBits: 70}}, ErrInvalid,
			"Layout.TimeBits = 70, want 1 to 63"},
		{"expired preset", Options{Layout: Baidu()}, ErrExpired, "layout baidu expired at 2024-11-20 13:24:16 +0000 UTC"},
		{"before epoch", Options{Layout: JSSafe()}, ErrInvalid, "before layout jssafe's Epoch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			now := t0
			if tt.name == "before epoch" {
				now = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
			}
			tt.o.Clock = clock.NewFake(now)
			_, err := New(context.Background(), tt.o)
			require.ErrorIs(t, err, tt.err)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestZeroOptionsAreTwitterNodeZero(t *testing.T) {
	t.Parallel()
	g, _ := start(t, Options{})
	assert.Equal(t, Twitter(), g.Layout())
	assert.Equal(t, map[string]int64{"datacenter": 0, "worker": 0}, g.Node())
	p := parts(t, g, next(t, g))
	assert.Equal(t, t0.Add(time.Millisecond), p.Time, "the ID carries the clock's tick")
	assert.Equal(t, map[string]int64{"datacenter": 0, "worker": 0}, p.Node)
	assert.Equal(t, int64(0), p.Sequence)
}

func TestIDsCarryNodeAndTime(t *testing.T) {
	t.Parallel()
	for _, name := range PresetNames() {
		if name == "baidu" {
			continue // expired
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l, err := Preset(name)
			require.NoError(t, err)
			node := map[string]int64{}
			for i, f := range l.Fields {
				node[f.Name] = int64(1<<f.Bits - 1 - i) // distinct, near the top of the range
			}
			g, fake := start(t, Options{Layout: l, Node: node})
			ids := take(t, g, 3)
			requireIncreasing(t, ids)
			for i, id := range ids {
				p := parts(t, g, id)
				assert.Equal(t, node, p.Node)
				assert.Equal(t, int64(i), p.Sequence)
				assert.Equal(t, fake.Now().Truncate(l.Unit), p.Time)
			}
			if name == "jssafe" {
				assert.LessOrEqual(t, int64(ids[2]), int64(1<<53-1))
			}
		})
	}
}

// A new generator issues nothing in the tick it was created in: the first
// Next waits for the next tick, whatever the exhaustion policy.
func TestFirstIDWaitsForAFreshTick(t *testing.T) {
	t.Parallel()
	for _, ep := range []ExhaustPolicy{ExhaustWait, ExhaustError, ExhaustBorrow} {
		t.Run(ep.String(), func(t *testing.T) {
			t.Parallel()
			fake := clock.NewFake(t0.Add(400 * time.Microsecond))
			g, err := New(context.Background(), Options{Layout: small(), Clock: fake, ExhaustPolicy: ep, MaxLead: 2 * time.Millisecond})
			require.NoError(t, err)
			id, err := nextAfterWait(t, g, fake, func() { fake.Set(t0.Add(time.Millisecond)) })
			require.NoError(t, err)
			want := time.Millisecond
			if ep == ExhaustBorrow {
				want += 2 * time.Millisecond // past what an earlier run may have borrowed
			}
			assert.Equal(t, want, tick(t, g, id))
			assert.Equal(t, idkit.Stats{Waits: 1}, g.Stats())
		})
	}
}

func TestExhaustWaitWaitsForTheNextTick(t *testing.T) {
	t.Parallel()
	g, fake := start(t, Options{Layout: small()})
	first := take(t, g, 4)
	for _, id := range first {
		assert.Equal(t, time.Millisecond, tick(t, g, id))
	}
	fake.Advance(600 * time.Microsecond) // still inside the tick
	id, err := nextAfterWait(t, g, fake, func() { fake.Advance(400 * time.Microsecond) })
	require.NoError(t, err)
	assert.Equal(t, 2*time.Millisecond, tick(t, g, id))
	assert.Equal(t, int64(0), parts(t, g, id).Sequence)
	assert.Greater(t, id, first[3])
	assert.Equal(t, idkit.Stats{Waits: 1, Exhausted: 1}, g.Stats())
}

func TestExhaustBorrowTakesTicksAheadUpToTheLead(t *testing.T) {
	t.Parallel()
	// With a store the first tick is the one after the start; without one
	// it would also skip the lead an earlier run may have borrowed.
	g, fake := start(t, Options{Layout: small(), ExhaustPolicy: ExhaustBorrow, MaxLead: 3 * time.Millisecond, Store: &memstore.Store{}})
	ids := take(t, g, 16) // ticks 1..4 ms while the clock stays at 1 ms
	for i, id := range ids {
		assert.Equal(t, time.Duration(1+i/4)*time.Millisecond, tick(t, g, id))
	}
	assert.Equal(t, idkit.Stats{Borrowed: 3, Exhausted: 3, StoreWrites: 1}, g.Stats())
	// Tick 5 ms would be 4 ms ahead: wait until the clock is at 2 ms.
	id, err := nextAfterWait(t, g, fake, func() { fake.Advance(time.Millisecond) })
	require.NoError(t, err)
	ids = append(ids, id)
	assert.Equal(t, 5*time.Millisecond, tick(t, g, id))
	requireIncreasing(t, ids)
	assert.Equal(t, idkit.Stats{Waits: 1, Borrowed: 4, Exhausted: 4, StoreWrites: 1}, g.Stats())
}

func TestExhaustErrorFails(t *testing.T) {
	t.Parallel()
	g, fake := start(t, Options{Layout: small(), ExhaustPolicy: ExhaustError})
	ids := take(t, g, 4)
	for range 1000 { // callers that keep trying never carry into the tick
		_, err := g.Next()
		require.ErrorIs(t, err, ErrExhausted)
		assert.Contains(t, err.Error(), "issued all 4 IDs; the next begins in 1ms")
	}
	assert.Equal(t, idkit.Stats{Rejected: 1000, Exhausted: 1}, g.Stats())
	fake.Advance(time.Millisecond)
	id := next(t, g)
	assert.Equal(t, 2*time.Millisecond, tick(t, g, id))
	requireIncreasing(t, append(ids, id))
}

func TestSequenceStart(t *testing.T) {
	t.Parallel()
	firsts := func(s SequenceStart) []int64 {
		l := small()
		l.SequenceBits = 6
		g, fake := start(t, Options{Layout: l, SequenceStart: s})
		var seqs []int64
		for range 200 {
			seqs = append(seqs, parts(t, g, next(t, g)).Sequence)
			fake.Advance(time.Millisecond)
		}
		return seqs
	}
	for _, s := range firsts(StartZero) {
		require.Equal(t, int64(0), s)
	}
	random := firsts(StartRandom)
	seen := map[int64]bool{}
	for _, s := range random {
		require.GreaterOrEqual(t, s, int64(0))
		require.LessOrEqual(t, s, int64(9))
		seen[s] = true
	}
	assert.Greater(t, len(seen), 5, "random starts spread over 0..9: %v", random)

	// With fewer than ten sequence values the start stays in range.
	l := small()
	l.SequenceBits = 1
	g, fake := start(t, Options{Layout: l, SequenceStart: StartRandom})
	for range 50 {
		require.LessOrEqual(t, parts(t, g, next(t, g)).Sequence, int64(1))
		fake.Advance(time.Millisecond)
	}
}

func TestClockReject(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	g, fake := start(t, Options{Layout: small(), ClockPolicy: ClockReject, Logger: slog.New(rec)})
	last := next(t, g)
	fake.Advance(-10 * time.Millisecond)
	for range 3 {
		_, err := g.Next()
		require.ErrorIs(t, err, ErrClockBackwards)
		assert.Contains(t, err.Error(), "the clock is 10ms behind its latest reading (policy reject)")
	}
	assert.Equal(t, idkit.Stats{ClockBackward: 1, Rejected: 3}, g.Stats())
	assert.Equal(t, []string{"snowflake: wall clock moved backwards"}, rec.messages(slog.LevelWarn), "one record per anomaly")

	fake.Advance(11 * time.Millisecond) // back in the next tick
	id := next(t, g)
	assert.Greater(t, id, last)
	assert.Equal(t, []string{"snowflake: wall clock caught up"}, rec.messages(slog.LevelInfo))
}

func TestClockWait(t *testing.T) {
	t.Parallel()
	g, fake := start(t, Options{Layout: small(), ClockPolicy: ClockWait})
	last := next(t, g)
	fake.Advance(-3 * time.Millisecond)
	id, err := nextAfterWait(t, g, fake, func() { fake.Advance(3 * time.Millisecond) })
	require.NoError(t, err)
	assert.Greater(t, id, last)
	assert.Equal(t, idkit.Stats{ClockBackward: 1, Waits: 1}, g.Stats())

	fake.Advance(-11 * time.Millisecond) // beyond the default 10 ms
	_, err = g.Next()
	require.ErrorIs(t, err, ErrClockBackwards)
	assert.Contains(t, err.Error(), "11ms behind its latest reading (policy wait, tolerance 10ms)")

	fake.Advance(2 * time.Millisecond) // 9 ms behind: within tolerance now
	id2, err := nextAfterWait(t, g, fake, func() { fake.Advance(9 * time.Millisecond) })
	require.NoError(t, err)
	assert.Greater(t, id2, id)
	assert.Equal(t, idkit.Stats{ClockBackward: 2, Waits: 2, Rejected: 1}, g.Stats())
}

func TestClockContinue(t *testing.T) {
	t.Parallel()
	g, fake := start(t, Options{Layout: small(), ClockPolicy: ClockContinue, MaxContinue: 20 * time.Millisecond})
	ids := take(t, g, 2)
	fake.Advance(-15 * time.Millisecond)
	ids = append(ids, take(t, g, 2)...)
	for _, id := range ids {
		assert.Equal(t, time.Millisecond, tick(t, g, id), "IDs continue on the last tick")
	}
	assert.Equal(t, int64(3), parts(t, g, ids[3]).Sequence)
	// The tick runs out: ExhaustWait waits for the tick after the last one.
	id, err := nextAfterWait(t, g, fake, func() { fake.Advance(16 * time.Millisecond) })
	require.NoError(t, err)
	ids = append(ids, id)
	assert.Equal(t, 2*time.Millisecond, tick(t, g, id))

	fake.Advance(-25 * time.Millisecond)
	_, err = g.Next()
	require.ErrorIs(t, err, ErrClockBackwards)
	assert.Contains(t, err.Error(), "25ms behind its latest reading (policy continue, tolerance 20ms)")
	requireIncreasing(t, ids)
	assert.Equal(t, idkit.Stats{ClockBackward: 2, Waits: 1, Rejected: 1, Exhausted: 1}, g.Stats())
}

func TestClockContinueWithoutLimit(t *testing.T) {
	t.Parallel()
	g, fake := start(t, Options{Layout: small(), ClockPolicy: ClockContinue})
	last := next(t, g)
	fake.Advance(-time.Hour)
	id := next(t, g)
	assert.Greater(t, id, last)
	assert.Equal(t, time.Millisecond, tick(t, g, id))
}

// The seed's hybrid: wait below 5 ms, continue below 100 ms, fail beyond.
func TestClockHybrid(t *testing.T) {
	t.Parallel()
	g, fake := start(t, Options{Layout: small()})
	ids := []ID{next(t, g)}

	fake.Advance(-4 * time.Millisecond)
	id, err := nextAfterWait(t, g, fake, func() { fake.Advance(4 * time.Millisecond) })
	require.NoError(t, err)
	ids = append(ids, id)

	fake.Advance(-50 * time.Millisecond)
	ids = append(ids, next(t, g))
	assert.Equal(t, time.Millisecond, tick(t, g, ids[2]), "continues on the last tick")

	fake.Advance(-100 * time.Millisecond) // 150 ms behind
	_, err = g.Next()
	require.ErrorIs(t, err, ErrClockBackwards)
	assert.Contains(t, err.Error(), "150ms behind its latest reading (policy hybrid: waits below 5ms, continues below 100ms)")

	fake.Advance(60 * time.Millisecond) // 90 ms behind: continue again
	ids = append(ids, next(t, g))
	requireIncreasing(t, ids)
	assert.Equal(t, idkit.Stats{ClockBackward: 3, Waits: 1, Rejected: 1}, g.Stats())
}

// A coarse clock that lags the precise one (as the system's may, by about a
// millisecond, right after a slow path moved on by the precise clock) is not
// a clock stepped back.
func TestCoarseLagIsNotABackwardStep(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	rec := &recorder{}
	g, err := New(context.Background(), Options{Layout: small(), Clock: laggingClock{fake, 3 * time.Millisecond},
		ClockPolicy: ClockReject, Logger: slog.New(rec)})
	require.NoError(t, err)
	fake.Advance(time.Millisecond)
	var ids []ID
	for range 10 {
		ids = append(ids, take(t, g, 4)...)
		fake.Advance(time.Millisecond)
	}
	requireIncreasing(t, ids)
	assert.Equal(t, uint64(0), g.Stats().ClockBackward)
	assert.Empty(t, rec.messages(slog.LevelWarn))
}

// laggingClock reads its precise time lag later than its coarse time.
type laggingClock struct {
	*clock.Fake
	lag time.Duration
}

func (c laggingClock) Now() time.Time { return c.Fake.Now().Add(c.lag) }

// The classic bug: a generator that resets its sequence before it checks
// the clock reissues the IDs of the tick the clock stepped back into. Under
// every policy and every step, no ID is issued twice and each is larger than
// the one before.
func TestClockStepBackNeverRepeatsAnID(t *testing.T) {
	t.Parallel()
	steps := []time.Duration{-time.Millisecond, -3 * time.Millisecond, -7 * time.Millisecond,
		-50 * time.Millisecond, -150 * time.Millisecond, -2 * time.Second}
	for _, cp := range []ClockPolicy{ClockHybrid, ClockReject, ClockWait, ClockContinue} {
		for _, ep := range []ExhaustPolicy{ExhaustWait, ExhaustBorrow, ExhaustError} {
			for _, ss := range []SequenceStart{StartZero, StartRandom} {
				t.Run(fmt.Sprintf("%v/%v/%v", cp, ep, ss), func(t *testing.T) {
					t.Parallel()
					g, fake := start(t, Options{Layout: small(), ClockPolicy: cp, ExhaustPolicy: ep,
						SequenceStart: ss, MaxLead: 2 * time.Millisecond})
					var ids []ID
					issue := func(n int) {
						for len(ids) < n {
							id, err := drive(g, fake, time.Millisecond)
							switch {
							case errors.Is(err, ErrClockBackwards):
								fake.Advance(10 * time.Millisecond)
							case errors.Is(err, ErrExhausted):
								fake.Advance(time.Millisecond)
							default:
								require.NoError(t, err)
								ids = append(ids, id)
							}
						}
					}
					for _, step := range steps {
						issue(len(ids) + 6)
						fake.Advance(500 * time.Microsecond)
						issue(len(ids) + 6)
						fake.Advance(step)
						issue(len(ids) + 10)
					}
					requireIncreasing(t, ids)
					requireDistinct(t, ids)
				})
			}
		}
	}
}

// Eight and more goroutines share a generator: every ID is distinct and
// each goroutine's IDs strictly increase. The fake clock moves on whenever
// a caller waits for it.
func TestConcurrentNextDistinctAndIncreasing(t *testing.T) {
	t.Parallel()
	casLayout := Layout{Name: "cas", Epoch: t0.AddDate(-1, 0, 0), Unit: time.Millisecond, TimeBits: 59, Fields: []Field{{"n", 2}}, SequenceBits: 2}
	for _, tt := range []struct {
		name string
		o    Options
	}{
		{"wait", Options{Layout: small()}},
		{"borrow", Options{Layout: small(), ExhaustPolicy: ExhaustBorrow, MaxLead: 5 * time.Millisecond}},
		{"random start", Options{Layout: small(), SequenceStart: StartRandom}},
		{"twitter", Options{Layout: Twitter(), Node: map[string]int64{"worker": 3}}},
		{"compare-and-swap", Options{Layout: casLayout}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, fake := start(t, tt.o)
			if tt.name == "compare-and-swap" {
				require.True(t, g.useCAS, "the layout leaves too little headroom for blind adds")
			}
			stop := moveWhileWaited(fake, time.Millisecond)
			defer stop()
			runConcurrent(t, g, 12, 300)
		})
	}
}

// The same on the system clock, at full speed: the real slow paths (coarse
// clock, precise waits) under contention.
func TestConcurrentNextSystemClock(t *testing.T) {
	t.Parallel()
	g, err := New(context.Background(), Options{Layout: Twitter()})
	require.NoError(t, err)
	n := 20000
	if raceEnabled {
		n = 2000
	}
	runConcurrent(t, g, 8, n)
}

// moveWhileWaited advances fake by step whenever a goroutine sleeps on it,
// and waits for the sleeper to wake before it moves the clock again, until
// the returned stop is called.
func moveWhileWaited(fake *clock.Fake, step time.Duration) (stop func()) {
	var stopped atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			fake.WaitForSleepers(1)
			fake.Advance(step)
			if stopped.Load() {
				return
			}
			fake.WaitForWakes()
		}
	}()
	return func() {
		stopped.Store(true)
		fake.Sleep(step) // wake the mover for its last round
		<-done
	}
}

func runConcurrent(t *testing.T, g *Generator, goroutines, each int) {
	t.Helper()
	results := make([][]ID, goroutines)
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]ID, 0, each)
			for len(ids) < each {
				if i%2 == 1 { // half the goroutines take batches with Fill
					batch := make([]ID, min(1+len(ids)%37, each-len(ids)))
					n, err := g.Fill(batch)
					if err != nil {
						errs <- err
						return
					}
					ids = append(ids, batch[:n]...)
					continue
				}
				id, err := g.Next()
				if err != nil {
					errs <- err
					return
				}
				ids = append(ids, id)
			}
			results[i] = ids
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	var all []ID
	for i, ids := range results {
		require.Len(t, ids, each, "goroutine %d", i)
		requireIncreasing(t, ids)
		all = append(all, ids...)
	}
	requireDistinct(t, all)
	slices.Sort(all)
	assert.Len(t, all, goroutines*each)
}

// Fill takes whole runs of a tick, waits for the next tick as Next does,
// and fails as Next does.
func TestFill(t *testing.T) {
	t.Parallel()
	g, fake := start(t, Options{Layout: small()})
	stop := moveWhileWaited(fake, time.Millisecond)
	ids := make([]ID, 10)
	n, err := g.Fill(ids)
	stop()
	require.NoError(t, err)
	require.Equal(t, 10, n)
	requireIncreasing(t, ids)
	assert.Equal(t, int64(0), parts(t, g, ids[0]).Sequence)
	assert.Equal(t, int64(3), parts(t, g, ids[3]).Sequence, "a tick holds 4")
	assert.Equal(t, tick(t, g, ids[0])+time.Millisecond, tick(t, g, ids[4]))

	e, _ := start(t, Options{Layout: small(), ExhaustPolicy: ExhaustError})
	n, err = e.Fill(make([]ID, 6))
	require.ErrorIs(t, err, ErrExhausted)
	assert.Equal(t, 4, n, "the tick's 4 IDs, then the error")
}

// A layout whose timestamp runs out while a generator runs stops it with
// ErrExpired instead of wrapping.
func TestExpiresWhileRunning(t *testing.T) {
	t.Parallel()
	l := Layout{Name: "brief", Epoch: t0.Add(-5 * time.Second), Unit: time.Second, TimeBits: 3, SequenceBits: 4}
	require.Equal(t, t0.Add(3*time.Second), l.Expires())
	g, fake := start(t, Options{Layout: l})
	id := next(t, g)
	assert.Equal(t, time.Second, tick(t, g, id))
	fake.Advance(2 * time.Second)
	_, err := g.Next()
	require.ErrorIs(t, err, ErrExpired)
	assert.Contains(t, err.Error(), "layout brief expired at")

	fake2 := clock.NewFake(t0.Add(3 * time.Second))
	_, err = New(context.Background(), Options{Layout: l, Clock: fake2})
	require.ErrorIs(t, err, ErrExpired)
	fake2.Set(t0.Add(2 * time.Second)) // the last tick, but no fresh one after it
	_, err = New(context.Background(), Options{Layout: l, Clock: fake2})
	require.ErrorIs(t, err, ErrExpired)
}
