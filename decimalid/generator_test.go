package decimalid

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// source is a store.Generators for tests: it hands out next, next+1, ...
// and fails with err while err is set.
type source struct {
	mu       sync.Mutex
	next     int
	err      error
	calls    int
	launches []int
	repeat   bool // hand out the same id every time

	// entered, when set, is sent on once a call began; the call then
	// waits until gate is closed or its ctx ends.
	entered chan struct{}
	gate    chan struct{}
}

func (s *source) NextGenerator(ctx context.Context, launch int) (int, error) {
	if s.entered != nil {
		s.entered <- struct{}{}
		select {
		case <-s.gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.launches = append(s.launches, launch)
	if s.err != nil {
		return 0, s.err
	}
	g := s.next
	if !s.repeat {
		s.next++
	}
	return g, nil
}

func (s *source) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

func (s *source) callCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

var errDown = errors.New("source down")

func mustCompose(t *testing.T, counter, generator, launch int) ID {
	t.Helper()
	id, err := Compose(counter, generator, launch)
	require.NoError(t, err)
	return id
}

func TestNewOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    Options
		src  *source
		err  error
		want string
	}{
		{"launch 0", Options{Launch: 0}, &source{}, ErrInvalid, "Options.Launch = 0, want 1 to 99999 (0 is for tests: set Options.TestLaunch)"},
		{"launch -1", Options{Launch: -1}, &source{}, ErrInvalid, "Options.Launch = -1, want 1 to 99999"},
		{"launch too big", Options{Launch: 100_000}, &source{}, ErrInvalid, "Options.Launch = 100000, want 1 to 99999"},
		{"launch too big in tests", Options{Launch: 100_000, TestLaunch: true}, &source{}, ErrInvalid, "Options.Launch = 100000, want 0 to 99999"},
		{"no source", Options{Launch: 1}, nil, ErrInvalid, "Options.Source is nil"},
		{"start counter -1", Options{Launch: 1, StartCounter: -1}, &source{}, ErrInvalid, "Options.StartCounter = -1, want 1 to 922337202"},
		{"start counter too big", Options{Launch: 1, StartCounter: MaxCounter + 1}, &source{}, ErrInvalid, "Options.StartCounter = 922337203, want 1 to 922337202"},
		{"source fails", Options{Launch: 1}, &source{err: errDown}, errDown, "decimalid: generator source failed: launch 1: source down"},
		{"source out of range", Options{Launch: 1}, &source{next: MaxGenerator + 1}, ErrSource, "got generator id 100000, want 0 to 99999"},
		{"source negative", Options{Launch: 1}, &source{next: -1}, ErrSource, "got generator id -1, want 0 to 99999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.src != nil {
				tt.o.Source = tt.src
			}
			g, err := New(context.Background(), tt.o)
			assert.ErrorIs(t, err, tt.err)
			assert.ErrorContains(t, err, tt.want)
			assert.Nil(t, g)
		})
	}
}

func TestNewTestLaunch(t *testing.T) {
	t.Parallel()
	src := &source{next: 3}
	g, err := New(context.Background(), Options{Launch: 0, TestLaunch: true, Source: src})
	require.NoError(t, err)
	id, err := g.Next()
	require.NoError(t, err)
	assert.Equal(t, mustCompose(t, 1, 3, 0), id)
	assert.Equal(t, 0, g.Launch())
	assert.Equal(t, []int{0}, src.launches, "asks the source for launch 0")
}

func TestNext(t *testing.T) {
	t.Parallel()
	src := &source{next: 92}
	g, err := New(context.Background(), Options{Launch: 65, Source: src})
	require.NoError(t, err)
	assert.Equal(t, 65, g.Launch())
	for c := 1; c <= 1000; c++ {
		id, err := g.Next()
		require.NoError(t, err)
		require.Equal(t, mustCompose(t, c, 92, 65), id)
	}
	assert.Equal(t, 1, src.calls, "one generator id at start, none since")
	assert.Equal(t, []int{65}, src.launches)

	g, err = New(context.Background(), Options{Launch: 65, Source: src, StartCounter: 1415})
	require.NoError(t, err)
	id, err := g.Next()
	require.NoError(t, err)
	assert.Equal(t, "1415-00093-00065", id.SplitString())
}

