package flake128

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// newTest returns a generator of worker 7 on a fake clock at t0, with a
// store, so that its first ID comes at once in t0's next millisecond.
func newTest(t *testing.T, o Options) (*Generator, *clock.Fake, *memstore.Store) {
	t.Helper()
	fake := clock.NewFake(t0)
	store := &memstore.Store{}
	o.Worker = 7
	o.Clock = fake
	if o.Store == nil {
		o.Store = store
	}
	g, err := New(context.Background(), o)
	require.NoError(t, err)
	return g, fake, store
}

func next(t *testing.T, g *Generator) ID {
	t.Helper()
	id, err := g.Next()
	require.NoError(t, err)
	return id
}

func TestSequenceAndMilliseconds(t *testing.T) {
	t.Parallel()
	g, fake, _ := newTest(t, Options{})
	ms := uint64(t0.UnixMilli()) + 1
	for seq := range 5 {
		id := next(t, g)
		assert.Equal(t, ms, id.Milliseconds(), "a run starts after the millisecond it was made in")
		assert.Equal(t, uint16(seq), id.Sequence())
		assert.Equal(t, uint64(7), id.Worker())
	}
	fake.Advance(5 * time.Millisecond)
	id := next(t, g)
	assert.Equal(t, ms+4, id.Milliseconds(), "the clock's millisecond")
	assert.Equal(t, uint16(0), id.Sequence(), "a new millisecond starts at sequence 0, as Boundary's flake does")
}

func TestClockSteppedBack(t *testing.T) {
	t.Parallel()
	g, fake, _ := newTest(t, Options{})
	fake.Advance(10 * time.Millisecond)
	a := next(t, g)
	fake.Advance(-5 * time.Second)
	b := next(t, g)
	assert.Equal(t, 1, b.Compare(a), "IDs keep increasing on a clock stepped back")
	assert.Equal(t, a.Milliseconds(), b.Milliseconds(), "they continue the last millisecond")
	assert.Equal(t, a.Sequence()+1, b.Sequence())
}

func TestExhaustedMillisecondRunsAheadThenWaits(t *testing.T) {
	t.Parallel()
	g, fake, _ := newTest(t, Options{MaxLead: time.Millisecond})
	first := next(t, g)
	ms := first.Milliseconds() // t0+1 ms, the clock reads t0
	prev := first
	// The first millisecond after the clock's is within MaxLead of it.
	for range MaxSequence {
		id := next(t, g)
		require.Equal(t, 1, id.Compare(prev))
		prev = id
	}
	assert.Equal(t, ms, prev.Milliseconds())
	assert.Equal(t, uint16(MaxSequence), prev.Sequence())

	done := make(chan ID)
	go func() { id, _ := g.Next(); done <- id }()
	testwait.Sleepers(t, fake, 1) // its sequence ran out; t0+2 ms is beyond MaxLead: Next waits for the clock
	require.True(t, g.mu.TryLock(), "the mutex is held across the sleep")
	g.mu.Unlock()
	select {
	case <-done:
		t.Fatal("Next issued an ID beyond MaxLead")
	default:
	}
	fake.Advance(time.Millisecond)
	id := testwait.Recv(t, done, "ID once the clock moved")
	assert.Equal(t, ms+1, id.Milliseconds(), "the next millisecond, ahead of the clock by MaxLead")
	assert.Equal(t, uint16(0), id.Sequence())
}

// TestNoLockAcrossTheStore: while the store is slow to take the lease,
// the generator's mutex is free, and Close waits for nothing once the
// write is done.
func TestNoLockAcrossTheStore(t *testing.T) {
	t.Parallel()
	store := memstore.NewGated(4)
	g, _, _ := newTest(t, Options{Store: store})
	done := make(chan error)
	go func() { _, err := g.Next(); done <- err }()
	testwait.Recv(t, store.Entered, "the lease's write")
	require.True(t, g.mu.TryLock(), "the mutex is held across the store call")
	g.mu.Unlock()
	close(store.Release)
	require.NoError(t, testwait.Recv(t, done, "Next once the store answered"))
	require.NoError(t, g.Close())
}

// TestContextEndsTheWait: NextContext's and FillContext's wait for the
// store ends with their context, with its error rather than ErrStore.
func TestContextEndsTheWait(t *testing.T) {
	t.Parallel()
	store := memstore.NewGated(4)
	g, _, _ := newTest(t, Options{Store: store})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() { _, err := g.NextContext(ctx); errs <- err }()
	go func() {
		n, err := g.FillContext(ctx, make([]ID, 3))
		assert.Zero(t, n)
		errs <- err
	}()
	testwait.Recv(t, store.Entered, "the lease's write")
	cancel()
	for range 2 {
		err := testwait.Recv(t, errs, "the return once the context ended")
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, ErrStore, "the caller gave up, not the store")
	}
	close(store.Release)
	_, err := g.Next()
	require.NoError(t, err, "the next caller leases the millisecond")
	assert.Equal(t, uint64(1), g.Stats().StoreWrites)
	require.NoError(t, g.Close())
}

// TestFill: Fill gives increasing IDs, as many as dst holds, continuing
// Next; on error it returns how many it gave.
func TestFill(t *testing.T) {
	t.Parallel()
	g, fake, store := newTest(t, Options{})
	prev := next(t, g)
	dst := make([]ID, 1000)
	n, err := g.Fill(dst)
	require.NoError(t, err)
	require.Equal(t, len(dst), n)
	for _, id := range dst {
		require.Equal(t, 1, id.Compare(prev))
		prev = id
	}
	// Past the leased milliseconds with the store down, Fill stops with
	// the error and the count it reached.
	store.Fail(errors.New("down"))
	fake.Advance(time.Hour)
	n, err = g.Fill(dst)
	require.ErrorIs(t, err, ErrStore)
	assert.Zero(t, n)
}

