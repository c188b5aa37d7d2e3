package traceid

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// t0 is half a second into a second, so that small steps stay inside it.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 500_000_000, time.UTC)

// start returns a generator on a fake clock, with the clock already moved to
// the generator's first fresh second, so Next does not wait.
func start(t *testing.T, o Options) (*Generator, *clock.Fake) {
	t.Helper()
	fake := clock.NewFake(t0)
	o.Clock = fake
	g, err := New(context.Background(), o)
	require.NoError(t, err)
	fake.Advance(time.Second)
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

// sec returns the absolute second of id on the test's timeline.
func sec(id ID) int64 { return id.Time(t0.Add(Period / 2)).Unix() }

// keepMoving advances fake by 10 ms again and again, until the returned
// stop is called, so that seconds change under concurrent callers.
func keepMoving(fake *clock.Fake) (stop func()) {
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			default:
				fake.Advance(10 * time.Millisecond)
			}
		}
	}()
	return func() { close(done) }
}

// requireDistinct fails t if ids holds an ID twice. It sorts ids.
func requireDistinct(t *testing.T, ids []ID) {
	t.Helper()
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		require.NotEqual(t, ids[i-1], ids[i], "duplicate ID")
	}
}

func requireIncreasing(t *testing.T, ids []ID) {
	t.Helper()
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Fatalf("IDs not strictly increasing at %d: %d then %d", i, ids[i-1], ids[i])
		}
	}
}

func TestNewRejectsOptions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		o   Options
		msg string
	}{
		{Options{Node: -1}, "Options.Node = -1, want 0 to 65535"},
		{Options{Node: 65536}, "Options.Node = 65536, want 0 to 65535"},
		{Options{ThreadBits: 17}, "Options.ThreadBits = 17, want 0 to 16"},
		{Options{ThreadBits: -1}, "Options.ThreadBits = -1, want 0 to 16"},
		{Options{Lease: -time.Second}, "Options.Lease = -1s, want 1s to 1h"},
		{Options{Lease: 2 * time.Hour}, "Options.Lease = 2h0m0s, want 1s to 1h"},
	} {
		tt.o.Clock = clock.NewFake(t0)
		_, err := New(context.Background(), tt.o)
		require.ErrorIs(t, err, ErrInvalid)
		assert.Contains(t, err.Error(), tt.msg)
	}
	_, err := New(context.Background(), Options{Clock: clock.NewFake(time.Unix(-5, 0))})
	require.ErrorIs(t, err, ErrInvalid, "a clock before 1970")
}

func TestIDsAreValidAndIncrease(t *testing.T) {
	t.Parallel()
	for _, tb := range []int{0, 1, 10, 16} {
		g, fake := start(t, Options{Node: 65535, ThreadBits: tb})
		var ids []ID
		for range 3 {
			ids = append(ids, take(t, g, 200)...)
			fake.Advance(700 * time.Millisecond)
		}
		requireIncreasing(t, ids)
		for _, id := range ids {
			require.Greater(t, int64(id), int64(0))
			p, err := Decode(id, tb)
			require.NoError(t, err, "T=%d", tb)
			assert.Equal(t, 65535, p.Node)
		}
		assert.Equal(t, t0.Unix()+1, sec(ids[0]), "the first ID is in the first fresh second")
		assert.Equal(t, fake.Now().Add(-700*time.Millisecond).Unix(), sec(ids[len(ids)-1]))
	}
}

func TestConcurrentNextDistinct(t *testing.T) {
	t.Parallel()
	const goroutines = 8
	perGoroutine := 200_000
	if raceEnabled || testing.Short() {
		perGoroutine = 10_000
	}
	g, fake := start(t, Options{Node: 3, ThreadBits: 4})
	stop := keepMoving(fake) // seconds change under the callers
	results := make([][]ID, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]ID, 0, perGoroutine)
			for range perGoroutine {
				id, err := g.Next()
				if err != nil {
					t.Error(err)
					return
				}
				ids = append(ids, id)
			}
			results[i] = ids
		}()
	}
	wg.Wait()
	stop()
	var all []ID
	for _, ids := range results {
		requireIncreasing(t, ids)
		all = append(all, ids...)
	}
	require.Len(t, all, goroutines*perGoroutine)
	requireDistinct(t, all)
}

