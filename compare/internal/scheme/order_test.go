package scheme

import (
	"bytes"
	"encoding/binary"
	mathrand "math/rand"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/quick"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uints returns a key set of 8-byte big-endian keys.
func uints(vs ...uint64) engine.KeySet { return engine.Uint64Keys(vs...) }

func seq(from, n uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = from + uint64(i)
	}
	return out
}

func TestAnalyze(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		keys    engine.KeySet
		appends float64
		inv     int64
		invFrac float64
		dups    int
		packed  float64
		maxBits int
	}{
		{name: "sorted", keys: uints(seq(1, 100)...), appends: 1, packed: 1, maxBits: 7},
		{name: "reversed", keys: uints(5, 4, 3, 2, 1), appends: 0.2, inv: 10, invFrac: 1, packed: 1, maxBits: 3},
		{name: "one swap", keys: uints(1, 3, 2, 4), appends: 0.75, inv: 1, invFrac: 1.0 / 6, packed: 1, maxBits: 3},
		{name: "duplicate", keys: uints(7, 7, 8), appends: 2.0 / 3, dups: 1, packed: 1, maxBits: 4},
		{name: "one key", keys: uints(1 << 62), appends: 1, packed: 9, maxBits: 63},
		// Deltas of 127 fit one varint byte, 128 needs two.
		{name: "varint edge", keys: uints(127, 255), appends: 1, packed: 1.5, maxBits: 8},
		{name: "zero key", keys: uints(0), appends: 1, packed: 1, maxBits: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, s := Analyze(tt.keys)
			assert.InDelta(t, tt.appends, o.Appends, 1e-9, "appends")
			assert.Equal(t, tt.inv, o.Inversions, "inversions")
			assert.InDelta(t, tt.invFrac, o.InversionFraction, 1e-9, "inversion fraction")
			assert.Equal(t, tt.dups, o.Duplicates, "duplicates")
			assert.InDelta(t, tt.packed, s.PackedBytesPerID, 1e-9, "packed bytes per ID")
			assert.Equal(t, 8, s.KeyBytes)
			assert.Equal(t, tt.maxBits, s.MaxBits, "max bits")
		})
	}
}

// bruteInversions counts inversions by comparing every pair.
func bruteInversions(k engine.KeySet) int64 {
	var n int64
	for i := range k.N() {
		for j := i + 1; j < k.N(); j++ {
			if bytes.Compare(k.At(i), k.At(j)) > 0 {
				n++
			}
		}
	}
	return n
}

// TestSortCountProperty checks the merge-sort inversion count and order
// against brute force on random key sets (the seed is printed so that a
// failure can be replayed).
func TestSortCountProperty(t *testing.T) {
	t.Parallel()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	cfg := &quick.Config{MaxCount: 200, Rand: mathrand.New(mathrand.NewSource(seed))}
	prop := func(raw []byte, width uint8) bool {
		l := 1 + int(width)%3
		k := engine.KeySet{Len: l, Data: raw[:len(raw)/l*l]}
		sorted, inv := sortCount(k)
		if inv != bruteInversions(k) {
			return false
		}
		return slices.IsSortedFunc(sorted, func(a, b int32) int { return bytes.Compare(k.At(int(a)), k.At(int(b))) })
	}
	require.NoError(t, quick.Check(prop, cfg))
}

func TestRandomKeysLookRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	vs := make([]uint64, 20_000)
	for i := range vs {
		vs[i] = r.Uint64()
	}
	o, s := Analyze(uints(vs...))
	assert.InDelta(t, 0.5, o.InversionFraction, 0.02)
	assert.Less(t, o.Appends, 0.01)
	// 20,000 random 64-bit values are about 2^49.7 apart: deltas of 49 or
	// 50 bits take 7 or 8 varint bytes.
	assert.GreaterOrEqual(t, s.PackedBytesPerID, 7.0)
	assert.LessOrEqual(t, s.PackedBytesPerID, 8.0)
}

func TestPackRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		keys [][]byte
	}{
		{"empty", nil},
		{"zero", [][]byte{{0, 0}}},
		{"small", [][]byte{{0, 1}, {0, 2}, {0, 200}, {1, 0}, {255, 255}}},
		{"equal", [][]byte{{9}, {9}, {9}}},
		{"wide", [][]byte{bytes.Repeat([]byte{0}, 20), bytes.Repeat([]byte{0xff}, 20)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkPack(t, tt.keys)
		})
	}
}

func checkPack(t *testing.T, keys [][]byte) {
	t.Helper()
	l := 1
	if len(keys) > 0 {
		l = len(keys[0])
	}
	packed := packKeys(keys, l)
	k := engine.KeySet{Len: l, Data: bytes.Join(keys, nil)}
	idx := make([]int32, len(keys))
	for i := range idx {
		idx[i] = int32(i)
	}
	assert.Equal(t, len(packed), packedSize(k, idx), "packedSize counts what packKeys writes")
	got, err := unpackKeys(packed, l)
	require.NoError(t, err)
	if len(keys) == 0 {
		assert.Empty(t, got)
		return
	}
	assert.Equal(t, keys, got)
}

func TestUnpackErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		b    []byte
		l    int
		want string
	}{
		{"truncated", []byte{0x80}, 2, "truncated varint"},
		{"too long", []byte{0xff, 0xff, 0xff, 0x7f}, 2, "varint longer than 2 bytes"},
		{"overflow", []byte{0xff, 0x01, 0x01}, 1, "delta overflows 1 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := unpackKeys(tt.b, tt.l)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrKey)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// FuzzPack checks that any sorted key set packs, unpacks to itself, and
// that packedSize agrees with the encoding.
func FuzzPack(f *testing.F) {
	f.Add(uint8(2), []byte{0, 1, 0, 2, 0, 200, 1, 0, 255, 255})
	f.Add(uint8(1), []byte{9, 9, 9})
	f.Add(uint8(20), bytes.Repeat([]byte{0xff}, 40))
	f.Add(uint8(8), binary.BigEndian.AppendUint64(nil, 1<<62))
	f.Fuzz(func(t *testing.T, width uint8, raw []byte) {
		l := 1 + int(width)%24
		var keys [][]byte
		for i := 0; i+l <= len(raw); i += l {
			keys = append(keys, raw[i:i+l])
		}
		slices.SortFunc(keys, bytes.Compare)
		checkPack(t, keys)
	})
}

// FuzzSelect checks that any list either selects known schemes or fails
// with ErrUnknownScheme, never panics.
func FuzzSelect(f *testing.F) {
	for _, s := range []string{"", "all", "counter,uuidv4", "UUIDv4, counter", "uuidv5", "counter,,uuidv4", ","} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got, err := Select(list)
		if err != nil {
			assert.ErrorIs(t, err, ErrUnknownScheme)
			return
		}
		assert.NotEmpty(t, got)
		for _, s := range got {
			_, err := Lookup(s.Name)
			assert.NoError(t, err)
		}
	})
}
