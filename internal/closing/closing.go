// Package closing ends the waits of a closed generator: a call asleep
// until the next second or tick wakes when the generator closes, rather
// than when the clock gets there.
package closing

import (
	"context"
	"errors"
	"time"

	"github.com/idkit/idkit/clock"
)

// ErrClosed is Sleep's error when the Signal closed first. A generator
// sets its own closed state before it closes the Signal, and reports its
// own error after a Sleep, so that this one never reaches its callers.
var ErrClosed = errors.New("closing: signal closed")

// Signal is closed once, by its generator's Close. It is safe for
// concurrent use.
type Signal struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns an open Signal.
func New() *Signal {
	ctx, cancel := context.WithCancel(context.Background())
	return &Signal{ctx: ctx, cancel: cancel}
}

// Close wakes every Sleep under s, now and later. Calling it again does
// nothing.
func (s *Signal) Close() { s.cancel() }

// Done is closed when s is.
func (s *Signal) Done() <-chan struct{} { return s.ctx.Done() }

// Closed reports whether s is closed.
func (s *Signal) Closed() bool { return s.ctx.Err() != nil }

// Sleep sleeps for d on c, or until ctx ends or s closes, whichever comes
// first. It returns ctx's error if ctx ended, and ErrClosed if s closed
// first.
func (s *Signal) Sleep(ctx context.Context, c clock.Clock, d time.Duration) error {
	if s.ctx.Err() != nil {
		return ErrClosed
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	err := clock.SleepContext(wctx, c, d)
	if err != nil && ctx.Err() == nil {
		return ErrClosed
	}
	return err
}