func TestClockBehindBeyondMaxWait(t *testing.T) {
	t.Parallel()
	g, fake, _ := newTest(t, Options{MaxLead: time.Millisecond, MaxWait: 100 * time.Millisecond})
	next(t, g)
	fake.Advance(-time.Second)
	var err error
	for i := 0; err == nil && i < 3*(MaxSequence+1); i++ {
		_, err = g.Next()
	}
	require.ErrorIs(t, err, ErrClockBackwards)
	assert.ErrorContains(t, err, "more than MaxWait 100ms")
	fake.Advance(time.Second + time.Millisecond)
	next(t, g) // the clock has caught up with the IDs
}

func TestRestartAfterClockSteppedBack(t *testing.T) {
	t.Parallel()
	store := &memstore.Store{}
	fake := clock.NewFake(t0)
	o := Options{Worker: 9, Clock: fake, Store: store, Lease: 50 * time.Millisecond}
	g, err := New(context.Background(), o)
	require.NoError(t, err)
	var last ID
	for range 20 {
		fake.Advance(3 * time.Millisecond)
		last = next(t, g)
	}
	mark, err := store.HighWater(context.Background(), "flake128/000000000009")
	require.NoError(t, err)
	assert.True(t, mark.After(last.Time()), "the mark %v covers the last ID's millisecond %v", mark, last.Time())

	fake.Advance(-10 * time.Second) // the host's clock is stepped back while no run is up
	g2, err := New(context.Background(), o)
	require.NoError(t, err)
	done := make(chan ID)
	go func() { id, _ := g2.Next(); done <- id }()
	testwait.Sleepers(t, fake, 1)
	fake.Set(mark)
	id := testwait.Recv(t, done, "ID once the clock reached the mark")
	assert.Equal(t, 1, id.Compare(last), "the new run starts after the stored mark")
	assert.False(t, id.Time().Before(mark))
}

func TestRestartWithoutStoreSkipsLead(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	g, err := New(context.Background(), Options{Worker: 3, Clock: fake})
	require.NoError(t, err)
	done := make(chan ID)
	go func() { id, _ := g.Next(); done <- id }()
	testwait.Sleepers(t, fake, 1)
	fake.Advance(time.Millisecond)
	id := testwait.Recv(t, done, "ID once the clock moved")
	assert.Equal(t, uint64(t0.UnixMilli())+11, id.Milliseconds(), "after the run before's possible 10 ms lead")
}

func TestStoreFailure(t *testing.T) {
	t.Parallel()
	store := &memstore.Store{}
	store.Fail(errors.New("disk full"))
	_, err := New(context.Background(), Options{Worker: 1, Clock: clock.NewFake(t0), Store: store})
	assert.ErrorIs(t, err, ErrStore)
	assert.ErrorContains(t, err, "disk full")

	store2 := &memstore.Store{}
	fake := clock.NewFake(t0)
	g, err := New(context.Background(), Options{Worker: 1, Clock: fake, Store: store2, Lease: 2 * time.Millisecond})
	require.NoError(t, err)
	next(t, g)
	store2.Fail(errors.New("disk full"))
	fake.Advance(time.Second)
	_, err = g.Next()
	assert.ErrorIs(t, err, ErrStore, "no ID past the lease without the store")
}

func TestOptionsRejected(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		o   Options
		msg string
	}{
		{Options{Worker: MaxWorker + 1}, "Options.Worker = 281474976710656, want 1 to 281474976710655"},
		{Options{Worker: 1, MaxLead: -1}, "Options.MaxLead = -1ns, want 0 to 1h0m0s"},
		{Options{Worker: 1, MaxWait: 2 * time.Hour}, "Options.MaxWait = 2h0m0s"},
		{Options{Worker: 1, Lease: time.Millisecond}, "Options.Lease = 1ms, want 0 (1s) or 2ms to 1h0m0s"},
		{Options{Interface: "no-such-interface0"}, `Options.Interface "no-such-interface0"`},
		{Options{Worker: 1, Clock: clock.NewFake(time.Unix(-1, 0))}, "before 1970"},
	} {
		_, err := New(context.Background(), tt.o)
		assert.ErrorIs(t, err, ErrInvalid, tt.msg)
		assert.ErrorContains(t, err, tt.msg)
	}
}

func TestConcurrentUnique(t *testing.T) {
	t.Parallel()
	g, fake, _ := newTest(t, Options{})
	const goroutines, each = 8, 5000
	ids := make([][]ID, goroutines)
	var wg sync.WaitGroup
	for k := range goroutines {
		wg.Go(func() {
			for i := range each {
				if i%1000 == 0 && k == 0 {
					fake.Advance(time.Millisecond)
				}
				id, err := g.Next()
				if err != nil {
					t.Error(err)
					return
				}
				ids[k] = append(ids[k], id)
			}
		})
	}
	wg.Wait()
	seen := map[ID]bool{}
	for _, run := range ids {
		for i, id := range run {
			require.False(t, seen[id], "ID %v issued twice", id)
			seen[id] = true
			if i > 0 {
				require.Equal(t, 1, id.Compare(run[i-1]), "one goroutine's IDs increase")
			}
		}
	}
	assert.Len(t, seen, goroutines*each)
}
