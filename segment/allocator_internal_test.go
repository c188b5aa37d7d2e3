package segment

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// countingStore reserves blocks in memory and records the steps asked.
// With unit set, it rounds each step down to a multiple of unit, at
// least one, as segment/mysqlstore does. When fail is set, it fails the calls for which it returns an error
// (the first call is 1), and when called is set, it says on it that a
// call returns.
type countingStore struct {
	mu     sync.Mutex
	last   int64
	unit   int64
	steps  []int64
	fail   func(call int) error
	called chan int
}

func (s *countingStore) calls() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.steps)
}

func (s *countingStore) ReserveBlock(_ context.Context, _ string, step int64) (Block, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.steps = append(s.steps, step)
	if s.called != nil {
		defer func(n int) { s.called <- n }(len(s.steps))
	}
	if s.fail != nil {
		if err := s.fail(len(s.steps)); err != nil {
			return Block{}, err
		}
	}
	if s.unit > 0 {
		step = max(step/s.unit, 1) * s.unit
	}
	b := Block{First: s.last + 1, Last: s.last + step}
	s.last = b.Last
	return b, nil
}

// inflight returns the reservation in flight, or nil.
func (a *Allocator) inflightFetch() *fetch {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inflight
}

// TestPrefetchAtTenPercent checks that the next block is reserved once a
// tenth of the current one is issued, not before, and that callers then
// do not wait for it.
func TestPrefetchAtTenPercent(t *testing.T) {
	t.Parallel()
	s := &countingStore{}
	a, err := New(context.Background(), Options{Store: s, Tag: "t", Step: 100, MinStep: 100, MaxStep: 100})
	require.NoError(t, err)
	defer a.Close()
	for range 10 {
		_, err := a.Next()
		require.NoError(t, err)
		require.Nil(t, a.inflightFetch(), "a reservation before a tenth of the block is issued")
	}
	id, err := a.Next()
	require.NoError(t, err)
	require.Equal(t, ID(11), id)
	awaitFetch(t, a, s, 2)
	st := a.State()
	assert.True(t, st.Ready)
	assert.Equal(t, Block{First: 101, Last: 200}, func() Block { a.mu.Lock(); defer a.mu.Unlock(); return a.spare.block }())
	for want := ID(12); want <= 200; want++ {
		id, err := a.Next()
		require.NoError(t, err)
		require.Equal(t, want, id)
	}
	assert.Zero(t, a.Stats().Waits, "callers waited although the next block was ready")

	// Fill passing over the trigger starts the reservation too.
	a2, err := New(context.Background(), Options{Store: s, Tag: "t", Step: 100, MinStep: 100, MaxStep: 100})
	require.NoError(t, err)
	defer a2.Close()
	awaitFetch(t, a, s, 4) // a's reservation at ID 111, if it has not ended
	_, err = a2.Fill(make([]ID, 5))
	require.NoError(t, err)
	require.Nil(t, a2.inflightFetch())
	require.Len(t, s.calls(), 4)
	_, err = a2.Fill(make([]ID, 50))
	require.NoError(t, err)
	awaitFetch(t, a2, s, 5)
}

// awaitFetch waits for the reservation that the last call on a started,
// and checks that it made n calls on s in all.
func awaitFetch(t *testing.T, a *Allocator, s *countingStore, n int) {
	t.Helper()
	if f := a.inflightFetch(); f != nil {
		testwait.Recv(t, f.done, "end of the reservation in flight")
		require.NoError(t, f.err)
	}
	require.Len(t, s.calls(), n, "reservations")
}

// issueToPrefetch issues IDs up to the one that starts the reservation of
// the next block.
func issueToPrefetch(t *testing.T, a *Allocator) {
	t.Helper()
	for {
		id, err := a.Next()
		require.NoError(t, err)
		if cur := a.State().Current; int64(id) == cur.First+cur.Len()/10 {
			return
		}
	}
}

