package fleet

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
)

// ReserveBlock reserves the next block of step IDs for tag, for a
// segment.Allocator: the IDs after the last one reserved for tag under
// this prefix (1 to step for a new tag). It is one etcd transaction
// guarded by the ModRevision of the tag's key, as every write of the log
// is, and it returns the block only after etcd committed it: blocks never
// overlap, for callers on any number of hosts. A transaction whose
// outcome is unknown may lose a block, never repeat one. When this Log
// reserved the tag's last block, a reservation takes one round trip;
// otherwise (another process or host reserved since) two.
//
// tag and step must pass segment.CheckTag and segment.CheckStep; errors
// for them wrap segment.ErrInvalid, ErrInvalid and launchlog.ErrInvalid.
// A block past 2^63-1 fails with an error wrapping segment.ErrExhausted.
// The operation ends at ctx's end or LogOptions.Timeout, whichever comes
// first; either gives an error wrapping ErrUnavailable, and ctx's end also
// wraps ctx's error.
//
// The key is P blocks/<tag>; its value is the last ID reserved, decimal.
func (l *Log) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	if err := segment.CheckTag(tag); err != nil {
		return segment.Block{}, blockInvalid("ReserveBlock", err)
	}
	if err := segment.CheckStep(step); err != nil {
		return segment.Block{}, blockInvalid(fmt.Sprintf("ReserveBlock(%q)", tag), err)
	}
	op := fmt.Sprintf("ReserveBlock(%q)", tag)
	if err := ctx.Err(); err != nil {
		return segment.Block{}, fmt.Errorf("%w: %s under %s: %w", ErrUnavailable, op, l.prefix, err)
	}
	key := l.blockKey(tag)
	l.mu.Lock()
	seen := l.blocks[tag] // absent: guess that the tag is new; a wrong guess costs a round trip
	l.mu.Unlock()
	var block segment.Block
	err := l.run(ctx, op, func(actx context.Context) error {
		// The caller's ctx ends the attempt too.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: %s under %s: %w", ErrUnavailable, op, l.prefix, err)
		}
		actx, cancel := context.WithCancel(actx)
		defer cancel()
		defer context.AfterFunc(ctx, cancel)()

		if seen.last > math.MaxInt64-step {
			return fmt.Errorf("%w: tag %q under %s: last ID reserved %d, a block of %d would pass 2^63-1",
				segment.ErrExhausted, tag, l.prefix, seen.last, step)
		}
		next := seen.last + step
		resp, err := l.cli.Txn(actx).If(
			clientv3.Compare(clientv3.ModRevision(key), "=", seen.mod),
		).Then(
			clientv3.OpPut(key, strconv.FormatInt(next, 10)),
		).Else(
			clientv3.OpGet(key),
		).Commit()
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("%w: %s under %s: %w", ErrUnavailable, op, l.prefix, cerr)
			}
			return clientError{err}
		}
		if resp.Succeeded {
			block = segment.Block{First: seen.last + 1, Last: next}
			seen = blockState{last: next, mod: resp.Header.Revision}
			return nil
		}
		if seen, err = l.parseBlock(tag, firstKV(resp.Responses[0])); err != nil {
			return err
		}
		return errConflict
	})
	l.mu.Lock()
	if len(l.blocks) >= maxHints {
		clear(l.blocks)
	}
	if err != nil {
		delete(l.blocks, tag) // read afresh next time
	} else {
		l.blocks[tag] = seen
	}
	l.mu.Unlock()
	if err != nil {
		return segment.Block{}, err
	}
	return block, nil
}

// blockState is a tag's block mark as read: the last ID reserved and the
// ModRevision of its key (zero: no key, and last is 0).
type blockState struct {
	last int64
	mod  int64
}

func (l *Log) blockKey(tag string) string { return l.prefix + "blocks/" + tag }

func (l *Log) parseBlock(tag string, kv *mvccpb.KeyValue) (blockState, error) {
	if kv == nil {
		return blockState{}, nil
	}
	last, err := strconv.ParseInt(string(kv.Value), 10, 64)
	if err != nil || last < 1 || strconv.FormatInt(last, 10) != string(kv.Value) {
		return blockState{}, l.corruptf("block mark of tag %q = %q, want the last ID reserved, 1 to %d", tag, kv.Value, int64(math.MaxInt64))
	}
	return blockState{last: last, mod: kv.ModRevision}, nil
}

// blockInvalid returns err, which wraps segment.ErrInvalid, wrapping
// ErrInvalid and launchlog.ErrInvalid too.
func blockInvalid(op string, err error) error {
	return &logError{
		msg:  ErrInvalid.Error() + ": " + op + ": " + err.Error(),
		errs: []error{ErrInvalid, launchlog.ErrInvalid, err},
	}
}
