package launchlog

import (
	"context"
	"encoding/binary"
	"fmt"

	"go.etcd.io/bbolt"
)

// NextGenerator hands out the next generator id of launch, starting at 0:
// each call returns a value no call on this file returned before, and the
// increment is fsynced before the value is returned, so a crash may lose a
// value but never repeats one. After MaxGenerator it fails with
// ErrGeneratorsExhausted.
//
// launch is 0..=MaxLaunch. It need not have been recorded by Begin (launch
// ids may come from deployment configuration), and 0 is the test launch.
//
// Counters live in the "generators" bucket: the 4-byte big-endian launch id
// maps to the next generator id (4 bytes big-endian) and a CRC-32C of key
// and id (4 bytes); the bucket's sequence is the XOR of the CRCs.
func (l *Log) NextGenerator(ctx context.Context, launch int) (int, error) {
	if err := checkLaunch("launch", launch, 0); err != nil {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("launchlog: NextGenerator(%d) in %s: %w", launch, l.path, err)
	}
	var next uint32
	err := l.update(func(tx *bbolt.Tx) error {
		b, err := createBucket(tx, generatorsBucket)
		if err != nil {
			return err
		}
		if err := l.sealedBucket(b, "generator counter", 4); err != nil {
			return err
		}
		key := idKey(launch)
		if v := b.Get(key); v != nil {
			next = binary.BigEndian.Uint32(v)
		}
		switch {
		case next == MaxGenerator+1:
			return fmt.Errorf("%w: launch %d in %s", ErrGeneratorsExhausted, launch, l.path)
		case next > MaxGenerator:
			return fmt.Errorf("%w: %s: generator counter of launch %d is %d, want 0..=%d", ErrCorrupt, l.path, launch, next, MaxGenerator+1)
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("launchlog: NextGenerator(%d) in %s: %w", launch, l.path, err)
		}
		return putSealed(b, key, binary.BigEndian.AppendUint32(nil, next+1))
	})
	if err != nil {
		return 0, err
	}
	return int(next), nil
}
