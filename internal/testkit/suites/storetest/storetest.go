// Package storetest holds the conformance suites that idkit's stores
// share: one suite per contract, run unchanged against every backend (the
// bbolt launchlog, the etcd fleet log), so that a caller can swap one for
// the other.
//
// It is for tests only; nothing in the library imports it.
package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/store"
)

// Open returns a new, empty store whose Begin reads clk, and a function
// that opens another handle on the same data, as another process or host
// would. Each call gives a store of its own: the suite's subtests run in
// parallel.
type Open func(t *testing.T, clk clock.Clock) (s store.LaunchLog, again func(t *testing.T) store.LaunchLog)

// epoch is the suite's fake time; the nanoseconds check that times round
// trip exactly.
var epoch = time.Date(2025, 11, 21, 9, 30, 0, 123456789, time.UTC)

// LaunchLog runs the launch log contract against the stores open returns.
// Exhaustion (launch 99999, generator 99999) is left to each backend's
// own tests, which can seed their state cheaply.
func LaunchLog(t *testing.T, open Open) {
	t.Run("Launches", func(t *testing.T) { t.Parallel(); testLaunches(t, open) })
	t.Run("StartedAtNeverBackwards", func(t *testing.T) { t.Parallel(); testStartedAtNeverBackwards(t, open) })
	t.Run("LaunchInvalid", func(t *testing.T) { t.Parallel(); testLaunchInvalid(t, open) })
	t.Run("NextGenerator", func(t *testing.T) { t.Parallel(); testNextGenerator(t, open) })
	t.Run("HighWater", func(t *testing.T) { t.Parallel(); testHighWater(t, open) })
	t.Run("HighWaterInvalid", func(t *testing.T) { t.Parallel(); testHighWaterInvalid(t, open) })
	t.Run("ConcurrentNextGenerator", func(t *testing.T) { t.Parallel(); testConcurrentNextGenerator(t, open) })
	t.Run("ConcurrentBegin", func(t *testing.T) { t.Parallel(); testConcurrentBegin(t, open) })
	t.Run("ConcurrentAdvanceHighWater", func(t *testing.T) { t.Parallel(); testConcurrentAdvanceHighWater(t, open) })
	t.Run("ContextEnded", func(t *testing.T) { t.Parallel(); testContextEnded(t, open) })
}

// testContextEnded: a call whose context has ended returns the context's
// error, wrapped, and changes nothing.
func testContextEnded(t *testing.T, open Open) {
	s, _ := open(t, clock.NewFake(epoch))
	ctx := context.Background()
	_, err := s.AdvanceHighWater(ctx, "k", epoch)
	require.NoError(t, err)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	expired, cancel := context.WithTimeout(ctx, -1)
	defer cancel()
	for _, c := range []struct {
		ctx  context.Context
		want error
	}{{canceled, context.Canceled}, {expired, context.DeadlineExceeded}} {
		_, err = s.AdvanceHighWater(c.ctx, "k", epoch.Add(time.Hour))
		assert.ErrorIs(t, err, c.want, "AdvanceHighWater")
		_, err = s.HighWater(c.ctx, "k")
		assert.ErrorIs(t, err, c.want, "HighWater")
		_, err = s.NextGenerator(c.ctx, 1)
		assert.ErrorIs(t, err, c.want, "NextGenerator")
	}
	mark, err := s.HighWater(ctx, "k")
	require.NoError(t, err)
	assert.True(t, mark.Equal(epoch), "the mark moved to %v by a call whose context had ended", mark)
	g, err := s.NextGenerator(ctx, 1)
	require.NoError(t, err)
	assert.Zero(t, g, "a call whose context had ended took generator id 0")
}

