package segment_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/segment"
)

func newAllocator(t *testing.T, s segment.BlockStore, o segment.Options) *segment.Allocator {
	t.Helper()
	o.Store = s
	if o.Tag == "" {
		o.Tag = "order"
	}
	a, err := segment.New(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	return a
}

func TestNextDense(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	a := newAllocator(t, s, segment.Options{Step: 10, MinStep: 10, MaxStep: 10})
	for want := segment.ID(1); want <= 1000; want++ {
		got, err := a.Next()
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	st := a.Stats()
	assert.GreaterOrEqual(t, st.StoreWrites, uint64(100))
	assert.Equal(t, int64(10), a.State().Step)
	assert.Zero(t, st.StoreErrors)
}

func TestFillDense(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	a := newAllocator(t, s, segment.Options{Step: 7, MinStep: 7, MaxStep: 7})
	var want segment.ID = 1
	// Sizes below, at and across block ends, and far beyond one block.
	for _, n := range []int{0, 1, 3, 7, 6, 8, 15, 100, 2, 1} {
		dst := make([]segment.ID, n)
		got, err := a.Fill(dst)
		require.NoError(t, err)
		require.Equal(t, n, got)
		for i, got := range dst {
			require.Equal(t, want, got, "Fill(%d)[%d]", n, i)
			want++
		}
		id, err := a.Next()
		require.NoError(t, err)
		require.Equal(t, want, id, "Next after Fill(%d)", n)
		want++
	}
}

// TestConcurrent runs Next and Fill on many goroutines: each one's IDs
// strictly increase, and together they are 1 to N without a gap or a
// repeat, since the store never fails.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	a := newAllocator(t, s, segment.Options{Step: 50, MinStep: 50, MaxStep: 400})
	const workers, rounds = 8, 2000
	got := make([][]segment.ID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			buf := make([]segment.ID, w+1)
			for r := range rounds {
				if r%2 == 0 {
					id, err := a.Next()
					if !assert.NoError(t, err) {
						return
					}
					got[w] = append(got[w], id)
					continue
				}
				if _, err := a.Fill(buf); !assert.NoError(t, err) {
					return
				}
				got[w] = append(got[w], buf...)
			}
		})
	}
	wg.Wait()
	var all []segment.ID
	for w, ids := range got {
		for i := 1; i < len(ids); i++ {
			require.Greater(t, ids[i], ids[i-1], "worker %d: ID %d", w, i)
		}
		all = append(all, ids...)
	}
	slices.Sort(all)
	for i, id := range all {
		require.Equal(t, segment.ID(i+1), id, "IDs together are 1 to %d", len(all))
	}
}

func TestNewFails(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	down := errors.New("connection refused")
	s.fail = down
	_, err := segment.New(context.Background(), segment.Options{Store: s, Tag: "order"})
	assert.ErrorIs(t, err, segment.ErrUnavailable)
	assert.ErrorIs(t, err, down)
	assert.ErrorContains(t, err, `tag "order"`)
	assert.ErrorContains(t, err, "*segment_test.memStore")

	// A context that ended reserves nothing.
	s.fail, s.calls = nil, 0
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = segment.New(ctx, segment.Options{Store: s, Tag: "order"})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, s.calls)
}

// TestStoreDown takes the store down after the first block: the
// allocator issues what its blocks hold, then fails with the store's
// error, then issues again above every ID before once the store is back.
// It never issues an ID outside a block the store returned.
func TestStoreDown(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	a := newAllocator(t, s, segment.Options{Step: 10, MinStep: 10, MaxStep: 10})
	down := errors.New("no route to host")
	s.set(func(m *memStore) { m.fail = down })

	var last segment.ID
	var err error
	for {
		var id segment.ID
		if id, err = a.Next(); err != nil {
			break
		}
		require.Greater(t, id, last)
		last = id
	}
	assert.Equal(t, segment.ID(10), last, "issued the block reserved, nothing more")
	assert.ErrorIs(t, err, segment.ErrUnavailable)
	assert.ErrorIs(t, err, down)
	assert.ErrorContains(t, err, `tag "order"`)
	assert.ErrorContains(t, err, "no route to host")
	dst := make([]segment.ID, 3)
	n, err := a.Fill(dst)
	assert.ErrorIs(t, err, down, "Fill fails alike")
	assert.Zero(t, n)
	assert.Equal(t, make([]segment.ID, 3), dst, "Fill leaves no ID it did not issue")

	s.set(func(m *memStore) { m.fail = nil })
	id, err := a.Next()
	require.NoError(t, err)
	assert.Greater(t, id, last)
	st := a.Stats()
	assert.GreaterOrEqual(t, st.StoreErrors, uint64(2))
	assert.GreaterOrEqual(t, st.Waits, uint64(2))
}