// TestAdaptiveStep drives Leaf's rule with a fake clock: a block that
// lasts under 15 minutes doubles the step, one that lasts over 30 halves
// it, one in between keeps it, within MinStep and MaxStep.
func TestAdaptiveStep(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	s := &countingStore{}
	a, err := New(context.Background(), Options{Store: s, Tag: "t", Step: 100, MinStep: 50, MaxStep: 400, Clock: fake})
	require.NoError(t, err)
	defer a.Close()

	// Each step: how long the block before lasted, and the step wanted.
	lasted := []struct {
		d    time.Duration
		want int64
	}{
		{time.Minute, 200},      // busy: double
		{14 * time.Minute, 400}, // still under 15 minutes
		{time.Second, 400},      // capped at MaxStep
		{20 * time.Minute, 400}, // 15 to 30 minutes: keep
		{30 * time.Minute, 400}, // 30 minutes exactly: keep
		{31 * time.Minute, 200}, // quiet: halve
		{2 * time.Hour, 100},
		{2 * time.Hour, 50},
		{2 * time.Hour, 50}, // floored at MinStep
		{15 * time.Minute, 50},
		{0, 100},
	}
	for i, l := range lasted {
		fake.Advance(l.d)
		issueToPrefetch(t, a)
		awaitFetch(t, a, s, i+2)
		assert.Equal(t, l.want, s.calls()[i+1], "block %d, after %v", i+1, l.d)
		assert.Equal(t, l.want, a.State().Step)
	}
}

// TestStepIsTheBlockLength: with a store that rounds steps to a unit of
// its own, the step the allocator reports and doubles is the length of
// the blocks it got, not the step it asked for.
func TestStepIsTheBlockLength(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	s := &countingStore{unit: 300}
	a, err := New(context.Background(), Options{Store: s, Tag: "t", Step: 100, MinStep: 50, MaxStep: 2000, Clock: fake})
	require.NoError(t, err)
	defer a.Close()
	st := a.State()
	assert.Equal(t, int64(300), st.Step, "the first block is one unit, not the step of 100 asked for")
	assert.Equal(t, int64(300), st.LargestStep)

	// Busy blocks double the step from the block's length, up to the
	// largest multiple of the unit within MaxStep.
	for i, want := range []struct{ asked, got int64 }{{600, 600}, {1200, 1200}, {2000, 1800}, {2000, 1800}} {
		fake.Advance(time.Minute)
		issueToPrefetch(t, a)
		awaitFetch(t, a, s, i+2)
		assert.Equal(t, want.asked, s.calls()[i+1], "step asked for block %d", i+1)
		assert.Equal(t, want.got, a.State().Step, "step after block %d", i+1)
	}
	assert.Equal(t, int64(1800), a.State().LargestStep)
}

// TestRetryInBackground: a prefetch that fails is tried again in the
// background, so that a store failing for a moment costs callers no wait.
func TestRetryInBackground(t *testing.T) {
	t.Parallel()
	s := &countingStore{
		fail: func(call int) error {
			if call == 2 || call == 3 {
				return errors.New("leader changed")
			}
			return nil
		},
		called: make(chan int, 10),
	}
	a, err := New(context.Background(), Options{Store: s, Tag: "t", Step: 100, MinStep: 100, MaxStep: 100})
	require.NoError(t, err)
	defer a.Close()
	a.retryBase = time.Millisecond // before any reservation can fail
	require.Equal(t, 1, testwait.Recv(t, s.called, "first reservation"))
	for range 11 {
		_, err := a.Next()
		require.NoError(t, err)
	}
	// The prefetch fails, and so does the first retry; the second one
	// gets the block.
	for want := 2; want <= 4; want++ {
		require.Equal(t, want, testwait.Recv(t, s.called, "reservation or retry"))
	}
	awaitFetch(t, a, s, 4)
	st := a.State()
	assert.True(t, st.Ready)
	assert.Equal(t, uint64(2), a.Stats().StoreErrors)
	for want := ID(12); want <= 200; want++ {
		id, err := a.Next()
		require.NoError(t, err)
		require.Equal(t, want, id)
	}
	assert.Zero(t, a.Stats().Waits)
}