func testLaunches(t *testing.T, open Open) {
	fake := clock.NewFake(epoch)
	s, again := open(t, fake)

	_, err := s.Current(context.Background())
	assert.ErrorIs(t, err, launchlog.ErrNoLaunch, "Current of an empty log")
	_, err = s.Get(context.Background(), 1)
	assert.ErrorIs(t, err, launchlog.ErrNoLaunch, "Get of an empty log")
	list, err := s.List(context.Background())
	require.NoError(t, err)
	assert.Empty(t, list)

	infos := []store.Info{
		{Ticket: "REL-1", By: "ann", Note: "first"},
		{Ticket: "REL-2", By: "bob"},
		{Note: "hotfix \"quoted\" ✓\nsecond line"},
		{},
	}
	var want []store.Launch
	for i, info := range infos {
		got, err := s.Begin(context.Background(), info)
		require.NoError(t, err)
		w := store.Launch{ID: i + 1, StartedAt: fake.Now().UTC(), Ticket: info.Ticket, By: info.By, Note: info.Note}
		assert.Equal(t, w, got)
		want = append(want, w)
		// A clock in another zone stamps UTC all the same.
		fake.Set(fake.Now().Add(time.Hour).In(time.FixedZone("X", -7200)))
	}

	// A second handle, as another process or host, sees the same.
	s2 := again(t)
	list, err = s2.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, want, list)
	cur, err := s2.Current(context.Background())
	require.NoError(t, err)
	assert.Equal(t, want[len(want)-1], cur)
	for _, w := range want {
		got, err := s2.Get(context.Background(), w.ID)
		require.NoError(t, err)
		assert.Equal(t, w, got)
		assert.Equal(t, time.UTC, got.StartedAt.Location())
	}
	_, err = s2.Get(context.Background(), len(want)+1)
	assert.ErrorIs(t, err, launchlog.ErrNoLaunch)
	assert.ErrorContains(t, err, fmt.Sprint(len(want)+1))

	// The next launch continues from either handle.
	got, err := s.Begin(context.Background(), store.Info{By: "carol"})
	require.NoError(t, err)
	assert.Equal(t, len(want)+1, got.ID)
	cur, err = s2.Current(context.Background())
	require.NoError(t, err)
	assert.Equal(t, got, cur)
}

func testStartedAtNeverBackwards(t *testing.T, open Open) {
	// The clock steps back between launches, as when hosts' clocks
	// disagree: a launch never starts before the one it follows.
	fake := clock.NewFake(epoch)
	s, again := open(t, fake)
	first, err := s.Begin(context.Background(), store.Info{Note: "first"})
	require.NoError(t, err)
	assert.Equal(t, epoch, first.StartedAt)

	fake.Set(epoch.Add(-time.Hour))
	second, err := again(t).Begin(context.Background(), store.Info{Note: "clock an hour behind"})
	require.NoError(t, err)
	assert.Equal(t, 2, second.ID)
	assert.Equal(t, epoch, second.StartedAt, "a clock behind stamps the previous launch's time")

	fake.Set(epoch.Add(time.Hour))
	third, err := s.Begin(context.Background(), store.Info{Note: "clock ahead again"})
	require.NoError(t, err)
	assert.Equal(t, epoch.Add(time.Hour), third.StartedAt)

	list, err := s.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []store.Launch{first, second, third}, list)
}

func testLaunchInvalid(t *testing.T, open Open) {
	s, _ := open(t, clock.NewFake(epoch))
	for _, id := range []int{0, -1, launchlog.MaxLaunch + 1} {
		_, err := s.Get(context.Background(), id)
		assert.ErrorIs(t, err, launchlog.ErrInvalid, "Get(%d)", id)
		assert.ErrorContains(t, err, fmt.Sprint(id), "Get(%d) names the id", id)
		assert.ErrorContains(t, err, "99999", "Get(%d) names the range", id)
	}
	for _, launch := range []int{-1, launchlog.MaxLaunch + 1} {
		_, err := s.NextGenerator(context.Background(), launch)
		assert.ErrorIs(t, err, launchlog.ErrInvalid, "NextGenerator(%d)", launch)
		assert.ErrorContains(t, err, fmt.Sprint(launch), "NextGenerator(%d) names the launch", launch)
		assert.ErrorContains(t, err, "99999", "NextGenerator(%d) names the range", launch)
	}
	// Nothing was handed out by the refused calls.
	got, err := s.NextGenerator(context.Background(), launchlog.MaxLaunch)
	require.NoError(t, err)
	assert.Equal(t, 0, got)
	_, err = s.Current(context.Background())
	assert.ErrorIs(t, err, launchlog.ErrNoLaunch)
}

func testNextGenerator(t *testing.T, open Open) {
	s, again := open(t, clock.NewFake(epoch))
	// Launches need not have been recorded by Begin; 0 is the test launch.
	steps := []struct {
		launch, want int
	}{
		{1, 0}, {1, 1}, {2, 0}, {1, 2}, {0, 0}, {launchlog.MaxLaunch, 0}, {2, 1}, {0, 1}, {1, 3},
	}
	for _, st := range steps {
		got, err := s.NextGenerator(context.Background(), st.launch)
		require.NoError(t, err)
		assert.Equal(t, st.want, got, "launch %d", st.launch)
	}
	// Another handle continues where this one stopped, and this one after
	// it.
	s2 := again(t)
	got, err := s2.NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, 4, got)
	got, err = s.NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, 5, got)
	got, err = s2.NextGenerator(context.Background(), 3)
	require.NoError(t, err)
	assert.Equal(t, 0, got)

	// Counters are independent of launches.
	_, err = s.Begin(context.Background(), store.Info{})
	require.NoError(t, err)
	got, err = s.NextGenerator(context.Background(), 2)
	require.NoError(t, err)
	assert.Equal(t, 2, got)
}