func TestRoll(t *testing.T) {
	t.Parallel()
	src := &source{next: 5}
	g, err := New(context.Background(), Options{Launch: 7, Source: src, StartCounter: MaxCounter - 2})
	require.NoError(t, err)
	want := []ID{
		mustCompose(t, MaxCounter-2, 5, 7),
		mustCompose(t, MaxCounter-1, 5, 7),
		mustCompose(t, MaxCounter, 5, 7),
		mustCompose(t, 1, 6, 7), // new generator id, counter from 1: the ID drops
		mustCompose(t, 2, 6, 7),
	}
	for i, w := range want {
		id, err := g.Next()
		require.NoError(t, err)
		assert.Equal(t, w, id, "ID %d", i)
	}
	assert.Equal(t, 2, src.calls)
	assert.Equal(t, []int{7, 7}, src.launches)
}

func TestRollSourceFails(t *testing.T) {
	t.Parallel()
	src := &source{next: 5}
	g, err := New(context.Background(), Options{Launch: 7, Source: src, StartCounter: MaxCounter - 1})
	require.NoError(t, err)
	for c := MaxCounter - 1; c <= MaxCounter; c++ {
		id, err := g.Next()
		require.NoError(t, err)
		assert.Equal(t, mustCompose(t, c, 5, 7), id)
	}

	src.fail(errDown)
	dst := make([]ID, 4)
	for range 3 {
		calls := src.callCount()
		id, err := g.Next()
		assert.ErrorIs(t, err, ErrSource)
		assert.ErrorIs(t, err, errDown)
		assert.Zero(t, id, "no ID from the used-up range")
		assert.Equal(t, calls+1, src.callCount(), "each call asks the source again")
		n, err := g.Fill(dst)
		assert.ErrorIs(t, err, errDown)
		assert.Zero(t, n)
		assert.Equal(t, calls+2, src.callCount(), "each call asks the source again")
	}

	src.fail(nil)
	id, err := g.Next()
	require.NoError(t, err)
	assert.Equal(t, mustCompose(t, 1, 6, 7), id, "a new range, from counter 1")
}

func TestRollSourceRepeats(t *testing.T) {
	t.Parallel()
	src := &source{next: 5, repeat: true}
	g, err := New(context.Background(), Options{Launch: 7, Source: src, StartCounter: MaxCounter})
	require.NoError(t, err)
	_, err = g.Next()
	require.NoError(t, err)
	id, err := g.Next()
	assert.ErrorIs(t, err, ErrSource)
	assert.ErrorContains(t, err, "got generator id 5 again")
	assert.Zero(t, id)
}

func TestRollSourceOutOfRange(t *testing.T) {
	t.Parallel()
	src := &source{next: MaxGenerator}
	g, err := New(context.Background(), Options{Launch: 7, Source: src, StartCounter: MaxCounter})
	require.NoError(t, err)
	_, err = g.Next()
	require.NoError(t, err)
	_, err = g.Next()
	assert.ErrorIs(t, err, ErrSource)
	assert.ErrorContains(t, err, "got generator id 100000, want 0 to 99999")
}

