package launchlog

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/idkit/idkit/segment"
)

// putBlock stores a block record as ReserveBlock does, or raw bytes.
func putBlock(tag string, v []byte, sealed bool) func(tx *bbolt.Tx) error {
	return func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(blocksBucket)
		if err != nil {
			return err
		}
		if sealed {
			return putSealed(b, []byte(tag), v)
		}
		return b.Put([]byte(tag), v)
	}
}

func mark(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// TestReserveBlockCorrupt damages the blocks bucket in each way the
// checks must catch: ReserveBlock then fails with ErrCorrupt instead of
// reserving a block that may overlap one reserved before.
func TestReserveBlockCorrupt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		setup func(tx *bbolt.Tx) error
		want  string
	}{
		{"record of 7 bytes", putBlock("t", make([]byte, 7), false), "block 74: bad record 00000000000000, want 12 bytes"},
		{"bad checksum", putBlock("t", append(mark(500), 1, 2, 3, 4), false), "block 74: bad record"},
		{"mark turned back", putBlock("t", func() []byte {
			v := seal([]byte("t"), mark(5000))
			v[6] = 0 // 5000 → 136
			return v
		}(), false), "block 74: bad record"},
		{"record under another tag", putBlock("u", seal([]byte("t"), mark(500)), false), "block 75: bad record"},
		{"record lost", func(tx *bbolt.Tx) error {
			if err := putBlock("t", mark(500), true)(tx); err != nil {
				return err
			}
			return tx.Bucket(blocksBucket).Delete([]byte("t"))
		}, "block records do not match their digest"},
		{"mark beyond 2^63-1", putBlock("t", mark(math.MaxInt64+1), true), `tag "t": last ID reserved 9223372036854775808`},
		{"record is a bucket", func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(blocksBucket)
			if err != nil {
				return err
			}
			_, err = b.CreateBucket([]byte("t"))
			return err
		}, "block 74: bad record , want 12 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newLog(t)
			require.NoError(t, l.update(tt.setup))
			_, err := l.ReserveBlock(context.Background(), "t", 10)
			assert.ErrorIs(t, err, ErrCorrupt)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func TestReserveBlockExhausted(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	require.NoError(t, l.update(putBlock("t", mark(math.MaxInt64-10), true)))
	b, err := l.ReserveBlock(context.Background(), "t", 10)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: math.MaxInt64 - 9, Last: math.MaxInt64}, b)
	_, err = l.ReserveBlock(context.Background(), "t", 1)
	assert.ErrorIs(t, err, segment.ErrExhausted)
	assert.ErrorContains(t, err, `tag "t"`)
	// Other tags go on.
	b, err = l.ReserveBlock(context.Background(), "u", 1)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: 1, Last: 1}, b)
}

func TestReserveBlockInvalid(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	_, err := l.ReserveBlock(context.Background(), "a b", 10)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorIs(t, err, segment.ErrInvalid)
	_, err = l.ReserveBlock(context.Background(), "t", 0)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorIs(t, err, segment.ErrInvalid)
	assert.NoFileExists(t, l.path, "refused calls do not create the file")
}
