package compare

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
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
	got := measureRandomness(random)
	require.True(t, got.Tested)
	assert.True(t, got.Random, "%+v", got)
	assert.Equal(t, 122, got.VaryingBits)
	assert.Equal(t, n, got.IDs)

	counter := keysOf(n, 8, func(i int, key []byte) { binary.BigEndian.PutUint64(key, uint64(i+1)) })
	got = measureRandomness(counter)
	require.True(t, got.Tested)
	assert.False(t, got.Random, "%+v", got)
	assert.Less(t, got.RunsP, RandomnessAlpha, "a counter's bits change too regularly")

	// A flake: milliseconds, a fixed worker and a sequence within each.
	flake := keysOf(n, 16, func(i int, key []byte) {
		binary.BigEndian.PutUint64(key, 1_700_000_000_000+uint64(i/7))
		binary.BigEndian.PutUint64(key[8:], 0x109add5e0e8f<<16|uint64(i%7))
	})
	got = measureRandomness(flake)
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
	got = measureRandomness(biased)
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

	tooFew := measureRandomness(keysOf(3, 8, func(i int, key []byte) { key[7] = byte(i) }))
	assert.False(t, tooFew.Tested)
	assert.False(t, tooFew.Random)
}

// TestReportRandomnessSeparatesSchemes runs the schemes and checks that the
// randomness columns tell them apart: random UUIDs and public IDs pass
// every test, counters and time-based IDs (flakes, snowflakes, TraceIds,
// ObjectIDs) fail, for one writer and for interleaved writers alike.
func TestReportRandomnessSeparatesSchemes(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	want := map[string]bool{
		"uuidv4": true, "publicid-63": true, "publicid-53": true,
		"counter": false, "flake128": false, "snowflake": false, "bwmarrin-snowflake": false, "sonyflake": false,
		"traceid": false, "decimalid": false, "objectid": false, "uuidv7": false, "ulid": false, "xid": false,
	}
	seen := 0
	for _, s := range r.Schemes {
		random, ok := want[s.Name]
		if !ok {
			continue
		}
		seen++
		for _, run := range s.Runs {
			got := run.Randomness
			require.True(t, got.Tested, "%s, %d writers: %+v", s.Name, run.Writers, got)
			assert.Equal(t, random, got.Random, "%s, %d writers: %+v", s.Name, run.Writers, got)
		}
	}
	assert.Equal(t, len(want), seen, "every scheme of the list ran")

	var table, page bytes.Buffer
	require.NoError(t, r.WriteTable(&table))
	require.NoError(t, r.WriteHTML(&page))
	for _, out := range []string{table.String(), page.String()} {
		assert.Contains(t, out, "RANDOMNESS OF THE ID BITS")
		assert.Contains(t, out, "guessable")
	}
	rows := tableRows(t, table.String(), "RANDOMNESS OF THE ID BITS")
	for name, random := range want {
		guess := "yes"
		if random {
			guess = "no"
		}
		assert.Equal(t, guess, rows[name+"/1"], "%s's guessable cell, one writer", name)
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"randomness":{"ids":`)
}

// tableRows returns the last cell of each row of the text table whose
// title starts with title, by scheme/writers.
func tableRows(t *testing.T, text, title string) map[string]string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "\n"+title)
	require.True(t, ok, "table %q", title)
	rows := map[string]string{}
	lines := strings.Split(rest, "\n")
	for _, line := range lines[2:] {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(line, "  ") && !strings.HasPrefix(strings.TrimSpace(line), f[0]) {
			break
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			break
		}
		rows[f[0]+"/"+f[1]] = f[len(f)-1]
	}
	return rows
}

// TestVerdictUnguessable rejects, under need=unguessable, exactly the
// schemes whose keys failed a randomness test.
func TestVerdictUnguessable(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	v, err := r.Decide(Need{Unguessable: true}, engine.Bbolt)
	require.NoError(t, err)
	assert.Equal(t, "unguessable", v.Need)
	reasons := map[string]string{}
	for _, x := range v.Rejected {
		reasons[x.Scheme] = x.Reason
	}
	for _, name := range []string{"flake128", "snowflake", "traceid", "uuidv7"} {
		assert.Contains(t, reasons[name], "IDs can be guessed: ", name)
		assert.Contains(t, reasons[name], "package publicid", name)
	}
	for _, name := range []string{"uuidv4", "publicid-63", "publicid-53"} {
		assert.NotContains(t, reasons[name], "guessed", "%s passed the tests", name)
	}
}