func TestFillPartialOnError(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	a := newAllocator(t, s, segment.Options{Step: 10, MinStep: 10, MaxStep: 10})
	s.set(func(m *memStore) { m.fail = errors.New("down") }) // the prefetch fails
	dst := make([]segment.ID, 25)
	n, err := a.Fill(dst)
	require.ErrorIs(t, err, segment.ErrUnavailable)
	assert.Equal(t, 10, n, "the IDs issued before the error")
	// Only the first block's IDs can have been issued: the prefetch failed.
	for i, id := range dst {
		if i < 10 {
			assert.Equal(t, segment.ID(i+1), id)
		} else {
			assert.Zero(t, id, "dst[%d]", i)
		}
	}
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	a := newAllocator(t, s, segment.Options{Step: 5, MinStep: 5, MaxStep: 5, Timeout: 50 * time.Millisecond})
	s.set(func(m *memStore) { m.gate = make(chan struct{}) }) // never answers
	var err error
	for i := 0; err == nil; i++ {
		require.LessOrEqual(t, i, 5, "issued beyond the first block")
		_, err = a.Next()
	}
	assert.ErrorIs(t, err, segment.ErrUnavailable)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// hangingStore ignores its context and answers only when released.
type hangingStore struct {
	first   bool
	release chan struct{}
	mu      sync.Mutex
}

func (h *hangingStore) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	h.mu.Lock()
	first := !h.first
	h.first = true
	h.mu.Unlock()
	if first {
		return segment.Block{First: 1, Last: step}, nil
	}
	<-h.release
	return segment.Block{}, errors.New("released")
}