func testHighWater(t *testing.T, open Open) {
	s, again := open(t, clock.NewFake(epoch))
	t0 := epoch
	old := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		name string
		key  string
		to   time.Time // zero: AdvanceHighWater moves nothing
		want time.Time // the mark after the step
	}{
		{"none yet", "a", time.Time{}, time.Time{}},
		{"first", "a", t0, t0},
		{"forward", "a", t0.Add(time.Second), t0.Add(time.Second)},
		{"backward is ignored", "a", t0.Add(-time.Hour), t0.Add(time.Second)},
		{"one nanosecond back is ignored", "a", t0.Add(time.Second - 1), t0.Add(time.Second)},
		{"same", "a", t0.Add(time.Second), t0.Add(time.Second)},
		{"zero time moves nothing", "a", time.Time{}, t0.Add(time.Second)},
		{"one nanosecond on", "a", t0.Add(time.Second + 1), t0.Add(time.Second + 1)},
		{"other key", "b", t0.Add(-time.Hour), t0.Add(-time.Hour)},
		{"before 1970", "c", old, old},
		{"zero time keeps an old mark", "c", time.Time{}, old},
		{"the Unix epoch", "e", time.Unix(0, 0), time.Unix(0, 0).UTC()},
		{"other location", "d", t0.In(time.FixedZone("X", 3600)), t0},
		{"key with slashes and spaces", "traceid/node 7/x", t0, t0},
		{"a key that extends another", "a/b", t0.Add(-time.Minute), t0.Add(-time.Minute)},
	}
	for _, st := range steps {
		got, err := s.AdvanceHighWater(context.Background(), st.key, st.to)
		require.NoError(t, err, st.name)
		assert.True(t, st.want.Equal(got), "%s: advance returned %v, want %v", st.name, got, st.want)
		if !got.IsZero() {
			assert.Equal(t, time.UTC, got.Location(), st.name)
		}
		got, err = s.HighWater(context.Background(), st.key)
		require.NoError(t, err, st.name)
		assert.True(t, st.want.Equal(got), "%s: mark %v, want %v", st.name, got, st.want)
		if !got.IsZero() {
			assert.Equal(t, time.UTC, got.Location(), st.name)
		}
	}

	// Marks are shared: another handle sees them, and cannot move them
	// back, and this handle sees what the other moved.
	s2 := again(t)
	for key, want := range map[string]time.Time{
		"a": t0.Add(time.Second + 1), "b": t0.Add(-time.Hour), "c": old, "a/b": t0.Add(-time.Minute), "z": {},
	} {
		got, err := s2.HighWater(context.Background(), key)
		require.NoError(t, err)
		assert.True(t, want.Equal(got), "other handle: %q = %v, want %v", key, got, want)
	}
	got, err := s2.AdvanceHighWater(context.Background(), "a", t0)
	require.NoError(t, err)
	assert.True(t, t0.Add(time.Second+1).Equal(got), "other handle moved a mark back to %v", got)
	got, err = s2.AdvanceHighWater(context.Background(), "a", t0.Add(time.Minute))
	require.NoError(t, err)
	assert.True(t, t0.Add(time.Minute).Equal(got))
	// This handle may have seen "a" before; it must not trust that.
	got, err = s.AdvanceHighWater(context.Background(), "a", t0.Add(2*time.Second))
	require.NoError(t, err)
	assert.True(t, t0.Add(time.Minute).Equal(got), "advance behind the mark returned %v, want the stored mark", got)
	got, err = s.AdvanceHighWater(context.Background(), "a", time.Time{})
	require.NoError(t, err)
	assert.True(t, t0.Add(time.Minute).Equal(got))
}

func testHighWaterInvalid(t *testing.T, open Open) {
	s, _ := open(t, clock.NewFake(epoch))
	const maxKey = 32768 // launchlog's limit, which every backend keeps
	tests := []struct {
		name string
		key  string
		t    time.Time
		want []string // substrings of the error
	}{
		{"empty key", "", epoch, []string{"0 bytes", "32768"}},
		{"long key", strings.Repeat("k", maxKey+1), epoch, []string{"32769 bytes", "32768"}},
		{"before 1678", "k", time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), []string{"1600", "1678 to 2262"}},
		{"after 2262", "k", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), []string{"2300", "1678 to 2262"}},
	}
	for _, tt := range tests {
		_, err := s.AdvanceHighWater(context.Background(), tt.key, tt.t)
		assert.ErrorIs(t, err, launchlog.ErrInvalid, tt.name)
		for _, w := range tt.want {
			assert.ErrorContains(t, err, w, tt.name)
		}
		if tt.key != "k" {
			_, err = s.HighWater(context.Background(), tt.key)
			assert.ErrorIs(t, err, launchlog.ErrInvalid, tt.name)
		}
	}
	got, err := s.HighWater(context.Background(), "k")
	require.NoError(t, err)
	assert.True(t, got.IsZero(), "rejected times leave no mark")

	// The longest key is valid.
	long := strings.Repeat("k", maxKey)
	got, err = s.AdvanceHighWater(context.Background(), long, epoch)
	require.NoError(t, err)
	assert.True(t, epoch.Equal(got))
	got, err = s.HighWater(context.Background(), long)
	require.NoError(t, err)
	assert.True(t, epoch.Equal(got))
}

