package launchlog

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"
)

// HighWater returns the mark stored for key, in UTC, or the zero time if
// there is none.
//
// Marks live in the "highwater" bucket: the key maps to the mark in Unix
// nanoseconds (8 bytes big-endian) and a CRC-32C of key and mark (4
// bytes); the bucket's sequence is the XOR of the CRCs.
func (l *Log) HighWater(ctx context.Context, key string) (time.Time, error) {
	if err := checkKey(key); err != nil {
		return time.Time{}, err
	}
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("launchlog: HighWater(%q) in %s: %w", key, l.path, err)
	}
	var mark time.Time
	err := l.view(func(tx *bbolt.Tx) error {
		var err error
		mark, err = l.readMark(bucket(tx, highWaterBucket), key)
		return err
	})
	return mark, err
}

// AdvanceHighWater moves the mark for key to t unless it is already at or
// past t, durably, and returns the mark now stored, in UTC. A mark never
// moves backwards. t is a time representable in Unix nanoseconds (years
// 1678 to 2262); the zero t moves nothing and returns the stored mark.
func (l *Log) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	if err := checkKey(key); err != nil {
		return time.Time{}, err
	}
	if err := checkMarkTime(t); err != nil {
		return time.Time{}, err
	}
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("launchlog: AdvanceHighWater(%q) in %s: %w", key, l.path, err)
	}
	var mark time.Time
	err := l.update(func(tx *bbolt.Tx) error {
		b, err := createBucket(tx, highWaterBucket)
		if err != nil {
			return err
		}
		mark, err = l.advanceMark(ctx, b, key, t)
		return err
	})
	if err != nil {
		return time.Time{}, err
	}
	return mark, nil
}

// checkMarkTime checks that t is representable in Unix nanoseconds, or
// zero.
func checkMarkTime(t time.Time) error {
	if !t.IsZero() && !time.Unix(0, t.UnixNano()).Equal(t) {
		return fmt.Errorf("%w: high-water time %v, want a time from 1678 to 2262 (Unix nanoseconds)", ErrInvalid, t)
	}
	return nil
}

// advanceMark moves the mark for key in b to t unless it is already at or
// past t, and returns the mark now stored. A ctx that ended by the time
// it would write fails it, and so the transaction.
func (l *Log) advanceMark(ctx context.Context, b *bbolt.Bucket, key string, t time.Time) (time.Time, error) {
	mark, err := l.readMark(b, key)
	if err != nil {
		return time.Time{}, err
	}
	n := t.UnixNano()
	if t.IsZero() || (!mark.IsZero() && mark.UnixNano() >= n) {
		return mark, nil
	}
	// The lock may have taken a while: a caller that gave up by now
	// gets nothing, and the transaction rolls back.
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("launchlog: AdvanceHighWater(%q) in %s: %w", key, l.path, err)
	}
	return time.Unix(0, n).UTC(), putSealed(b, []byte(key), binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// readMark returns the mark for key in b, after checking every mark.
func (l *Log) readMark(b *bbolt.Bucket, key string) (time.Time, error) {
	if b == nil {
		return time.Time{}, nil
	}
	if err := l.sealedBucket(b, "high-water mark", 8); err != nil {
		return time.Time{}, err
	}
	v := b.Get([]byte(key))
	if v == nil {
		return time.Time{}, nil
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC(), nil
}

func checkKey(key string) error {
	if key == "" || len(key) > bbolt.MaxKeySize {
		return fmt.Errorf("%w: high-water key of %d bytes, want 1..=%d", ErrInvalid, len(key), bbolt.MaxKeySize)
	}
	return nil
}
