package launchlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	idstore "github.com/idkit/idkit/store"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
)

// filledLog returns the path of a valid log with launches, generator
// counters and marks spread over several pages.
func filledLog(t *testing.T) string {
	t.Helper()
	l := newLog(t)
	for i := range 40 {
		_, err := l.Begin(context.Background(), idstore.Info{Ticket: fmt.Sprintf("REL-%d", i), Note: string(make([]byte, 200))})
		require.NoError(t, err)
	}
	for i := range 5 {
		_, err := l.NextGenerator(context.Background(), i)
		require.NoError(t, err)
		_, err = l.AdvanceHighWater(context.Background(), fmt.Sprintf("key-%d", i), epoch)
		require.NoError(t, err)
	}
	return l.path
}

// filePageSize returns the page size of the bbolt file data, as its first
// meta page states it.
func filePageSize(t *testing.T, data []byte) int {
	t.Helper()
	require.GreaterOrEqual(t, len(data), 28, "a bbolt file")
	size := int(binary.NativeEndian.Uint32(data[24:])) // after the page header, magic and version
	require.True(t, size >= 512 && size&(size-1) == 0, "page size %d", size)
	return size
}

// newPageSize returns the page size of a new log's file.
func newPageSize(t *testing.T) int {
	t.Helper()
	l := newLog(t)
	_, err := l.NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	data, err := os.ReadFile(l.path)
	require.NoError(t, err)
	return filePageSize(t, data)
}

// testSeed returns the seed for a test's random damage, logged so that a
// failure can be replayed with LAUNCHLOG_SEED=seed.
func testSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LAUNCHLOG_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("seed %d (replay with LAUNCHLOG_SEED=%[1]d)", seed)
	return seed
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// checkNoPanic runs every operation on the file at path and requires each
// to return within a bound (no hang) with an error that is not ErrLocked:
// a panic fails the test binary, and a lock leaked by a recovered panic
// would make the later operations time out.
func checkNoPanic(t *testing.T, path string, wantCorrupt bool) {
	t.Helper()
	l, err := New(Options{Path: path, Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	for _, op := range ops(l) {
		done := make(chan error, 1)
		go func() { done <- op.call() }()
		select {
		case err := <-done:
			assert.NotErrorIs(t, err, ErrLocked, op.name)
			if wantCorrupt {
				assert.ErrorIs(t, err, ErrCorrupt, op.name)
				assert.ErrorContains(t, err, path, op.name)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%s hangs on %s", op.name, path)
		}
	}
}

func TestCorruptRandomFile(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(testSeed(t), 1))
	pageSize := newPageSize(t)
	for _, size := range []int{1, 100, pageSize - 1, pageSize, 2 * pageSize, 3*pageSize + 7, 64 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "launch.db")
			require.NoError(t, os.WriteFile(path, randomBytes(r, size), 0o600))
			checkNoPanic(t, path, true)
		})
	}
}

func TestCorruptDamagedLog(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(testSeed(t), 2))
	tests := []struct {
		name        string
		damage      func(b []byte, pageSize int) []byte
		wantCorrupt bool // else damage to unused bytes may go unnoticed
		random      bool // run many rounds
	}{
		{"meta pages zeroed", func(b []byte, pageSize int) []byte {
			clear(b[:2*pageSize])
			return b
		}, true, false},
		{"meta pages random", func(b []byte, pageSize int) []byte {
			copy(b, randomBytes(r, 2*pageSize))
			return b
		}, true, true},
		{"data pages random", func(b []byte, pageSize int) []byte {
			copy(b[2*pageSize:], randomBytes(r, len(b)-2*pageSize))
			return b
		}, true, true},
		{"data pages zeroed", func(b []byte, pageSize int) []byte {
			clear(b[2*pageSize:])
			return b
		}, true, false},
		{"bytes flipped in data pages", func(b []byte, pageSize int) []byte {
			for range 1 + r.IntN(64) {
				b[2*pageSize+r.IntN(len(b)-2*pageSize)] ^= byte(1 + r.IntN(255))
			}
			return b
		}, false, true},
		{"page header damaged", func(b []byte, pageSize int) []byte {
			p := 2 + r.IntN(len(b)/pageSize-2)
			for range 4 {
				b[p*pageSize+r.IntN(64)] ^= byte(1 + r.IntN(255))
			}
			return b
		}, false, true},
		{"truncated to the meta pages", func(b []byte, pageSize int) []byte { return b[:2*pageSize] }, true, false},
		{"truncated at random", func(b []byte, pageSize int) []byte { return b[:2*pageSize+r.IntN(len(b)-2*pageSize)] }, false, true},
		{"truncated inside a meta page", func(b []byte, pageSize int) []byte { return b[:pageSize+100] }, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filledLog(t)
			orig, err := os.ReadFile(path)
			require.NoError(t, err)
			pageSize := filePageSize(t, orig)
			rounds := 1
			if tt.random {
				rounds = 40 // random damage differs each time
			}
			for round := range rounds {
				damaged := tt.damage(bytes.Clone(orig), pageSize)
				require.NoError(t, os.WriteFile(path, damaged, 0o600))
				checkNoPanic(t, path, tt.wantCorrupt)
				checkNoReuse(t, path)
				fi, err := os.Stat(path)
				require.NoError(t, err)
				assert.LessOrEqual(t, fi.Size(), int64(len(orig)+4*pageSize), "round %d: damage made the file grow", round)
				if t.Failed() {
					t.Fatalf("round %d", round)
				}
			}
		})
	}
}

