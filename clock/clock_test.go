package clock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testwait"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func TestFakeMovesOnlyWhenTold(t *testing.T) {
	t.Parallel()
	f := NewFake(t0)
	assert.Equal(t, t0, f.Now())
	assert.Equal(t, t0.UnixNano(), f.Coarse().UnixNano())

	f.Advance(1500 * time.Millisecond)
	assert.Equal(t, t0.Add(1500*time.Millisecond), f.Now())
	assert.Equal(t, f.Now().UnixNano(), f.Coarse().UnixNano())

	f.Advance(-time.Hour)
	assert.Equal(t, t0.Add(1500*time.Millisecond-time.Hour), f.Now(), "steps backwards")
	assert.Equal(t, f.Now().UnixNano(), f.Coarse().UnixNano())

	f.Set(t0)
	assert.Equal(t, t0, f.Now())
}

func TestFakeSleepWakesAtDeadline(t *testing.T) {
	t.Parallel()
	f := NewFake(t0)
	done := make(chan struct{})
	go func() {
		f.Sleep(time.Second)
		close(done)
	}()
	testwait.Sleepers(t, f, 1)
	assert.Equal(t, 1, f.Sleepers())

	f.Advance(999 * time.Millisecond)
	select {
	case <-done:
		t.Fatal("Sleep returned before its deadline")
	default:
	}
	f.Advance(-time.Minute)
	f.Set(t0.Add(time.Second))
	testwait.Recv(t, done, "return from Sleep at its deadline")
	assert.Equal(t, 0, f.Sleepers())
}

// TestFakeWaitForWakes: once the clock moves past a sleeper's deadline,
// WaitForWakes returns only after the sleeper has left the clock, and at
// once while no sleeper's time has come.
func TestFakeWaitForWakes(t *testing.T) {
	t.Parallel()
	f := NewFake(t0)
	f.WaitForWakes() // no sleeper
	left := make(chan struct{})
	go func() {
		f.Sleep(time.Second)
		close(left)
	}()
	testwait.Sleepers(t, f, 1)
	f.WaitForWakes() // a sleeper whose time has not come
	f.Advance(time.Second)
	f.WaitForWakes()
	assert.Zero(t, f.Sleepers(), "the sleeper left before WaitForWakes returned")
	testwait.Recv(t, left, "the sleeper's return")
}

func TestSleepContextEndsWithTheContext(t *testing.T) {
	t.Parallel()
	clocks := map[string]Clock{
		"fake":   NewFake(t0),
		"system": System(),
		"offset": Offset(NewFake(t0), time.Hour),
	}
	for name, c := range clocks {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- SleepContext(ctx, c, time.Hour) }()
			if f, ok := c.(*Fake); ok {
				testwait.Sleepers(t, f, 1)
			}
			cancel()
			err := testwait.Recv(t, done, "return from SleepContext once its context ended")
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
}

func TestSleepContextSleepsTheWholeWayOnAPlainClock(t *testing.T) {
	t.Parallel()
	f := NewFake(t0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- SleepContext(ctx, plainClock{f}, time.Second) }()
	testwait.Sleepers(t, f, 1)
	f.Advance(time.Second)
	assert.NoError(t, testwait.Recv(t, done, "return from SleepContext at its deadline"))

	cancel()
	assert.ErrorIs(t, SleepContext(ctx, plainClock{f}, time.Second), context.Canceled, "an ended context sleeps no more")
	assert.Equal(t, 0, f.Sleepers())
}

// plainClock is a Clock with only Now and Sleep.
type plainClock struct{ f *Fake }

func (p plainClock) Now() time.Time        { return p.f.Now() }
func (p plainClock) Sleep(d time.Duration) { p.f.Sleep(d) }

func TestFakeSleepNonPositive(t *testing.T) {
	t.Parallel()
	f := NewFake(t0)
	f.Sleep(0)
	f.Sleep(-time.Second)
	assert.Equal(t, 0, f.Sleepers())
}

func TestOffset(t *testing.T) {
	t.Parallel()
	f := NewFake(t0)
	c := Offset(f, -2*time.Second)
	assert.Equal(t, t0.Add(-2*time.Second), c.Now())
	assert.Equal(t, t0.Add(-2*time.Second).UnixNano(), CoarseOf(c).UnixNano())
	f.Advance(time.Second)
	assert.Equal(t, t0.Add(-time.Second).UnixNano(), CoarseOf(c).UnixNano())
}

