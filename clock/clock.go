// Package clock is the single source of time for idkit's generators, and
// the way to give them a clock of your own.
//
// Reading the system clock costs tens of nanoseconds, more than a whole ID
// should cost, so generators read two views of a [Clock]: [Clock.Now],
// precise, on slow paths (start-up, waiting for the next tick), and a
// [Coarse] view, one atomic load, once per ID. The system clock keeps its
// coarse view in one atomic word refreshed by a background ticker every
// [Resolution]; the ticker starts on the first read and stops by itself
// after a second without readers, so no generator has to be closed.
//
// Any type with Now and Sleep is a Clock: pass your own in a generator's
// Options (a clock synchronised some other way, or one that a simulation
// drives). [CoarseOf] gives it a coarse view refreshed from its Now in the
// same way; a clock can offer a cheaper one of its own by implementing
// Coarser, as the system clock and Fake do.
//
// The coarse view may lag the precise one and, like the wall clock itself,
// may step backwards. Generators keep their own logical clocks and never let
// them move backwards, whatever either reading does.
//
// [Fake] is a clock for tests, yours as well as idkit's: it stands still
// until the test sets or advances it, may be stepped backwards, and lets a
// test wait until a generator sleeps on it, so that no test sleeps on the
// wall clock.
package clock

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Resolution is how often a ticking coarse view is refreshed, and so about
// how far it may lag behind [Clock.Now].
const Resolution = time.Millisecond

// CoarseLag is how long after a unit of time ends a generator may still
// hand out IDs of that unit: its fast path tells units apart by the coarse
// view, which lags [Clock.Now] by about a Resolution, and by more when a
// busy scheduler delays the ticker. A generator on a node held until a
// deadline (a claim) enters a unit only if the unit ends at least
// CoarseLag before the deadline.
const CoarseLag = 50 * time.Millisecond

// Clock tells the wall-clock time. Implementations are safe for concurrent
// use.
type Clock interface {
	// Now returns the current time precisely.
	Now() time.Time
	// Sleep pauses the calling goroutine for d on this clock.
	Sleep(d time.Duration)
}

// ContextSleeper is a Clock whose sleep ends early when a context ends, as
// the system clock's and Fake's do.
type ContextSleeper interface {
	Clock
	// SleepContext pauses the calling goroutine for d on this clock, or
	// until ctx ends, whichever comes first. It returns ctx's error if
	// ctx ended first.
	SleepContext(ctx context.Context, d time.Duration) error
}

// SleepContext sleeps for d on c, or until ctx ends, and returns ctx's
// error if it ended first: the sleep of a generator's call that takes a
// context. A clock that is not a ContextSleeper sleeps the whole of d
// before the call looks at ctx again.
func SleepContext(ctx context.Context, c Clock, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if cs, ok := c.(ContextSleeper); ok {
		return cs.SleepContext(ctx, d)
	}
	c.Sleep(d)
	return ctx.Err()
}

// Coarser is a Clock with a coarse view of its own.
type Coarser interface {
	Clock
	// Coarse returns the cheap view of this clock.
	Coarse() Coarse
}

// CoarseOf returns the coarse view of c: its own if c is a Coarser, else
// one refreshed from c.Now every Resolution by a background ticker while
// it is read.
func CoarseOf(c Clock) Coarse {
	if cc, ok := c.(Coarser); ok {
		return cc.Coarse()
	}
	return Coarse{src: newTickingSource(int(time.Second/Resolution), c.Now)}
}

// System returns the system clock.
func System() Clock { return systemClock{} }

type systemClock struct{}

var systemSource = newTickingSource(int(time.Second/Resolution), time.Now)

func (systemClock) Now() time.Time        { return time.Now() }
func (systemClock) Coarse() Coarse        { return Coarse{src: systemSource} }
func (systemClock) Sleep(d time.Duration) { time.Sleep(d) }