func TestConcurrentMixedCallersDistinct(t *testing.T) {
	t.Parallel()
	n := 100_000
	if raceEnabled || testing.Short() {
		n = 5_000
	}
	g, fake := start(t, Options{Node: 9, ThreadBits: 8})
	var mu sync.Mutex
	var all []ID
	collect := func(ids []ID) {
		mu.Lock()
		all = append(all, ids...)
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for i := range 9 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]ID, 0, n)
			switch i % 3 {
			case 0:
				for range n {
					ids = append(ids, next(t, g))
				}
			case 1:
				s := g.Shard()
				for range n {
					id, err := s.Next()
					require.NoError(t, err)
					ids = append(ids, id)
				}
			case 2:
				buf := make([]ID, 1000)
				for len(ids) < n {
					k, err := g.Fill(buf)
					require.NoError(t, err)
					ids = append(ids, buf[:k]...)
				}
			}
			requireIncreasing(t, ids)
			collect(ids)
		}()
		if i == 4 {
			fake.Advance(time.Second)
		}
	}
	wg.Wait()
	requireDistinct(t, all)
}

// exhaust uses up every ID of the current second but the last, with Fill.
func exhaust(t *testing.T, g *Generator, threadBits int) {
	t.Helper()
	perSecond := 1<<threadBits*(1<<(LowBits-threadBits)-1) - 1
	buf := make([]ID, 1<<16)
	for perSecond > 0 {
		k, err := g.Fill(buf[:min(len(buf), perSecond)])
		require.NoError(t, err)
		perSecond -= k
	}
}

func TestExhaustedWaitsForNextSecond(t *testing.T) {
	t.Parallel()
	for _, tb := range []int{0, 16} {
		g, fake := start(t, Options{ThreadBits: tb})
		exhaust(t, g, tb)
		last := next(t, g)
		p, err := Decode(last, tb)
		require.NoError(t, err)
		assert.Equal(t, 1<<tb-1, p.Thread, "the last ID of a second has the top thread")
		assert.Equal(t, 1<<(LowBits-tb)-1, p.Counter, "and the top counter")

		got := make(chan ID)
		go func() {
			id, err := g.Next()
			assert.NoError(t, err)
			got <- id
		}()
		testwait.Sleepers(t, fake, 1)
		select {
		case id := <-got:
			t.Fatalf("Next returned %d in an exhausted second", id)
		default:
		}
		fake.Advance(time.Second)
		id := testwait.Recv(t, got, "the result")
		assert.Equal(t, sec(last)+1, sec(id))
		assert.Greater(t, id, last)
		assert.Equal(t, idkit.Stats{Waits: 1, Exhausted: 1}, g.Stats())
	}
}

func TestExhaustedNoWait(t *testing.T) {
	t.Parallel()
	g, fake := start(t, Options{NoWait: true})
	exhaust(t, g, 0)
	last := next(t, g)
	_, err := g.Next()
	require.ErrorIs(t, err, ErrExhausted)
	_, err = g.Fill(make([]ID, 3))
	require.ErrorIs(t, err, ErrExhausted)
	_, err = g.Shard().Next()
	require.ErrorIs(t, err, ErrExhausted)
	assert.Equal(t, idkit.Stats{Exhausted: 1}, g.Stats())

	fake.Advance(time.Second)
	id := next(t, g)
	assert.Equal(t, sec(last)+1, sec(id))
}

func TestFreshGeneratorWaitsForFreshSecond(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	g, err := New(context.Background(), Options{Clock: fake, NoWait: true})
	require.NoError(t, err)
	_, err = g.Next()
	require.ErrorIs(t, err, ErrExhausted, "nothing in the second the generator was created in")

	g, err = New(context.Background(), Options{Clock: fake})
	require.NoError(t, err)
	got := make(chan ID)
	go func() { got <- next(t, g) }()
	testwait.Sleepers(t, fake, 1)
	require.True(t, g.mu.TryLock(), "the mutex is held across the sleep")
	g.mu.Unlock()
	fake.Advance(time.Second)
	assert.Equal(t, t0.Unix()+1, sec(testwait.Recv(t, got, "the ID")))
}

// TestNoLockAcrossTheStore: while the store is slow to lease the next
// second, the generator's mutex is free; the ID comes once it answered.
func TestNoLockAcrossTheStore(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	store := memstore.NewGated(4)
	g, err := New(context.Background(), Options{Clock: fake, Store: store})
	require.NoError(t, err)
	fake.Advance(time.Second)
	got := make(chan ID)
	go func() { got <- next(t, g) }()
	testwait.Recv(t, store.Entered, "the lease's write")
	require.True(t, g.mu.TryLock(), "the mutex is held across the store call")
	g.mu.Unlock()
	close(store.Release)
	assert.Equal(t, t0.Unix()+1, sec(testwait.Recv(t, got, "the ID once the store answered")))
	require.NoError(t, g.Close())
}

