// Package claimtest is a node claim for the generators' tests: it holds a
// node until a deadline on the test's fake clock, or until revoked, and
// keeps the node's high-water marks in memory, fenced by the claim, like
// fleet's etcd claim without etcd.
package claimtest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit/internal/testkit/memstore"
)

// ErrLost is what Check and the mark writes return once the claim is lost.
var ErrLost = errors.New("test claim lost")

// Claim holds Number until Deadline, or until Revoke; once lost it stays
// lost. It keeps marks in Marks, and counts its checks. It is safe for
// concurrent use.
type Claim struct {
	Number   int
	Deadline time.Time
	// Marks keeps the node's high-water marks; the zero Store is ready.
	Marks memstore.Store
	// OnCheck, when set, sees every time Check is asked about.
	OnCheck func(t time.Time)

	revoked atomic.Bool
	checks  atomic.Int64
	mu      sync.Mutex // guards during
	during  func()
}

// Node returns the claimed node number.
func (c *Claim) Node() int { return c.Number }

// Check returns nil while t is before the deadline and the claim was not
// revoked, and ErrLost from then on.
func (c *Claim) Check(t time.Time) error {
	c.checks.Add(1)
	if c.OnCheck != nil {
		c.OnCheck(t)
	}
	if c.revoked.Load() || !t.Before(c.Deadline) {
		c.revoked.Store(true)
		return ErrLost
	}
	return nil
}

// Revoke loses the claim, as etcd revoking its lease would.
func (c *Claim) Revoke() { c.revoked.Store(true) }

// Checks returns how often Check was called.
func (c *Claim) Checks() int64 { return c.checks.Load() }

// HighWater returns the mark for key, or ErrLost once the claim is lost.
func (c *Claim) HighWater(ctx context.Context, key string) (time.Time, error) {
	if c.revoked.Load() {
		return time.Time{}, ErrLost
	}
	return c.Marks.HighWater(ctx, key)
}

// AdvanceHighWater moves the mark for key, fenced by the claim: once the
// claim is lost it fails with ErrLost and moves nothing. A function set by
// During runs first, as if the write took that long.
func (c *Claim) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	c.mu.Lock()
	during := c.during
	c.mu.Unlock()
	if during != nil {
		during()
	}
	if c.revoked.Load() {
		return time.Time{}, ErrLost
	}
	return c.Marks.AdvanceHighWater(ctx, key, t)
}

// During makes every later mark write call f first, for a test to move its
// clock while a generator waits on the store.
func (c *Claim) During(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.during = f
}