// The system clock's coarse view is refreshed by a real ticker, so this
// test runs on real time: it allows the view a lag of a second, a
// thousand ticks, which a ticker starved by a loaded machine still keeps.
func TestSystemCoarseFollowsNow(t *testing.T) {
	t.Parallel()
	c := CoarseOf(System())
	for range 3 {
		before := time.Now().UnixNano()
		got := c.UnixNano()
		after := time.Now().UnixNano()
		assert.LessOrEqual(t, got, after, "coarse time is never ahead of a later Now")
		assert.Greater(t, got, before-int64(time.Second), "coarse time lags by far less than a second")
		System().Sleep(2 * Resolution)
	}
}

// The ticker stops once nobody reads, and the next reader restarts it with a
// fresh time rather than reading the stale one. The ticker is real: the
// test waits for it to stop (two idle ticks, 2 ms) up to testwait.Bound.
func TestCoarseTickerStopsAndRestarts(t *testing.T) {
	t.Parallel()
	src := newTickingSource(2, time.Now)
	c := Coarse{src: src}
	first := c.UnixNano()
	assert.Greater(t, first, t0.UnixNano(), "the first read is a real time")
	running := func() bool {
		src.mu.Lock()
		defer src.mu.Unlock()
		return src.running
	}
	require.True(t, running())
	testwait.Until(t, func() bool { return !running() }, "stopped after two idle ticks")

	stale := src.word.Load() >> 1
	before := time.Now().UnixNano()
	got := c.UnixNano()
	assert.True(t, running(), "a read restarts the ticker")
	assert.GreaterOrEqual(t, got, before, "the restarted view is fresh")
	assert.GreaterOrEqual(t, got, stale)
	assert.GreaterOrEqual(t, got, first)
}

// Peek reads what UnixNano reads, and sends its caller to UnixNano where a
// read must be recorded: on a stopped ticking source, and on the first read
// after a refresh. A Fake's view, which is never unread, always peeks.
func TestPeek(t *testing.T) {
	t.Parallel()
	src := newTickingSource(2, time.Now)
	c := Coarse{src: src, offset: -int64(time.Hour)}
	_, ok := c.Peek()
	assert.False(t, ok, "a stopped source sends Peek's caller to UnixNano")
	got := c.UnixNano()
	peeked, ok := c.Peek()
	if ok { // else a refresh came in between, which the next read records
		assert.GreaterOrEqual(t, peeked, got, "Peek reads the word UnixNano recorded, offset included")
	}
	src.word.Store(t0.UnixNano()<<1 | unread) // a refresh nobody read yet
	_, ok = c.Peek()
	assert.False(t, ok, "an unread refresh sends Peek's caller to UnixNano")

	f := NewFake(t0)
	for range 2 {
		v, ok := f.Coarse().Peek()
		assert.True(t, ok)
		assert.Equal(t, f.Now().UnixNano(), v)
		f.Advance(time.Second)
	}
}

// userClock is a clock of a user's own: Now and Sleep only.
type userClock struct{ f *Fake }

func (u userClock) Now() time.Time        { return u.f.Now() }
func (u userClock) Sleep(d time.Duration) { u.f.Sleep(d) }

// A clock with Now and Sleep alone gets a coarse view that follows its Now,
// refreshed by a real ticker: the test waits for the next tick (1 ms) up to
// testwait.Bound.
func TestCoarseOfAnyClock(t *testing.T) {
	t.Parallel()
	f := NewFake(t0)
	c := CoarseOf(userClock{f})
	assert.Equal(t, t0.UnixNano(), c.UnixNano(), "the first read is the clock's time")
	f.Advance(time.Hour)
	testwait.Until(t, func() bool { return c.UnixNano() == t0.Add(time.Hour).UnixNano() },
		"refreshed by the ticker from the clock's Now")
	assert.Equal(t, t0.Add(-time.Hour).UnixNano(), CoarseOf(Offset(userClock{f}, -2*time.Hour)).UnixNano())
}

func TestFakeNextWake(t *testing.T) {
	t.Parallel()
	f := NewFake(t0)
	_, ok := f.NextWake()
	assert.False(t, ok, "no sleeper")
	done := make(chan struct{}, 2)
	for _, d := range []time.Duration{3 * time.Second, time.Second} {
		go func() {
			f.Sleep(d)
			done <- struct{}{}
		}()
	}
	testwait.Sleepers(t, f, 2)
	wake, ok := f.NextWake()
	require.True(t, ok)
	assert.Equal(t, t0.Add(time.Second), wake, "the earliest deadline")
	f.Advance(time.Second)
	testwait.Recv(t, done, "the first sleeper")
	testwait.Until(t, func() bool { w, _ := f.NextWake(); return w.Equal(t0.Add(3 * time.Second)) }, "the next deadline")
	f.Advance(2 * time.Second)
	testwait.Recv(t, done, "the second sleeper")
	_, ok = f.NextWake()
	assert.False(t, ok)
}