// NextContext's and FillContext's waits, for the store and for the next
// second, end with their context, with its error rather than ErrStore; the
// generator serves the next caller as before.
func TestContextEndsTheWait(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	store := memstore.NewGated(4)
	g, err := New(context.Background(), Options{Clock: fake, Store: store})
	require.NoError(t, err)
	fake.Advance(time.Second)
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
	assert.Equal(t, t0.Unix()+1, sec(next(t, g)), "the next caller leases the second")
	require.NoError(t, g.Close())

	g, fake = start(t, Options{})
	exhaust(t, g, 0)
	last := next(t, g)
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		_, err := g.NextContext(ctx)
		errs <- err
	}()
	go func() {
		n, err := g.FillContext(ctx, make([]ID, 5))
		assert.Zero(t, n, "IDs of an exhausted second")
		errs <- err
	}()
	testwait.Sleepers(t, fake, 2)
	cancel()
	for range 2 {
		assert.ErrorIs(t, testwait.Recv(t, errs, "the return once the context ended"), context.Canceled)
	}
	fake.Advance(time.Second)
	assert.Equal(t, sec(last)+1, sec(next(t, g)))
	assert.Equal(t, uint64(2), g.Stats().Waits)
}

func TestClockSteppedBack(t *testing.T) {
	t.Parallel()
	for _, step := range []time.Duration{time.Millisecond, time.Second, 10 * time.Second, time.Hour} {
		t.Run(step.String(), func(t *testing.T) {
			t.Parallel()
			g, fake := start(t, Options{Node: 1, ThreadBits: 6})
			fake.Set(t0.Add(time.Second).Truncate(time.Second).Add(500 * time.Microsecond))
			shard := g.Shard()
			before := append(take(t, g, 100), must(shard.Next()))
			lastSec := sec(before[len(before)-2])

			fake.Advance(-step)
			var after []ID
			for range 3 {
				after = append(after, take(t, g, 100)...)
				after = append(after, must(shard.Next()))
				fake.Advance(step / 4)
			}
			for _, id := range after {
				assert.Equal(t, lastSec, sec(id), "IDs continue under the last second")
			}
			assert.Equal(t, uint64(1), g.Stats().ClockBackward)

			fake.Advance(step) // past where the clock was
			after = append(after, take(t, g, 10)...)
			assert.Equal(t, fake.Now().Unix(), sec(after[len(after)-1]))

			var fromNext []ID
			for _, id := range append(before, after...) {
				if p, _ := Decode(id, 6); p.Thread == 0 { // Next's chunk; the shard's is apart
					fromNext = append(fromNext, id)
				}
			}
			requireIncreasing(t, fromNext)
			all := append(before, after...)
			slices.Sort(all)
			assert.Len(t, slices.Compact(all), len(before)+len(after), "no duplicates")
		})
	}
}

func must(id ID, err error) ID {
	if err != nil {
		panic(err)
	}
	return id
}

