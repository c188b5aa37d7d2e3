package launchlog

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"go.etcd.io/bbolt"

	"github.com/idkit/idkit/segment"
)

// ReserveBlock reserves the next block of step IDs for tag, for a
// segment.Allocator: the IDs after the last one reserved for tag on this
// file (1 to step for a new tag). The reservation is committed and fsynced
// before ReserveBlock returns, so blocks never overlap, across the
// processes sharing the file too, and a crash loses a block at most.
//
// tag and step must pass segment.CheckTag and segment.CheckStep; errors
// for them wrap ErrInvalid and segment.ErrInvalid. A block past 2^63-1
// fails with an error wrapping segment.ErrExhausted. ctx is checked before
// the transaction writes: a context that ended by then reserves nothing
// and gives its error. The wait for the file lock is bounded by
// Options.Timeout, as for every operation.
//
// Blocks live in the "blocks" bucket: the tag maps to the last ID
// reserved (8 bytes big-endian) and a CRC-32C of tag and ID (4 bytes); the
// bucket's sequence is the XOR of the CRCs.
func (l *Log) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	if err := segment.CheckTag(tag); err != nil {
		return segment.Block{}, fmt.Errorf("%w: ReserveBlock: %w", ErrInvalid, err)
	}
	if err := segment.CheckStep(step); err != nil {
		return segment.Block{}, fmt.Errorf("%w: ReserveBlock(%q): %w", ErrInvalid, tag, err)
	}
	if err := ctx.Err(); err != nil {
		return segment.Block{}, fmt.Errorf("launchlog: ReserveBlock(%q) in %s: %w", tag, l.path, err)
	}
	var block segment.Block
	err := l.update(func(tx *bbolt.Tx) error {
		b, err := createBucket(tx, blocksBucket)
		if err != nil {
			return err
		}
		last, err := l.readBlockMark(b, tag)
		if err != nil {
			return err
		}
		if last > math.MaxInt64-step {
			return fmt.Errorf("%w: tag %q in %s: last ID reserved %d, a block of %d would pass 2^63-1",
				segment.ErrExhausted, tag, l.path, last, step)
		}
		// The lock may have taken a while: a caller that gave up by now
		// gets nothing, and the transaction rolls back.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("launchlog: ReserveBlock(%q) in %s: %w", tag, l.path, err)
		}
		block = segment.Block{First: last + 1, Last: last + step}
		return putSealed(b, []byte(tag), binary.BigEndian.AppendUint64(nil, uint64(block.Last)))
	})
	if err != nil {
		return segment.Block{}, err
	}
	return block, nil
}

// readBlockMark returns the last ID reserved for tag in b (0 for none),
// after checking every record of b.
func (l *Log) readBlockMark(b *bbolt.Bucket, tag string) (int64, error) {
	if err := l.sealedBucket(b, "block", 8); err != nil {
		return 0, err
	}
	v := b.Get([]byte(tag))
	if v == nil {
		return 0, nil
	}
	last := binary.BigEndian.Uint64(v)
	if last > math.MaxInt64 {
		return 0, fmt.Errorf("%w: %s: block of tag %q: last ID reserved %d, want at most 2^63-1", ErrCorrupt, l.path, tag, last)
	}
	return int64(last), nil
}
