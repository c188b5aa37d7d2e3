package fleet

import (
	"context"
	"fmt"
	"strconv"
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
// Each write records, in the same transaction, the claim's lease and
// token beside the mark. So a write of this claim's that etcd
// applied late, after its answer was lost and the mark read again (in
// this call or an earlier one), is recognised as its own and built on,
// not taken for another writer's.
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
	mk, wk := c.marks.markKey(key), c.marks.markWriterKey(key)
	v := time.Unix(0, n).UTC().Format(markLayout)
	writer := strconv.FormatInt(int64(c.s.lease), 16) + "/" + c.record.Token
	err = c.marks.run(ctx, "AdvanceHighWater", func(ctx context.Context) error {
		// Each pass finds the mark moved by a late write of this claim's
		// at most once more than the last: a few passes suffice.
		for range 3 {
			if err := c.Check(c.s.clock.Now()); err != nil {
				return err
			}
			var then []clientv3.Op
			if put := !t.IsZero() && (seen.mod == 0 || seen.n < n); put {
				then = append(then, clientv3.OpPut(mk, v), clientv3.OpPut(wk, writer))
			}
			resp, err := c.s.cli.Txn(ctx).
				If(c.fence(), clientv3.Compare(clientv3.ModRevision(mk), "=", seen.mod)).
				Then(then...).
				Else(clientv3.OpGet(c.key), clientv3.OpGet(mk), clientv3.OpGet(wk)).
				Commit()
			if err != nil {
				return clientError{err}
			}
			if resp.Succeeded {
				if len(then) > 0 {
					seen = markState{n: n, mod: resp.Header.Revision}
				}
				return nil
			}
			if kv := firstKV(resp.Responses[0]); kv == nil || string(kv.Value) != c.value {
				return c.fencedOut()
			}
			mkv := firstKV(resp.Responses[1])
			now, err := c.marks.parseMark(mkv)
			if err != nil {
				return err
			}
			wkv := firstKV(resp.Responses[2])
			if mkv == nil || wkv == nil || wkv.ModRevision != mkv.ModRevision || string(wkv.Value) != writer {
				return c.loseMark(key, now)
			}
			seen = now // this claim's own write, applied without an answer or late
		}
		return c.loseMark(key, seen)
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
		if err := c.Check(c.s.clock.Now()); err != nil {
			return err
		}
		resp, err := c.s.cli.Txn(ctx).
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
// the node's key as this claim wrote it, under its lease and with its
// token. It fails for a missing key.
func (c *Claim) fence() clientv3.Cmp {
	return clientv3.Compare(clientv3.Value(c.key), "=", c.value)
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