func TestClockBackwardLoggedOnce(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	g, fake := start(t, Options{Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	take(t, g, 5)
	fake.Advance(-3 * time.Second)
	take(t, g, 50)
	fake.Advance(-time.Second) // a second step while still behind
	take(t, g, 50)
	fake.Advance(5 * time.Second)
	take(t, g, 5)

	out := buf.String()
	assert.Equal(t, 1, strings.Count(out, "wall clock behind"), out)
	assert.Equal(t, 1, strings.Count(out, "wall clock caught up"), out)
	assert.Equal(t, uint64(1), g.Stats().ClockBackward)

	fake.Advance(-2 * time.Second) // a new episode
	take(t, g, 5)
	assert.Equal(t, uint64(2), g.Stats().ClockBackward)
	assert.Equal(t, 2, strings.Count(buf.String(), "wall clock behind"))
}

// A coarse reading that lags the precise clock right after a slow path moved
// to a new second is not a step backwards.
func TestCoarseLagIsNotBackward(t *testing.T) {
	t.Parallel()
	precise, coarse := clock.NewFake(t0), clock.NewFake(t0)
	g, err := New(context.Background(), Options{Clock: lagClock{precise, coarse}})
	require.NoError(t, err)
	precise.Advance(time.Second) // coarse still reads the creation second
	ids := take(t, g, 10)
	assert.Equal(t, t0.Unix()+1, sec(ids[0]), "the slow path used the precise clock")
	assert.Zero(t, g.Stats().ClockBackward)
}

// lagClock is a fake clock whose coarse view is a second fake that the
// test moves: the coarse reading lags the precise one for as long as the
// test wants, as the real coarse clock may for a moment.
type lagClock struct {
	*clock.Fake
	coarse *clock.Fake
}

func (c lagClock) Coarse() clock.Coarse { return c.coarse.Coarse() }

func TestWrapAcrossPeriod(t *testing.T) {
	t.Parallel()
	wrap := time.Unix(56*(1<<25), 0) // a multiple of 2^25 seconds: the second field is 0
	fake := clock.NewFake(wrap.Add(-2*time.Second + 500*time.Millisecond))
	g, err := New(context.Background(), Options{Clock: fake})
	require.NoError(t, err)
	fake.Advance(time.Second)
	before := take(t, g, 3)
	fake.Advance(time.Second)
	after := take(t, g, 3)

	assert.Equal(t, 1<<25-1, before[0].Second())
	assert.Equal(t, 0, after[0].Second())
	assert.Less(t, after[0], before[0], "the period wraps to the bottom of the domain")
	for _, id := range append(before, after...) {
		assert.Greater(t, int64(id), int64(0))
	}
	ref := fake.Now()
	assert.Equal(t, wrap.Add(-time.Second).Unix(), before[0].Time(ref).Unix())
	assert.Equal(t, wrap.Unix(), after[0].Time(ref).Unix())
	assert.Equal(t, wrap.Add(-time.Second).Unix(), before[2].Time(wrap.Add(-time.Second)).Unix())
}

func TestRestartSameSecond(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	first, err := New(context.Background(), Options{Node: 4, Clock: fake})
	require.NoError(t, err)
	fake.Advance(time.Second)
	issued := take(t, first, 1000) // then abandoned mid-second

	fake.Advance(100 * time.Millisecond)
	second, err := New(context.Background(), Options{Node: 4, Clock: fake, NoWait: true})
	require.NoError(t, err)
	_, err = second.Next()
	require.ErrorIs(t, err, ErrExhausted, "nothing in the second the first run used")
	fake.Advance(time.Second)
	again := take(t, second, 1000)
	assert.Greater(t, again[0], issued[len(issued)-1])
	for _, id := range again {
		assert.NotContains(t, issued, id)
	}
}

func TestRestartAfterClockSteppedBackWithStore(t *testing.T) {
	t.Parallel()
	store := &memstore.Store{}
	fake := clock.NewFake(t0)
	first, err := New(context.Background(), Options{Node: 4, Clock: fake, Store: store})
	require.NoError(t, err)
	var issued []ID
	for range 3 {
		fake.Advance(time.Second)
		issued = append(issued, take(t, first, 500)...)
	}
	// The run ends with its renewal done, so that the mark stays put: one
	// in flight may or may not have moved it a second further.
	require.NoError(t, first.Close())
	mark, err := store.HighWater(context.Background(), "traceid/node/4")
	require.NoError(t, err)
	require.GreaterOrEqual(t, mark.Unix(), sec(issued[len(issued)-1]), "the mark covers every second issued")

	// The process is gone; the clock is stepped back 5 s before the next run.
	fake.Advance(-5 * time.Second)
	second, err := New(context.Background(), Options{Node: 4, Clock: fake, Store: store})
	require.NoError(t, err)
	got := make(chan []ID)
	go func() { got <- take(t, second, 2000) }()
	// The new run sleeps until the clock leaves the mark's second.
	for fake.Now().Unix() <= mark.Unix() {
		testwait.Sleepers(t, fake, 1)
		fake.Advance(time.Second)
	}
	again := testwait.Recv(t, got, "the IDs once the clock passed the mark")
	seen := make(map[ID]bool, len(issued))
	for _, id := range issued {
		seen[id] = true
	}
	for _, id := range again {
		require.False(t, seen[id], "ID %d issued by both runs", id)
	}
	assert.Greater(t, sec(again[0]), mark.Unix(), "the new run starts after the leased seconds")
}

func TestRestartWithoutStoreAfterStepBackWouldRepeat(t *testing.T) {
	t.Parallel()
	// The store is what makes the stepped-back restart safe: without it the
	// second run starts in a second the first already used.
	fake := clock.NewFake(t0)
	first, err := New(context.Background(), Options{Clock: fake})
	require.NoError(t, err)
	fake.Advance(time.Second)
	issued := take(t, first, 10)
	fake.Advance(-5 * time.Second)
	second, err := New(context.Background(), Options{Clock: fake})
	require.NoError(t, err)
	fake.Set(t0.Add(time.Second))
	assert.Equal(t, issued[0], next(t, second))
}

func TestStoreLeaseRenewal(t *testing.T) {
	t.Parallel()
	store := &memstore.Store{}
	g, fake := start(t, Options{Store: store, Lease: 4 * time.Second})
	for range 10 {
		take(t, g, 10)
		fake.Advance(time.Second)
	}
	testwait.Until(t, g.lease.Idle, "the background lease renewal to end")
	mark, err := store.HighWater(context.Background(), "traceid/node/0")
	require.NoError(t, err)
	lastSec := fake.Now().Unix() - 1
	assert.GreaterOrEqual(t, mark.Unix(), lastSec, "the mark covers every second issued")
	assert.LessOrEqual(t, mark.Unix(), lastSec+4, "and leases no more than the lease ahead")
	assert.Less(t, store.Calls(), 10, "renewals are batched by the lease, not one per second")
}

func TestStoreFailureStopsIssuing(t *testing.T) {
	t.Parallel()
	store := &memstore.Store{}
	g, fake := start(t, Options{Store: store})
	take(t, g, 3)
	boom := errors.New("disk full")
	store.Fail(boom)
	fake.Advance(3 * time.Second) // past the lease
	_, err := g.Next()
	require.ErrorIs(t, err, ErrStore)
	require.ErrorIs(t, err, boom)
	_, err = g.Fill(make([]ID, 2))
	require.ErrorIs(t, err, ErrStore)

	store.Fail(nil)
	id := next(t, g)
	assert.Equal(t, fake.Now().Unix(), sec(id))

	store.Fail(boom)
	_, err = New(context.Background(), Options{Store: store, Clock: fake})
	require.ErrorIs(t, err, ErrStore)
}

func TestFill(t *testing.T) {
	t.Parallel()
	for _, tb := range []int{0, 3, 16} {
		g, _ := start(t, Options{Node: 2, ThreadBits: tb})
		a := next(t, g)
		buf := make([]ID, 100_000)
		n, err := g.Fill(buf)
		require.NoError(t, err)
		require.Equal(t, len(buf), n)
		b := next(t, g)
		ids := append(append([]ID{a}, buf...), b)
		requireIncreasing(t, ids)
		for _, id := range ids {
			_, err := Decode(id, tb)
			require.NoError(t, err, "T=%d", tb)
		}
		n, err = g.Fill(nil)
		assert.NoError(t, err)
		assert.Zero(t, n)
	}
}

func TestShardsClaimDistinctThreads(t *testing.T) {
	t.Parallel()
	g, fake := start(t, Options{Node: 5, ThreadBits: 4})
	a, b := g.Shard(), g.Shard()
	idA, idB := must(a.Next()), must(b.Next())
	pa, _ := Decode(idA, 4)
	pb, _ := Decode(idB, 4)
	assert.NotEqual(t, pa.Thread, pb.Thread)
	assert.Equal(t, 1, pa.Counter)

	// A shard uses up its chunk, then claims the next free thread.
	ids := []ID{idA}
	for range 1<<18 - 2 {
		ids = append(ids, must(a.Next()))
	}
	requireIncreasing(t, ids)
	p, _ := Decode(ids[len(ids)-1], 4)
	assert.Equal(t, 1<<18-1, p.Counter)
	p, _ = Decode(must(a.Next()), 4)
	assert.Equal(t, 2, p.Thread, "threads 0 and 1 are taken")

	// In a new second the shard starts a new chunk.
	fake.Advance(time.Second)
	id := must(a.Next())
	assert.Equal(t, fake.Now().Unix(), sec(id))
}

// Waiting out a mark leased by an earlier run is not a clock anomaly.
func TestWaitingForMarkIsNotBackward(t *testing.T) {
	t.Parallel()
	store := &memstore.Store{}
	fake := clock.NewFake(t0)
	_, err := store.AdvanceHighWater(context.Background(), "traceid/node/0", t0.Add(3*time.Second))
	require.NoError(t, err)
	g, err := New(context.Background(), Options{Clock: fake, Store: store})
	require.NoError(t, err)
	got := make(chan ID)
	go func() { got <- next(t, g) }()
	for range 4 {
		testwait.Sleepers(t, fake, 1)
		fake.Advance(time.Second)
	}
	id := testwait.Recv(t, got, "the result")
	assert.Equal(t, t0.Unix()+4, sec(id), "the first second after the mark")
	assert.Zero(t, g.Stats().ClockBackward)
}
