package objectid

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// next is g.Next, which never fails without a context.
func next(t testing.TB, g *Generator) ID {
	id, err := g.Next()
	require.NoError(t, err)
	return id
}

func newFake(t *testing.T) (*Generator, *clock.Fake) {
	t.Helper()
	fake := clock.NewFake(t0)
	return newGenerator(Options{Clock: fake}), fake
}

// setCounter makes the next ID's counter c, starting a new window at it.
func setCounter(g *Generator, c uint32) {
	g.counter.Store(c - 1)
	g.window.Store(g.window.Load()&^(1<<32-1) | uint64(c))
}

func TestNextLayout(t *testing.T) {
	t.Parallel()
	g, fake := newFake(t)
	a := next(t, g)
	b := next(t, g)
	assert.Equal(t, t0, a.Timestamp())
	assert.Equal(t, g.Process(), a.Process())
	assert.Equal(t, g.Process(), b.Process())
	assert.Equal(t, (a.Counter()+1)&MaxCounter, b.Counter(), "the counter counts up by one")

	fake.Advance(1500 * time.Millisecond)
	c := next(t, g)
	assert.Equal(t, t0.Add(time.Second), c.Timestamp())
	assert.Equal(t, (b.Counter()+1)&MaxCounter, c.Counter(), "the counter does not restart with the second")

	other := newGenerator(Options{Clock: fake})
	assert.NotEqual(t, g.Process(), other.Process(), "each generator draws its own process bytes")
}

func TestCounterWrapsAt2To24(t *testing.T) {
	t.Parallel()
	g, _ := newFake(t)
	setCounter(g, MaxCounter-1)
	var counters []uint32
	for range 4 {
		counters = append(counters, next(t, g).Counter())
	}
	assert.Equal(t, []uint32{MaxCounter - 1, MaxCounter, 0, 1}, counters)
}

// A second holds 2^24 IDs, as many as the counter has values; the next ID
// waits for the next second instead of repeating a counter value.
func TestSecondRunsOutAndWaits(t *testing.T) {
	t.Parallel()
	g, fake := newFake(t)
	fake.Advance(300 * time.Millisecond)
	start := uint32(0xabcdef)
	setCounter(g, start)
	g.counter.Store(start + MaxCounter - 2) // as if 2^24-2 IDs had been issued
	last := []ID{next(t, g), next(t, g)}
	assert.Equal(t, (start+MaxCounter-1)&MaxCounter, last[0].Counter())
	assert.Equal(t, (start+MaxCounter)&MaxCounter, last[1].Counter())
	assert.Equal(t, t0, last[1].Timestamp())

	done := make(chan ID)
	go func() { done <- next(t, g) }()
	testwait.Sleepers(t, fake, 1)
	select {
	case id := <-done:
		t.Fatalf("Next returned %v in a used-up second", id)
	default:
	}
	fake.Advance(700 * time.Millisecond)
	id := testwait.Recv(t, done, "ID in the next second")
	assert.Equal(t, t0.Add(time.Second), id.Timestamp())
	assert.NotEqual(t, last[0], id)
}

// The wait for the next second holds no lock, counts in Stats and ends
// with the caller's context.
func TestWaitEndsWithTheContext(t *testing.T) {
	t.Parallel()
	g, fake := newFake(t)
	start := uint32(0x123456)
	setCounter(g, start)
	g.counter.Store(start + MaxCounter) // the second is used up

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() {
		_, err := g.NextContext(ctx)
		done <- err
	}()
	go func() {
		n, err := g.FillContext(ctx, make([]ID, 10))
		assert.Zero(t, n, "FillContext filled IDs in a used-up second")
		done <- err
	}()
	testwait.Sleepers(t, fake, 2)
	require.True(t, g.mu.TryLock(), "the mutex is held across the sleep")
	g.mu.Unlock()
	cancel()
	for range 2 {
		assert.ErrorIs(t, testwait.Recv(t, done, "return once the context ended"), context.Canceled)
	}
	assert.Equal(t, idkit.Stats{Waits: 2}, g.Stats())

	fake.Advance(time.Second)
	assert.Equal(t, t0.Add(time.Second), next(t, g).Timestamp(), "the next second serves again")
	assert.NoError(t, g.Close())
}