// TestRollHeadroom fills the counter half of the state word with failed
// calls: without the slow path pulling it back, the adds would carry into
// the generator id.
func TestRollHeadroom(t *testing.T) {
	t.Parallel()
	src := &source{next: 5}
	g, err := New(context.Background(), Options{Launch: 7, Source: src, StartCounter: MaxCounter})
	require.NoError(t, err)
	_, err = g.Next()
	require.NoError(t, err)
	src.fail(errDown)
	g.state.Add(counterMask - MaxCounter - 10) // as if many callers had added past the end
	for range 20 {
		_, err := g.Next()
		require.ErrorIs(t, err, errDown)
	}
	assert.Equal(t, uint64(5), g.state.Load()>>counterBits, "generator id unchanged")
	src.fail(nil)
	id, err := g.Next()
	require.NoError(t, err)
	assert.Equal(t, mustCompose(t, 1, 6, 7), id)
}

func TestFill(t *testing.T) {
	t.Parallel()
	src := &source{next: 5}
	g, err := New(context.Background(), Options{Launch: 7, Source: src})
	require.NoError(t, err)
	for _, size := range []int{0, 1, 10, maxClaim - 1, maxClaim, maxClaim + 1, 3*maxClaim + 5} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			next, err := g.Next()
			require.NoError(t, err)
			dst := make([]ID, size)
			n, err := g.Fill(dst)
			require.NoError(t, err)
			require.Equal(t, size, n)
			for i, id := range dst {
				if want := next + ID(i+1)*counterUnit; id != want {
					t.Fatalf("dst[%d] = %s, want %s", i, id.SplitString(), want.SplitString())
				}
			}
		})
	}
	assert.Equal(t, 1, src.calls)
}

func TestFillRoll(t *testing.T) {
	t.Parallel()
	src := &source{next: 5}
	g, err := New(context.Background(), Options{Launch: 7, Source: src, StartCounter: MaxCounter - 5})
	require.NoError(t, err)
	dst := make([]ID, 10)
	n, err := g.Fill(dst)
	require.NoError(t, err)
	require.Equal(t, 10, n)
	var want []ID
	for c := MaxCounter - 5; c <= MaxCounter; c++ {
		want = append(want, mustCompose(t, c, 5, 7))
	}
	for c := 1; c <= 4; c++ {
		want = append(want, mustCompose(t, c, 6, 7))
	}
	assert.Equal(t, want, dst)

	// A failing source stops a Fill part way, with the IDs it has.
	g, err = New(context.Background(), Options{Launch: 7, Source: src, StartCounter: MaxCounter - 2})
	require.NoError(t, err)
	src.fail(errDown)
	clear(dst)
	n, err = g.Fill(dst)
	assert.ErrorIs(t, err, errDown)
	assert.Equal(t, 3, n)
	assert.Equal(t, []ID{mustCompose(t, MaxCounter-2, 7, 7), mustCompose(t, MaxCounter-1, 7, 7), mustCompose(t, MaxCounter, 7, 7)}, dst[:3])
	assert.Equal(t, make([]ID, 7), dst[3:], "nothing written past n")
}

// concurrentCount is how many IDs each goroutine takes in the concurrency
// tests; the race detector makes them slow.
func concurrentCount() int {
	if raceEnabled || testing.Short() {
		return 2_000
	}
	return 50_000
}

func TestConcurrentNext(t *testing.T) {
	t.Parallel()
	const workers = 8
	per := concurrentCount()
	for _, start := range []int{1, MaxCounter - workers*per/2} {
		t.Run(fmt.Sprint("start ", start), func(t *testing.T) {
			t.Parallel()
			src := &source{next: 5}
			g, err := New(context.Background(), Options{Launch: 7, Source: src, StartCounter: start})
			require.NoError(t, err)
			got := make([][]ID, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ids := make([]ID, 0, per)
					dst := make([]ID, 7)
					for len(ids) < per {
						if w%2 == 1 && len(ids)%10 == 0 {
							n, err := g.Fill(dst)
							if !assert.NoError(t, err) {
								return
							}
							ids = append(ids, dst[:n]...)
							continue
						}
						id, err := g.Next()
						if !assert.NoError(t, err) {
							return
						}
						ids = append(ids, id)
					}
					got[w] = ids
				}()
			}
			wg.Wait()
			checkShardedMonotonic(t, got)
			seen := make(map[ID]bool)
			for _, ids := range got {
				for _, id := range ids {
					require.False(t, seen[id], "ID %s issued twice", id.SplitString())
					seen[id] = true
				}
			}
			total := len(seen)
			rolls := 0
			if start > 1 {
				rolls = 1 // half the IDs come from a second generator id
			}
			assert.Equal(t, 1+rolls, src.callCount(), "one generator id per range, none wasted")
			t.Logf("%d distinct IDs, %d generator ids", total, src.callCount())
		})
	}
}