func (systemClock) SleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Offset returns a clock that reads d later than c (earlier if d is
// negative). It models a host whose clock is set wrong, for example one
// stepped back between two runs of a program.
func Offset(c Clock, d time.Duration) Clock { return offsetClock{c, d} }

type offsetClock struct {
	Clock
	d time.Duration
}

func (o offsetClock) Now() time.Time { return o.Clock.Now().Add(o.d) }

func (o offsetClock) SleepContext(ctx context.Context, d time.Duration) error {
	return SleepContext(ctx, o.Clock, d)
}

func (o offsetClock) Coarse() Coarse {
	c := CoarseOf(o.Clock)
	c.offset += int64(o.d)
	return c
}

// Coarse is a cheap reading of a clock: one atomic load. It is a small
// value; copy it into the structures that read it on their hot paths.
type Coarse struct {
	src    *coarseSource
	offset int64
}

// UnixNano returns the coarse time in nanoseconds since the Unix epoch.
func (c Coarse) UnixNano() int64 {
	v := c.src.word.Load()
	if v&unread != 0 {
		v = c.src.markRead()
	}
	return v>>1 + c.offset
}

// Peek is UnixNano for hot paths, small enough to inline: it returns the
// coarse time and true, or false when the caller must call UnixNano
// instead (the first read after a refresh, which UnixNano records).
func (c Coarse) Peek() (int64, bool) {
	v := c.src.word.Load()
	return v>>1 + c.offset, v&unread == 0
}

// Steps returns how many times the clock was seen stepped back: its wall
// time moving back against its monotonic reading (as settimeofday or an
// NTP step moves it), or back outright on a clock without one. A caller
// that checked a deadline for a span of wall time re-checks it once Steps
// changes, since the wall clock may now pass through that span again. One
// atomic load, for hot paths.
func (c Coarse) Steps() uint64 { return c.src.steps.Load() }

// stepTolerance is how far the wall time may fall behind the monotonic
// clock between two readings before it counts as a step back: far above
// the drift that NTP slewing makes between two ticks.
const stepTolerance = time.Millisecond

// unread is the low bit of coarseSource.word: set by every refresh, cleared
// by the first reader after it. A refresh that finds it still set knows that
// nobody read the previous value.
const unread = 1

// coarseSource holds a time as nanoseconds<<1 | unread. A ticking source
// (the system's, or one of CoarseOf) is refreshed from its now by a ticker
// while it has readers and stops after idleTicks
// refreshes nobody read; a Fake's source is written by the Fake and never
// has the unread bit set.
type coarseSource struct {
	word      atomic.Int64
	steps     atomic.Uint64 // wall clock steps back seen, counted before the word shows them
	last      time.Time     // the reading behind word; written by whoever writes word
	idleTicks int
	now       func() time.Time // the clock a ticking source reads

	mu      sync.Mutex // guards running and the ticker's start and stop
	running bool
}

// newTickingSource returns a stopped source that the first read starts. A
// stopped source always has the unread bit set, so that readers notice.
func newTickingSource(idleTicks int, now func() time.Time) *coarseSource {
	s := &coarseSource{idleTicks: idleTicks, now: now}
	s.word.Store(unread)
	return s
}

// markRead clears the unread bit, starting the ticker if it had stopped, and
// returns the word.
func (s *coarseSource) markRead() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		s.running = true
		v := s.read() << 1
		s.word.Store(v)
		go s.tick()
		return v
	}
	for {
		v := s.word.Load()
		if v&unread == 0 || s.word.CompareAndSwap(v, v&^unread) {
			return v &^ unread
		}
	}
}

// read reads the clock and counts a step back since the last reading; it
// returns the time in nanoseconds since the Unix epoch. Its callers are
// serialised: the ticker, and markRead while no ticker runs.
func (s *coarseSource) read() int64 {
	t := s.now()
	if !s.last.IsZero() && steppedBack(s.last, t) {
		s.steps.Add(1)
	}
	s.last = t
	return t.UnixNano()
}

// steppedBack reports whether the wall time moved back from prev to t
// against the monotonic clock (t.Sub uses it when both readings carry
// it), or moved back at all.
func steppedBack(prev, t time.Time) bool {
	wall := time.Duration(t.UnixNano() - prev.UnixNano())
	return wall < t.Sub(prev)-stepTolerance || wall < -stepTolerance
}

func (s *coarseSource) tick() {
	t := time.NewTicker(Resolution)
	defer t.Stop()
	idle := 0
	for range t.C {
		old := s.word.Swap(s.read()<<1 | unread)
		if old&unread == 0 {
			idle = 0
			continue
		}
		if idle++; idle < s.idleTicks {
			continue
		}
		// Stop only if still unread: readers clear the bit under mu.
		s.mu.Lock()
		if s.word.Load()&unread != 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		idle = 0
	}
}
