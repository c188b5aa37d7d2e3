package fleet

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// HighWater returns the node's mark for key, or the zero time if there is
// none, as [Log.HighWater] does. It reads while the claim holds, so after
// every earlier holder's lease ended: the mark covers everything they
// could issue. It fails with ErrNodeLost once the claim is lost.
func (c *Claim) HighWater(ctx context.Context, key string) (time.Time, error) {
	if err := checkMarkKey(key); err != nil {
		return time.Time{}, err
	}
	c.markMu.Lock()
	defer c.markMu.Unlock()
	seen, err := c.readMark(ctx, key)
	if err != nil {
		return time.Time{}, err
	}
	c.own[key] = seen
	return markTime(seen), nil
}

// AdvanceHighWater moves the node's mark for key to t unless it is
// already at or past t, as [Log.AdvanceHighWater] does, and returns the
// mark now stored. Every write is fenced by the claim in the same etcd
// transaction, so that a holder's marks are its own:
//
//   - the write is made only while etcd holds the node under this claim's
//     lease; a write that finds the node gone or held by another lease
//     fails with ErrNodeLost and loses the claim, even when it arrives
//     late, after a successor has written a mark of its own;
//   - the write is made only over the mark this claim last read or wrote;
//     a mark that another writer moved meanwhile is never adopted: the
//     write fails with ErrNodeLost and loses the claim.
//
// A write whose answer was lost (etcd did not answer) and that was applied
// anyway is recognised on retry by its value.
func (c *Claim) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	n, err := checkMark(key, t)
	if err != nil {
		return time.Time{}, err
	}
	c.markMu.Lock()
	defer c.markMu.Unlock()
	seen, known := c.own[key]
	delete(c.own, key) // known again once this call has succeeded
	if !known {
		if seen, err = c.readMark(ctx, key); err != nil {
			return time.Time{}, err
		}
	}
	mk := c.marks.markKey(key)
	v := time.Unix(0, n).UTC().Format(markLayout)
	put := !t.IsZero() && (seen.mod == 0 || seen.n < n)
	sent := false // a write was sent whose answer was lost
	err = c.marks.run(ctx, "AdvanceHighWater", func(ctx context.Context) error {
		if err := c.Check(c.clock.Now()); err != nil {
			return err
		}
		var then []clientv3.Op
		if put {
			then = append(then, clientv3.OpPut(mk, v))
		}
		resp, err := c.cli.Txn(ctx).
			If(c.fence(), clientv3.Compare(clientv3.ModRevision(mk), "=", seen.mod)).
			Then(then...).
			Else(clientv3.OpGet(c.key), clientv3.OpGet(mk)).
			Commit()
		if err != nil {
			sent = sent || put
			return clientError{err}
		}
		if resp.Succeeded {
			if put {
				seen = markState{n: n, mod: resp.Header.Revision}
			}
			return nil
		}
		if kv := firstKV(resp.Responses[0]); kv == nil || clientv3.LeaseID(kv.Lease) != c.lease {
			return c.fencedOut()
		}
		now, err := c.marks.parseMark(firstKV(resp.Responses[1]))
		if err != nil {
			return err
		}
		if sent && now.n == n {
			seen = now // this call's own write, applied without an answer
			return nil
		}
		return c.loseMark(key, now)
	})
	if err != nil {
		return time.Time{}, err
	}
	c.own[key] = seen
	return markTime(seen), nil
}

// readMark reads the mark for key, fenced: only while etcd holds the node
// under this claim's lease. The caller holds c.markMu.
func (c *Claim) readMark(ctx context.Context, key string) (markState, error) {
	var seen markState
	err := c.marks.run(ctx, "HighWater", func(ctx context.Context) error {
		if err := c.Check(c.clock.Now()); err != nil {
			return err
		}
		resp, err := c.cli.Txn(ctx).
			If(c.fence()).
			Then(clientv3.OpGet(c.marks.markKey(key))).
			Commit()
		if err != nil {
			return clientError{err}
		}
		if !resp.Succeeded {
			return c.fencedOut()
		}
		seen, err = c.marks.parseMark(firstKV(resp.Responses[0]))
		return err
	})
	return seen, err
}

// fence is the comparison that fences a request by the claim: etcd holds
// the node's key under this claim's lease. It fails for a missing key.
func (c *Claim) fence() clientv3.Cmp {
	return clientv3.Compare(clientv3.LeaseValue(c.key), "=", c.lease)
}

// fencedOut loses the claim because etcd no longer holds the node under
// its lease, and returns why.
func (c *Claim) fencedOut() error {
	c.lose(fmt.Errorf("%w: node %d: etcd no longer holds it under this claim's lease", ErrNodeLost, c.node))
	return c.err()
}

// loseMark loses the claim because another writer moved the node's mark
// for key, and returns why.
func (c *Claim) loseMark(key string, now markState) error {
	c.lose(fmt.Errorf("%w: node %d: another writer moved the mark %q to %v while this claim held the node",
		ErrNodeLost, c.node, key, markTime(now)))
	return c.err()
}