// handles returns n handles on s's data: s itself and n-1 others.
func handles(t *testing.T, s store.LaunchLog, again func(*testing.T) store.LaunchLog, n int) []store.LaunchLog {
	hs := []store.LaunchLog{s}
	for len(hs) < n {
		hs = append(hs, again(t))
	}
	return hs
}

func testConcurrentNextGenerator(t *testing.T, open Open) {
	// Goroutines on three handles call NextGenerator on two launches at
	// once: the values of each launch are distinct and, as no call fails,
	// exactly 0..n-1.
	s, again := open(t, clock.NewFake(epoch))
	hs := handles(t, s, again, 3)
	const workers, calls = 8, 15
	type result struct{ launch, v int }
	results := make(chan result, workers*calls)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			h := hs[w%len(hs)]
			launch := 7 + w%2
			for range calls {
				v, err := h.NextGenerator(context.Background(), launch)
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
				results <- result{launch, v}
			}
		})
	}
	wg.Wait()
	close(errs)
	close(results)
	for err := range errs {
		require.NoError(t, err)
	}
	seen := map[int]map[int]bool{7: {}, 8: {}}
	for r := range results {
		assert.False(t, seen[r.launch][r.v], "launch %d: generator %d handed out twice", r.launch, r.v)
		seen[r.launch][r.v] = true
	}
	for launch, vs := range seen {
		assert.Len(t, vs, workers/2*calls, "launch %d", launch)
		for v := range workers / 2 * calls {
			assert.True(t, vs[v], "launch %d: generator %d missing", launch, v)
		}
	}
}

func testConcurrentBegin(t *testing.T, open Open) {
	// Goroutines on three handles begin launches at once: the ids are
	// distinct and exactly 1..n, and each launch holds the Info of the
	// call that got its id.
	s, again := open(t, clock.NewFake(epoch))
	hs := handles(t, s, again, 3)
	const workers, calls = 4, 5
	var (
		mu  sync.Mutex
		got = map[int]store.Launch{}
	)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			h := hs[w%len(hs)]
			for i := range calls {
				info := store.Info{By: fmt.Sprintf("worker %d", w), Note: fmt.Sprint(i)}
				l, err := h.Begin(context.Background(), info)
				if err != nil {
					errs <- fmt.Errorf("worker %d: %w", w, err)
					return
				}
				mu.Lock()
				_, dup := got[l.ID]
				got[l.ID] = l
				mu.Unlock()
				if dup || l.By != info.By || l.Note != info.Note {
					errs <- fmt.Errorf("worker %d: launch %+v handed out twice or with another's info", w, l)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	list, err := s.List(context.Background())
	require.NoError(t, err)
	require.Len(t, list, workers*calls)
	for i, l := range list {
		assert.Equal(t, i+1, l.ID)
		assert.Equal(t, got[l.ID], l, "launch %d as listed", l.ID)
	}
	cur, err := s.Current(context.Background())
	require.NoError(t, err)
	assert.Equal(t, workers*calls, cur.ID)
}

func testConcurrentAdvanceHighWater(t *testing.T, open Open) {
	// Writers on three handles race to move one mark to different times,
	// each several times; whatever the order, the mark ends at the
	// latest, and no writer sees a mark behind its own time.
	s, again := open(t, clock.NewFake(epoch))
	hs := handles(t, s, again, 3)
	const writers, rounds = 6, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			h := hs[w%len(hs)]
			for r := range rounds {
				at := epoch.Add(time.Duration(r*writers+(w*7)%writers) * time.Second)
				got, err := h.AdvanceHighWater(context.Background(), "k", at)
				if err == nil && got.Before(at) {
					err = fmt.Errorf("advance to %v returned %v", at, got)
				}
				if err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	want := epoch.Add((rounds*writers - 1) * time.Second)
	for i, h := range hs {
		got, err := h.HighWater(context.Background(), "k")
		require.NoError(t, err)
		assert.True(t, want.Equal(got), "handle %d: mark %v, want %v", i, got, want)
	}
}