// checkNoReuse checks, on a damaged copy of filledLog, that every value
// handed out is one the undamaged log had not handed out: generator 0 of
// launches 0..4, launches 1..40 and marks at epoch were used.
func checkNoReuse(t *testing.T, path string) {
	t.Helper()
	l, err := New(Options{Path: path, Timeout: 300 * time.Millisecond})
	require.NoError(t, err)
	for i := range 5 {
		if g, err := l.NextGenerator(context.Background(), i); err == nil {
			assert.Positive(t, g, "launch %d reissued generator %d", i, g)
		}
		if m, err := l.HighWater(context.Background(), fmt.Sprintf("key-%d", i)); err == nil {
			assert.False(t, m.Before(epoch), "mark key-%d went back to %v", i, m)
		}
	}
	if launch, err := l.Begin(context.Background(), idstore.Info{}); err == nil {
		assert.Greater(t, launch.ID, 40, "launch id reissued")
	}
}

func TestCorruptRecords(t *testing.T) {
	t.Parallel()
	launch := func(v any) func(tx *bbolt.Tx) error {
		return func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(launchesBucket)
			if err != nil {
				return err
			}
			raw, ok := v.([]byte)
			if !ok {
				raw, _ = json.Marshal(v)
			}
			if err := b.SetSequence(1); err != nil {
				return err
			}
			return b.Put(idKey(1), raw)
		}
	}
	put := func(bucket []byte, k, v []byte) func(tx *bbolt.Tx) error {
		return func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucket)
			if err != nil {
				return err
			}
			return b.Put(k, v)
		}
	}
	nextGenerator := func(launch int) func(l *Log) error {
		return func(l *Log) error { _, err := l.NextGenerator(context.Background(), launch); return err }
	}
	highWater := func(key string) func(l *Log) error {
		return func(l *Log) error { _, err := l.HighWater(context.Background(), key); return err }
	}
	advance := func(key string) func(l *Log) error {
		return func(l *Log) error { _, err := l.AdvanceHighWater(context.Background(), key, epoch); return err }
	}
	tests := []struct {
		name  string
		setup func(tx *bbolt.Tx) error
		call  func(l *Log) error
		want  string
	}{
		{"launch is a bucket", func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(launchesBucket)
			if err != nil {
				return err
			}
			_, err = b.CreateBucket(idKey(1))
			return err
		}, func(l *Log) error { _, err := l.List(context.Background()); return err }, "launch key 00000001 beyond the last id handed out, 0"},
		{"launch is a bucket beyond the sequence", func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(launchesBucket)
			if err != nil {
				return err
			}
			_, err = b.CreateBucket(idKey(1))
			return err
		}, func(l *Log) error { _, err := l.Begin(context.Background(), idstore.Info{}); return err }, "launch key 00000001 beyond the last id handed out, 0"},
		{"generator counter is a bucket", func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(generatorsBucket)
			if err != nil {
				return err
			}
			_, err = b.CreateBucket(idKey(1))
			return err
		}, nextGenerator(1), "generator counter 00000001: bad record , want 8 bytes"},
		{"mark is a bucket", func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(highWaterBucket)
			if err != nil {
				return err
			}
			_, err = b.CreateBucket([]byte("k"))
			return err
		}, advance("k"), "high-water mark 6b: bad record , want 12 bytes"},
		{"launch not JSON", launch([]byte("{oops")), func(l *Log) error { _, err := l.Get(context.Background(), 1); return err }, "launch 1"},
		{"launch with unknown field", launch(map[string]any{"id": 1, "evil": true}), func(l *Log) error { _, err := l.Current(context.Background()); return err }, "launch 1"},
		{"launch under another id", launch(idstore.Launch{ID: 2}), func(l *Log) error { _, err := l.List(context.Background()); return err }, "launch 2 stored under key 1"},
		{"launch key too long", put(launchesBucket, []byte("12345"), []byte("{}")), func(l *Log) error { _, err := l.List(context.Background()); return err }, "launch key 3132333435"},
		{"launch beyond the sequence", put(launchesBucket, idKey(1), []byte(`{"id":1}`)), func(l *Log) error { _, err := l.Begin(context.Background(), idstore.Info{}); return err }, "launch key 00000001 beyond the last id handed out, 0"},
		{"launch beyond the sequence, read", put(launchesBucket, idKey(1), []byte(`{"id":1}`)), func(l *Log) error { _, err := l.Get(context.Background(), 1); return err }, "beyond the last id handed out"},
		{"unknown bucket", func(tx *bbolt.Tx) error {
			_, err := tx.CreateBucket([]byte("genarators"))
			return err
		}, nextGenerator(1), `unknown bucket "genarators"`},
		{"unknown bucket, read", func(tx *bbolt.Tx) error {
			_, err := tx.CreateBucket([]byte("highwatre"))
			return err
		}, highWater("k"), `unknown bucket "highwatre"`},
		{"generator counter lost", func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(generatorsBucket)
			if err != nil {
				return err
			}
			if err := putSealed(b, idKey(1), []byte{0, 0, 0, 9}); err != nil {
				return err
			}
			if err := putSealed(b, idKey(2), []byte{0, 0, 0, 9}); err != nil {
				return err
			}
			return b.Delete(idKey(1))
		}, nextGenerator(1), "generator counter records do not match their digest"},
		{"mark lost", func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(highWaterBucket)
			if err != nil {
				return err
			}
			if err := putSealed(b, []byte("k"), make([]byte, 8)); err != nil {
				return err
			}
			return b.Delete([]byte("k"))
		}, highWater("k"), "high-water mark records do not match their digest"},
		{"generator counter of 3 bytes", put(generatorsBucket, idKey(1), []byte{1, 2, 3}), nextGenerator(1), "generator counter 00000001: bad record 010203, want 8 bytes"},
		{"generator counter with a bad checksum", put(generatorsBucket, idKey(1), []byte{0, 0, 0, 9, 1, 2, 3, 4}), nextGenerator(1), "generator counter 00000001: bad record 0000000901020304"},
		{"generator counter turned back", put(generatorsBucket, idKey(1), func() []byte {
			v := seal(idKey(1), []byte{0, 0, 0, 9})
			v[3] = 2
			return v
		}()), nextGenerator(1), "generator counter 00000001: bad record"},
		{"generator counter under another launch", put(generatorsBucket, idKey(3), seal(idKey(1), []byte{0, 0, 0, 9})), nextGenerator(1), "generator counter 00000003: bad record"},
		{"damaged counter of another launch", put(generatorsBucket, idKey(3), []byte{0, 0, 0, 9, 0, 0, 0, 0}), nextGenerator(1), "generator counter 00000003: bad record"},
		{"generator counter past the end", func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(generatorsBucket)
			if err != nil {
				return err
			}
			return putSealed(b, idKey(1), []byte{0, 2, 0, 0})
		}, nextGenerator(1), "is 131072, want 0..=100000"},
		{"mark of 7 bytes", put(highWaterBucket, []byte("k"), make([]byte, 7)), highWater("k"), "high-water mark 6b: bad record 00000000000000, want 12 bytes"},
		{"mark of 13 bytes", put(highWaterBucket, []byte("k"), make([]byte, 13)), advance("k"), "want 12 bytes"},
		{"mark with a bad checksum", put(highWaterBucket, []byte("k"), make([]byte, 12)), highWater("k"), "high-water mark 6b: bad record"},
		{"mark under another key", put(highWaterBucket, []byte("j"), seal([]byte("k"), make([]byte, 8))), highWater("k"), "high-water mark 6a: bad record"},
		{"damaged mark of another key", put(highWaterBucket, []byte("j"), make([]byte, 12)), advance("k"), "high-water mark 6a: bad record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newLog(t)
			require.NoError(t, l.update(tt.setup))
			err := tt.call(l)
			assert.ErrorIs(t, err, ErrCorrupt)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}
