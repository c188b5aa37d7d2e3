// Package claimtest is a node claim for the generators' tests: it holds a
// node until a deadline on the test's fake clock, or until revoked, like
// fleet's etcd claim without etcd.
package claimtest

import (
	"errors"
	"sync/atomic"
	"time"
)

// ErrLost is what Check returns once the claim is lost.
var ErrLost = errors.New("test claim lost")

// Claim holds Number until Deadline, or until Revoke; once lost it stays
// lost. It counts its checks. It is safe for concurrent use.
type Claim struct {
	Number   int
	Deadline time.Time
	revoked  atomic.Bool
	checks   atomic.Int64
}

// Node returns the claimed node number.
func (c *Claim) Node() int { return c.Number }

// Check returns nil while now is before the deadline and the claim was not
// revoked, and ErrLost from then on.
func (c *Claim) Check(now time.Time) error {
	c.checks.Add(1)
	if c.revoked.Load() || !now.Before(c.Deadline) {
		c.revoked.Store(true)
		return ErrLost
	}
	return nil
}

// Revoke loses the claim, as etcd revoking its lease would.
func (c *Claim) Revoke() { c.revoked.Store(true) }

// Checks returns how often Check was called.
func (c *Claim) Checks() int64 { return c.checks.Load() }