func TestTimeoutStoreIgnoresContext(t *testing.T) {
	t.Parallel()
	h := &hangingStore{release: make(chan struct{})}
	a, err := segment.New(context.Background(), segment.Options{Store: h, Tag: "t", Step: 2, MinStep: 2, MaxStep: 2, Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	for range 2 {
		_, err := a.Next()
		require.NoError(t, err)
	}
	_, err = a.Next()
	assert.ErrorIs(t, err, segment.ErrUnavailable)
	assert.ErrorContains(t, err, "no answer within 50ms")
	close(h.release)
	require.NoError(t, a.Close())
}

func TestBadBlock(t *testing.T) {
	t.Parallel()
	for _, bad := range []segment.Block{{First: 5, Last: 12}, {First: 0, Last: 40}, {First: 50, Last: 49}, {First: -3, Last: 5}} {
		t.Run(fmt.Sprint(bad), func(t *testing.T) {
			t.Parallel()
			s := newMemStore()
			a := newAllocator(t, s, segment.Options{Step: 10, MinStep: 10, MaxStep: 10})
			s.set(func(m *memStore) { m.bad = &bad })
			var last segment.ID
			var err error
			for {
				var id segment.ID
				if id, err = a.Next(); err != nil {
					break
				}
				last = id
			}
			assert.Equal(t, segment.ID(10), last)
			assert.ErrorIs(t, err, segment.ErrBadBlock)
		})
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	a := newAllocator(t, s, segment.Options{Step: 10, MinStep: 10, MaxStep: 10})
	s.set(func(m *memStore) { m.gate = make(chan struct{}) }) // reservations hang until cancelled
	for range 5 {
		_, err := a.Next()
		require.NoError(t, err) // the prefetch is in flight now
	}
	require.NoError(t, a.Close(), "cancels the reservation in flight and waits for it")
	_, err := a.Next()
	assert.ErrorIs(t, err, segment.ErrClosed)
	_, err = a.Fill(make([]segment.ID, 1))
	assert.ErrorIs(t, err, segment.ErrClosed)
	assert.NoError(t, a.Close())
	assert.Zero(t, a.State().Current)
}

func TestCloseWakesWaiters(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	a := newAllocator(t, s, segment.Options{Step: 2, MinStep: 2, MaxStep: 2, Timeout: time.Minute})
	s.set(func(m *memStore) { m.gate = make(chan struct{}) })
	for range 2 {
		_, err := a.Next()
		require.NoError(t, err)
	}
	errs := make(chan error)
	go func() {
		_, err := a.Next()
		errs <- err
	}()
	testwait.Until(t, func() bool { return a.Stats().Waits > 0 }, "waiting for the store")
	require.NoError(t, a.Close())
	assert.ErrorIs(t, testwait.Recv(t, errs, "return from the waiting Next"), segment.ErrClosed)
}

// A caller whose context ends stops waiting for a block, with the
// context's error; the reservation goes on and serves the next caller.
func TestContextEndsTheWait(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	a := newAllocator(t, s, segment.Options{Step: 2, MinStep: 2, MaxStep: 2, Timeout: time.Minute})
	gate := make(chan struct{})
	s.set(func(m *memStore) { m.gate = gate })
	for range 2 {
		_, err := a.Next()
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() {
		_, err := a.NextContext(ctx)
		errs <- err
	}()
	go func() {
		n, err := a.FillContext(ctx, make([]segment.ID, 3))
		assert.Zero(t, n)
		errs <- err
	}()
	testwait.Until(t, func() bool { return a.Stats().Waits >= 2 }, "two callers waiting for the store")
	cancel()
	for range 2 {
		err := testwait.Recv(t, errs, "the return once the context ended")
		assert.ErrorIs(t, err, context.Canceled)
		assert.NotErrorIs(t, err, segment.ErrUnavailable)
	}
	close(gate)
	id, err := a.Next()
	require.NoError(t, err)
	assert.Equal(t, segment.ID(3), id, "the block reserved meanwhile serves the next caller")
}

func TestOptionsInvalid(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	for _, tt := range []struct {
		o    segment.Options
		want string
	}{
		{segment.Options{Tag: "t"}, "Options.Store is nil"},
		{segment.Options{Store: s}, `tag "" is 0 bytes, want 1 to 64`},
		{segment.Options{Store: s, Tag: "a b"}, `tag "a b" has byte ' ' at 1`},
		{segment.Options{Store: s, Tag: "t", Step: -1}, "Options.Step = -1, want 1 to 4294967296"},
		{segment.Options{Store: s, Tag: "t", Step: segment.MaxStep + 1}, "Options.Step = 4294967297, want 1 to 4294967296"},
		{segment.Options{Store: s, Tag: "t", MinStep: -5}, "Options.MinStep = -5"},
		{segment.Options{Store: s, Tag: "t", MaxStep: segment.MaxStep * 2}, "Options.MaxStep = 8589934592"},
		{segment.Options{Store: s, Tag: "t", Step: 10, MinStep: 20}, "MinStep, Step, MaxStep = 20, 10, 1000000, want MinStep <= Step <= MaxStep"},
		{segment.Options{Store: s, Tag: "t", Step: 2000, MaxStep: 1500}, "MinStep, Step, MaxStep = 1000, 2000, 1500"},
		{segment.Options{Store: s, Tag: "t", Timeout: -time.Second}, "Options.Timeout = -1s"},
	} {
		_, err := segment.New(context.Background(), tt.o)
		if assert.ErrorIs(t, err, segment.ErrInvalid, tt.want) {
			assert.ErrorContains(t, err, tt.want)
		}
	}
	assert.Zero(t, s.calls, "invalid options reserve nothing")
}

func TestOptionsDefaults(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		step, min, max int64
		wantFirst      int64
	}{
		{0, 0, 0, 1000},
		{10, 0, 0, 10},                   // MinStep becomes 10
		{5_000_000, 0, 0, 5_000_000},     // MaxStep becomes 5e6
		{segment.MaxStep, 0, 0, 1 << 32}, // the largest step
	} {
		s := newMemStore()
		a := newAllocator(t, s, segment.Options{Step: tt.step, MinStep: tt.min, MaxStep: tt.max})
		assert.Equal(t, segment.Block{First: 1, Last: tt.wantFirst}, a.State().Current)
	}
}

func TestAllocs(t *testing.T) {
	s := newMemStore()
	a := newAllocator(t, s, segment.Options{Step: 10_000_000}) // no reservation during the run
	buf := make([]segment.ID, 16)
	allocs := testing.AllocsPerRun(10_000, func() {
		if _, err := a.Next(); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Fill(buf); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

// TestNextFillProperty issues IDs by random calls of Next and Fill, with
// random steps and bounds: one caller's IDs are exactly 1, 2, 3, ...
func TestNextFillProperty(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	for round := range 50 {
		minStep := 1 + r.Int64N(20)
		maxStep := minStep + r.Int64N(100)
		step := minStep + r.Int64N(maxStep-minStep+1)
		a := newAllocator(t, newMemStore(), segment.Options{Step: step, MinStep: minStep, MaxStep: maxStep})
		var want segment.ID = 1
		for range 200 {
			if r.IntN(2) == 0 {
				id, err := a.Next()
				require.NoError(t, err)
				require.Equal(t, want, id, "round %d: steps %d..%d from %d", round, minStep, maxStep, step)
				want++
				continue
			}
			dst := make([]segment.ID, r.IntN(3*int(maxStep)))
			_, err := a.Fill(dst)
			require.NoError(t, err)
			for _, id := range dst {
				require.Equal(t, want, id, "round %d: steps %d..%d from %d", round, minStep, maxStep, step)
				want++
			}
		}
	}
}