// TestRetryStopsAtClose: Close stops the background retries. The retry
// is due in an hour, so that none fires before Close however slow the
// machine: Close must stop its timer.
func TestRetryStopsAtClose(t *testing.T) {
	t.Parallel()
	s := &countingStore{fail: func(call int) error {
		if call > 1 {
			return errors.New("down")
		}
		return nil
	}, called: make(chan int, 100)}
	a, err := New(context.Background(), Options{Store: s, Tag: "t", Step: 10, MinStep: 10, MaxStep: 10})
	require.NoError(t, err)
	a.retryBase = time.Hour // before any reservation can fail
	testwait.Recv(t, s.called, "first reservation")
	for range 2 {
		_, err := a.Next()
		require.NoError(t, err)
	}
	testwait.Recv(t, s.called, "the prefetch") // it fails
	var retry *time.Timer
	testwait.Until(t, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		retry = a.retry
		return retry != nil
	}, "with a retry due after the failed prefetch")
	require.NoError(t, a.Close())
	a.mu.Lock()
	assert.Nil(t, a.retry)
	a.mu.Unlock()
	assert.False(t, retry.Stop(), "Close stopped the retry's timer")
	assert.Len(t, s.calls(), 2, "no retry ran")
}

// latencyStore is a countingStore whose every reservation takes latency
// on the fake clock.
type latencyStore struct {
	countingStore
	fake    *clock.Fake
	latency time.Duration
}

func (s *latencyStore) ReserveBlock(ctx context.Context, tag string, step int64) (Block, error) {
	s.fake.Advance(s.latency)
	return s.countingStore.ReserveBlock(ctx, tag, step)
}

// TestStepKeepsUpWithABurst: IDs taken at 10 million a second from a
// store that answers in 1 ms. Doubling alone would take seven blocks to
// grow from 1,000 to a block that outlasts a reservation; the rate rule
// sizes the second block to last FetchesPerBlock reservations at once:
// 10M/s x 1 ms x 10 = 100,000, and Leaf's doubling goes on from there.
// Once the burst ends, Leaf's rule shrinks the step again.
func TestStepKeepsUpWithABurst(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))
	s := &latencyStore{fake: fake, latency: time.Millisecond}
	a, err := New(context.Background(), Options{Store: s, Tag: "t", Clock: fake})
	require.NoError(t, err)
	defer a.Close()
	assert.Equal(t, time.Millisecond, a.State().LastFetch)

	// take issues IDs 100 ns apart until the one that starts the next
	// reservation, and waits for that reservation.
	take := func() {
		t.Helper()
		calls := len(s.calls())
		for {
			fake.Advance(100 * time.Nanosecond)
			id, err := a.Next()
			require.NoError(t, err)
			if cur := a.State().Current; int64(id) == cur.First+cur.Len()/10 {
				break
			}
		}
		awaitFetch(t, a, &s.countingStore, calls+1)
		// Use up the rest of the block, as the burst goes on.
		for left := a.State().Left; left > 0; left-- {
			fake.Advance(100 * time.Nanosecond)
			_, err := a.Next()
			require.NoError(t, err)
		}
	}
	take()
	assert.Equal(t, []int64{1000, 100_000}, s.calls(), "the second block lasts ten reservations at the burst's rate")
	take()
	assert.Equal(t, int64(200_000), s.calls()[2], "then Leaf's rule doubles it, as under 15 minutes a block")
	assert.Zero(t, a.Stats().Waits, "no caller waited for a block")
	st := a.State()
	assert.Equal(t, [2]int64{200_000, 3}, [2]int64{st.LargestStep, st.LargestAt}, "the largest step, first in block 3")

	// The burst ends: a block that lasted two hours halves the step.
	fake.Advance(2 * time.Hour)
	for {
		id, err := a.Next()
		require.NoError(t, err)
		if cur := a.State().Current; int64(id) == cur.First+cur.Len()/10 {
			break
		}
	}
	awaitFetch(t, a, &s.countingStore, 4)
	assert.Equal(t, int64(100_000), s.calls()[3], "Leaf's rule shrinks the step; the rate asks for no more")
}
