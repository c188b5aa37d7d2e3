package idtext

import (
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDigits writes runs of values that step by powers of ten and by other
// amounts, across carries and lengths, and compares with strconv.
func TestDigits(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	starts := []int64{0, 1, 8, 9, 98, 99, 999_999, 10_000_000_000, 99_999_999_999, math.MaxInt64 - 2000, 922337202 * 10_000_000_000}
	for range 50 {
		starts = append(starts, rng.Int64N(math.MaxInt64/2))
	}
	for _, v := range starts {
		var w Digits
		for range 1000 {
			w.Next(v)
			for _, asText := range []bool{false, true} {
				dst := make([]byte, 0, 32)
				got := string(AppendDigits(dst, &w, asText))
				want := `"` + strconv.FormatInt(v, 10) + `",`
				if asText {
					want = strconv.FormatInt(v, 10) + "\n"
				}
				require.Equal(t, want, got)
			}
			var step int64
			switch rng.IntN(4) {
			case 0:
				step = 1
			case 1:
				step = pow10[rng.IntN(19)]
			case 2:
				step = 10_000_000_000
			default:
				step = 1 + rng.Int64N(1000)
			}
			if v > math.MaxInt64-step {
				break
			}
			v += step
		}
	}
}

func TestOIDHex(t *testing.T) {
	t.Parallel()
	ids := [][12]byte{
		{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
		{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13},
		{1, 2, 3, 4, 5, 6, 7, 8, 9, 0xff, 0xff, 0xff},
		{1, 2, 3, 5, 5, 6, 7, 8, 9, 0, 0, 0},
		{0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, 0, 0xab, 0xcd, 0xef},
	}
	var h OIDHex
	for _, id := range ids {
		h.Next(&id)
		require.Equal(t, hex.EncodeToString(id[:])+"\n", string(AppendHex(make([]byte, 0, 32), &h, true)))
		require.Equal(t, `"`+hex.EncodeToString(id[:])+`",`, string(AppendHex(make([]byte, 0, 32), &h, false)))
	}
}