// Fill takes the same counter values Next would, and waits like Next when
// a second runs out mid-batch.
func TestFillWaitsLikeNext(t *testing.T) {
	t.Parallel()
	g, fake := newFake(t)
	start := uint32(0x123456)
	setCounter(g, start)
	g.counter.Store(start + MaxCounter - 3) // 3 counter values left in the second
	done := make(chan []ID)
	go func() {
		ids := make([]ID, 10)
		g.Fill(ids)
		done <- ids
	}()
	testwait.Sleepers(t, fake, 1)
	fake.Advance(time.Second)
	ids := testwait.Recv(t, done, "IDs of Fill in the next second")
	seen := map[ID]bool{}
	for i, id := range ids {
		require.False(t, seen[id])
		seen[id] = true
		if i > 0 {
			require.Positive(t, id.Compare(ids[i-1]), "IDs increase")
		}
	}
	assert.Equal(t, t0, ids[0].Timestamp())
	assert.Equal(t, t0.Add(time.Second), ids[9].Timestamp(), "the rest waited for the next second")
}

// The second never moves backwards, so a clock stepped back cannot make a
// second's counter values repeat.
func TestClockStepBackKeepsTheSecond(t *testing.T) {
	t.Parallel()
	g, fake := newFake(t)
	fake.Advance(2 * time.Second)
	a := next(t, g)
	fake.Advance(-90 * time.Second)
	b := next(t, g)
	assert.Equal(t, t0.Add(2*time.Second), b.Timestamp())
	assert.NotEqual(t, a, b)
	fake.Advance(93 * time.Second)
	c := next(t, g)
	assert.Equal(t, t0.Add(5*time.Second), c.Timestamp())
}

// Eight and more goroutines share a generator: every ID is distinct, and
// each goroutine's timestamps never go back.
func TestConcurrentNext(t *testing.T) {
	t.Parallel()
	g, fake := newFake(t)
	setCounter(g, MaxCounter-5000) // wrap the counter during the run
	const goroutines, each = 12, 2000
	results := make([][]ID, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				if i%2 == 1 && j%7 == 0 { // half the goroutines also take batches
					batch := make([]ID, min(j%23+1, each-j))
					g.Fill(batch)
					results[i] = append(results[i], batch...)
					j += len(batch) - 1
					continue
				}
				results[i] = append(results[i], next(t, g))
				if i == 0 && j%500 == 0 {
					fake.Advance(time.Second)
				}
				if j%100 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	seen := make(map[ID]bool, goroutines*each)
	for _, ids := range results {
		require.Len(t, ids, each)
		for j, id := range ids {
			require.False(t, seen[id], "ID %v issued twice", id)
			seen[id] = true
			if j > 0 {
				require.False(t, id.Timestamp().Before(ids[j-1].Timestamp()))
			}
		}
	}
}

func TestPackageNew(t *testing.T) {
	t.Parallel()
	before := time.Now()
	a, b := NewID(), NewID()
	after := time.Now()
	assert.NotEqual(t, a, b)
	assert.Equal(t, a.Process(), b.Process(), "one process, one random value")
	step := (b.Counter() - a.Counter()) & MaxCounter
	assert.True(t, step >= 1 && step <= 100, "the counter steps up (other tests may draw in between): %d", step)
	// The ID's second comes from the system clock's coarse view, which may
	// lag Now by a tick, or by more while a loaded machine starves its
	// ticker: a second of slack below covers that; none above.
	assert.False(t, a.Timestamp().After(after), "%v is after %v", a.Timestamp(), after)
	assert.False(t, a.Timestamp().Before(before.Add(-time.Second).Truncate(time.Second)), "%v is over a second before %v", a.Timestamp(), before)
}
