// Package memstore is an in-memory high-water store for tests: the same
// contract as launchlog's marks, without a file.
package memstore

import (
	"context"
	"sync"
	"time"
)

// Store keeps high-water marks in memory. A call whose context has ended
// returns its error. Err, when set, is returned by every call, to test how
// generators handle a failing store. The zero Store
// is ready to use and safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	marks map[string]time.Time
	err   error
	calls int
}

// HighWater returns the mark for key, or the zero time.
func (s *Store) HighWater(ctx context.Context, key string) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	if s.err != nil {
		return time.Time{}, s.err
	}
	return s.marks[key], nil
}

// AdvanceHighWater moves the mark for key forward to t and returns the mark
// now stored; it never moves a mark backwards.
func (s *Store) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	if s.err != nil {
		return time.Time{}, s.err
	}
	if s.marks == nil {
		s.marks = make(map[string]time.Time)
	}
	if t.After(s.marks[key]) {
		s.marks[key] = t
	}
	return s.marks[key], nil
}

// Fail makes every later call return err; nil heals the store.
func (s *Store) Fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// Calls returns how many calls the store has served.
func (s *Store) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// Gated is a Store whose AdvanceHighWater waits for the test: each call
// sends on Entered once it began, then waits until Release is closed. It
// shows what a generator does while its store is slow. Make it with
// NewGated.
type Gated struct {
	Store
	Entered chan struct{}
	Release chan struct{}
}

// NewGated returns a Gated store with room on Entered for n calls.
func NewGated(n int) *Gated {
	return &Gated{Entered: make(chan struct{}, n), Release: make(chan struct{})}
}

// AdvanceHighWater waits for Release, then moves the mark as Store does,
// or returns ctx's error if ctx ends first.
func (g *Gated) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	g.Entered <- struct{}{}
	select {
	case <-g.Release:
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	}
	return g.Store.AdvanceHighWater(ctx, key, t)
}
