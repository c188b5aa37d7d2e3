package scheme

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func streamOf(bits string) *bitStream {
	s := newBitStream(len(bits))
	for _, c := range bits {
		s.add(byte(c - '0'))
	}
	return s
}

// The worked examples of NIST SP 800-22 rev. 1a, sections 2.1.4 and 2.3.4.
func TestNISTExamples(t *testing.T) {
	t.Parallel()
	assert.InDelta(t, 0.527089, monobitP(streamOf("1011010101")), 1e-6)
	assert.InDelta(t, 0.147232, runsP(streamOf("1001101011")), 1e-6)
	// The runs test's prerequisite: far too many ones fails outright.
	assert.Zero(t, runsP(streamOf("1111111111111111111111111111111111111111111111110")))
}

func TestChiSquareP(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{0.1, 1, 2.5, 10, 40} {
		// Two degrees of freedom: the tail is exactly e^(-x/2).
		assert.InDelta(t, math.Exp(-x/2), chiSquareP(x, 2), 1e-12, "df 2, x %g", x)
		// One degree: the tail is erfc(sqrt(x/2)).
		assert.InDelta(t, math.Erfc(math.Sqrt(x/2)), chiSquareP(x, 1), 1e-12, "df 1, x %g", x)
	}
	// 255 degrees of freedom, against mpmath's gammainc(127.5, x/2,
	// inf, regularized=True).
	for x, want := range map[float64]float64{
		205.135: 0.990383714966924, 255: 0.488222521770406, 300: 0.0277275220539048, 310.457: 0.0100004021869795,
	} {
		assert.InDelta(t, want, chiSquareP(x, 255), 1e-12, "x %g", x)
	}
	assert.Equal(t, 1.0, chiSquareP(0, 255))
	assert.Less(t, chiSquareP(2000, 255), 1e-100)
}

// keysOf returns n keys of size bytes, key i made by f.
func keysOf(n, size int, f func(i int, key []byte)) engine.KeySet {
	k := engine.KeySet{Len: size, Data: make([]byte, n*size)}
	for i := range n {
		f(i, k.At(i))
	}
	return k
}

func TestRandomnessSeparates(t *testing.T) {
	t.Parallel()
	const n = 20_000
	r := rand.New(rand.NewPCG(1, 2)) // fixed, so that the random keys' p-values are fixed too
	random := keysOf(n, 16, func(_ int, key []byte) {
		binary.BigEndian.PutUint64(key, r.Uint64())
		binary.BigEndian.PutUint64(key[8:], r.Uint64())
		key[6] = key[6]&0x0f | 0x40 // a version field: constant bits are left out
		key[8] = key[8]&0x3f | 0x80
	})
	got := MeasureRandomness(random)
	require.True(t, got.Tested)
	assert.True(t, got.Random, "%+v", got)
	assert.Equal(t, 122, got.VaryingBits)
	assert.Equal(t, n, got.IDs)

	counter := keysOf(n, 8, func(i int, key []byte) { binary.BigEndian.PutUint64(key, uint64(i+1)) })
	got = MeasureRandomness(counter)
	require.True(t, got.Tested)
	assert.False(t, got.Random, "%+v", got)
	assert.Less(t, got.RunsP, RandomnessAlpha, "a counter's bits change too regularly")

	// A flake: milliseconds, a fixed worker and a sequence within each.
	flake := keysOf(n, 16, func(i int, key []byte) {
		binary.BigEndian.PutUint64(key, 1_700_000_000_000+uint64(i/7))
		binary.BigEndian.PutUint64(key[8:], 0x109add5e0e8f<<16|uint64(i%7))
	})
	got = MeasureRandomness(flake)
	assert.False(t, got.Random, "%+v", got)

	// Biased coins: monobit sees them.
	biased := keysOf(n, 8, func(_ int, key []byte) {
		var v uint64
		for b := range 64 {
			if r.Float64() < 0.55 {
				v |= 1 << b
			}
		}
		binary.BigEndian.PutUint64(key, v)
	})
	got = MeasureRandomness(biased)
	assert.Less(t, got.MonobitP, RandomnessAlpha, "%+v", got)

	// Balanced bits in a fixed pattern within each byte: the chi-square
	// test of the bytes sees what monobit cannot.
	s := newBitStream(8 * 4000)
	for range 4000 {
		x := byte(r.IntN(2)) * 0xff
		for b := range 8 {
			s.add((x ^ 0b10101010) >> b & 1)
		}
	}
	assert.Greater(t, monobitP(s), RandomnessAlpha)
	assert.Less(t, chiSquareBytesP(s), RandomnessAlpha)

	tooFew := MeasureRandomness(keysOf(3, 8, func(i int, key []byte) { key[7] = byte(i) }))
	assert.False(t, tooFew.Tested)
	assert.False(t, tooFew.Random)
}