// checkShardedMonotonic checks that each goroutine's IDs strictly
// increase within a generator id, and that generator ids follow the order
// the source handed them out in (it counts up).
func checkShardedMonotonic(t *testing.T, got [][]ID) {
	t.Helper()
	for w, ids := range got {
		for i := 1; i < len(ids); i++ {
			a, b := ids[i-1], ids[i]
			switch {
			case a.Generator() == b.Generator() && a >= b:
				t.Fatalf("goroutine %d: %s then %s: not increasing", w, a.SplitString(), b.SplitString())
			case a.Generator() > b.Generator():
				t.Fatalf("goroutine %d: %s then %s: back to an older generator id", w, a.SplitString(), b.SplitString())
			}
		}
		assert.True(t, slices.IsSortedFunc(ids, func(a, b ID) int { return a.Generator() - b.Generator() }), "goroutine %d", w)
	}
}

// While the source is slow, one call is in flight: a second caller waits
// for it without holding the mutex, a caller whose context ends returns
// its error, and Close cancels the call.
func TestSlowSource(t *testing.T) {
	t.Parallel()
	src := &source{next: 1}
	g, err := New(context.Background(), Options{Launch: 7, Source: src, StartCounter: MaxCounter})
	require.NoError(t, err)
	_, err = g.Next() // the last counter of generator id 1
	require.NoError(t, err)
	src.entered, src.gate = make(chan struct{}, 4), make(chan struct{})

	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() {
		_, err := g.NextContext(ctx)
		gone <- err
	}()
	testwait.Recv(t, src.entered, "the source called")
	waiter := make(chan error, 1)
	go func() {
		n, err := g.FillContext(context.Background(), make([]ID, 3))
		if err == nil && n != 3 {
			err = fmt.Errorf("filled %d of 3", n)
		}
		waiter <- err
	}()
	require.True(t, g.mu.TryLock(), "the mutex is held across the source call")
	g.mu.Unlock()

	cancel()
	err = testwait.Recv(t, gone, "NextContext's return once its context ended")
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrSource, "the caller gave up, not the source")
	testwait.Recv(t, src.entered, "the waiter calling the source itself once the first caller gave up")
	close(src.gate)
	assert.NoError(t, testwait.Recv(t, waiter, "FillContext's return"))
	assert.Equal(t, idkit.Stats{Exhausted: 1, StoreWrites: 2, StoreErrors: 1}, g.Stats())

	// Close cancels a call in flight, which then fails with ErrClosed, not
	// with the source's error, which says "retry".
	g2, err := New(context.Background(), Options{Launch: 7, Source: &source{next: 5}, StartCounter: MaxCounter})
	require.NoError(t, err)
	_, err = g2.Next()
	require.NoError(t, err)
	src2 := g2.source.(*source)
	src2.entered, src2.gate = make(chan struct{}, 1), make(chan struct{})
	closed := make(chan error, 1)
	go func() {
		_, err := g2.Next()
		closed <- err
	}()
	testwait.Recv(t, src2.entered, "the source called")
	require.NoError(t, g2.Close())
	err = testwait.Recv(t, closed, "Next's return once the generator closed")
	assert.ErrorIs(t, err, ErrClosed)
	assert.NotErrorIs(t, err, ErrSource)
}
