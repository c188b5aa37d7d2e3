package clock

import (
	"context"
	"sync"
	"time"
)

// Fake is a [Clock] for tests. It stands still until Set or Advance moves
// it, in either direction; its coarse view always equals Now, and counts
// every move back in Coarse.Steps. Sleep blocks
// until the fake time reaches the sleeper's deadline. A Fake is safe for
// concurrent use.
type Fake struct {
	mu       sync.Mutex
	changed  sync.Cond // broadcast when now or the set of sleepers changes
	now      time.Time
	src      coarseSource
	sleepers int
	wakes    []time.Time // the deadlines of the sleepers
}

// NewFake returns a fake clock that reads t.
func NewFake(t time.Time) *Fake {
	f := &Fake{}
	f.changed.L = &f.mu
	f.set(t)
	return f
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Coarse returns a view that always equals Now.
func (f *Fake) Coarse() Coarse { return Coarse{src: &f.src} }

// Sleep blocks until the fake time reaches Now()+d, however long that takes
// on the wall clock. A step backwards postpones the wake-up accordingly.
func (f *Fake) Sleep(d time.Duration) { _ = f.SleepContext(context.Background(), d) }

// SleepContext is Sleep that also ends when ctx does, returning ctx's
// error.
func (f *Fake) SleepContext(ctx context.Context, d time.Duration) error {
	stop := context.AfterFunc(ctx, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.changed.Broadcast()
	})
	defer stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	deadline := f.now.Add(d)
	f.sleepers++
	f.wakes = append(f.wakes, deadline)
	f.changed.Broadcast()
	for f.now.Before(deadline) && ctx.Err() == nil {
		f.changed.Wait()
	}
	f.sleepers--
	for i, w := range f.wakes {
		if w.Equal(deadline) {
			f.wakes = append(f.wakes[:i], f.wakes[i+1:]...)
			break
		}
	}
	f.changed.Broadcast()
	if f.now.Before(deadline) {
		return ctx.Err()
	}
	return nil
}

// Set moves the clock to t, which may be earlier than the current time.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.set(t)
}

// Advance moves the clock by d; a negative d steps it backwards.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.set(f.now.Add(d))
}

func (f *Fake) set(t time.Time) {
	if t.Before(f.now) {
		f.src.steps.Add(1) // before the word shows the step, as a ticking source counts
	}
	f.now = t
	f.src.word.Store(t.UnixNano() << 1)
	f.changed.Broadcast()
}

// Sleepers returns how many goroutines are sleeping on the clock.
func (f *Fake) Sleepers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sleepers
}

// NextWake returns the earliest time a sleeper waits for, and false if
// none sleeps. A test that drives a program's clock in steps advances it
// no further than that, so that it never moves past a wake-up the program
// has not seen yet.
func (f *Fake) NextWake() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.wakes) == 0 {
		return time.Time{}, false
	}
	first := f.wakes[0]
	for _, w := range f.wakes[1:] {
		if w.Before(first) {
			first = w
		}
	}
	return first, true
}

// WaitForWakes blocks until every goroutine whose sleep on the clock has
// ended (its time has come) has woken and left the clock. A test that
// moves the clock while a program sleeps calls it after each move, so
// that it never moves the clock again before the sleeper saw the last
// move.
func (f *Fake) WaitForWakes() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.dueWake() {
		f.changed.Wait()
	}
}

// dueWake reports whether a sleeper's time has come but it has not left
// yet. The caller holds f.mu.
func (f *Fake) dueWake() bool {
	for _, w := range f.wakes {
		if !f.now.Before(w) {
			return true
		}
	}
	return false
}

// WaitForSleepers blocks until at least n goroutines sleep on the clock. A
// test calls it to know that a generator is waiting before it moves the
// clock.
func (f *Fake) WaitForSleepers(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for f.sleepers < n {
		f.changed.Wait()
	}
}
