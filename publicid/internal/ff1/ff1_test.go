package ff1

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func randomNumerals(r *rand.Rand, radix, n int) []uint16 {
	x := make([]uint16, n)
	for i := range x {
		x[i] = uint16(r.IntN(radix))
	}
	return x
}

func TestMinLen(t *testing.T) {
	t.Parallel()
	for radix, want := range map[int]int{2: 20, 3: 13, 10: 6, 36: 4, 100: 3, 101: 3, 999: 3, 1000: 2, 1 << 16: 2} {
		c, err := New(make([]byte, 16), radix)
		require.NoError(t, err)
		assert.Equal(t, want, c.MinLen(), "radix %d", radix)
		assert.Equal(t, radix, c.Radix())
	}
}

// TestRoundTrip decrypts what it encrypts over radices, lengths and tweaks
// that reach every branch of the algorithm: odd and even lengths, NUM(B)
// of 1 to 20 bytes, S of more than one block (d > 16), tweaks that fill
// Q to one block, exactly one, and several.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	for _, radix := range []int{2, 3, 10, 36, 255, 256, 1000, 65535, 1 << 16} {
		c, err := New(randomBytes(r, []int{16, 24, 32}[r.IntN(3)]), radix)
		require.NoError(t, err)
		for _, n := range []int{c.MinLen(), c.MinLen() + 1, 21, 40, 61, 130} {
			if n < c.MinLen() {
				continue
			}
			for _, tlen := range []int{0, 1, 11, 16, 17, 40} {
				x := randomNumerals(r, radix, n)
				tweak := randomBytes(r, tlen)
				y, err := c.Encrypt(x, tweak)
				require.NoError(t, err)
				require.Len(t, y, n)
				for _, d := range y {
					require.Less(t, int(d), radix)
				}
				back, err := c.Decrypt(y, tweak)
				require.NoError(t, err)
				require.Equal(t, x, back, "radix %d, length %d, tweak of %d bytes", radix, n, tlen)
				if n >= 10 {
					assert.NotEqual(t, x, y, "radix %d, length %d: a string encrypts to itself", radix, n)
					other := append(slices.Clone(tweak), 1)
					z, err := c.Encrypt(x, other)
					require.NoError(t, err)
					assert.NotEqual(t, y, z, "radix %d, length %d: another tweak, the same ciphertext", radix, n)
				}
			}
		}
	}
}

func bitsOf(x uint64, n int) []uint16 {
	s := make([]uint16, n)
	for i := range s {
		s[i] = uint16(x >> (n - 1 - i) & 1)
	}
	return s
}

// TestBinaryMatchesCipher checks the fixed-width FF1 against the general
// one, which the NIST samples check, on every length Binary takes and all
// three key sizes.
func TestBinaryMatchesCipher(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 2))
	for n := MinBinaryLen; n <= MaxBinaryLen; n++ {
		key := randomBytes(r, []int{16, 24, 32}[n%3])
		f, err := NewBinary(key, n)
		require.NoError(t, err)
		assert.Equal(t, n, f.Len())
		c, err := New(key, 2)
		require.NoError(t, err)
		top := uint64(1)<<(n-1) - 1 + uint64(1)<<(n-1) // 2^n-1 without overflow at n = 64
		for _, x := range []uint64{0, 1, top, r.Uint64() & top, r.Uint64() & top} {
			y, err := f.Encrypt(x)
			require.NoError(t, err)
			want, err := c.Encrypt(bitsOf(x, n), nil)
			require.NoError(t, err)
			require.Equal(t, want, bitsOf(y, n), "n=%d, x=%#x", n, x)
			back, err := f.Decrypt(y)
			require.NoError(t, err)
			require.Equal(t, x, back, "n=%d", n)
		}
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 3))
	for _, n := range []int{20, 53, 63, 64} {
		f, err := NewBinary(randomBytes(r, 16), n)
		require.NoError(t, err)
		for range 10_000 {
			x := r.Uint64() >> (64 - n)
			y, err := f.Encrypt(x)
			require.NoError(t, err)
			require.Zero(t, y>>(n-1)>>1, "n=%d: %#x has more than n bits", n, y)
			back, err := f.Decrypt(y)
			require.NoError(t, err)
			require.Equal(t, x, back, "n=%d", n)
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	key := make([]byte, 16)
	for _, n := range []int{0, 8, 15, 17, 33} {
		_, err := New(make([]byte, n), 10)
		assert.ErrorIs(t, err, ErrKey, "key of %d bytes", n)
		assert.ErrorContains(t, err, "want 16, 24 or 32")
		_, err = NewBinary(make([]byte, n), 63)
		assert.ErrorIs(t, err, ErrKey)
	}
	for _, radix := range []int{-1, 0, 1, 1<<16 + 1} {
		_, err := New(key, radix)
		assert.ErrorIs(t, err, ErrRadix, "radix %d", radix)
		assert.ErrorContains(t, err, "want 2 to 65536")
	}
	c, err := New(key, 10)
	require.NoError(t, err)
	for _, tt := range []struct {
		x   []uint16
		err error
		msg string
	}{
		{nil, ErrLength, "0 numerals of radix 10, want 6 to 4294967295 (radix^length at least 1000000)"},
		{numerals("12345"), ErrLength, "5 numerals of radix 10, want 6"},
		{[]uint16{1, 2, 3, 4, 5, 10}, ErrNumeral, "numeral 5 is 10, want 0 to 9 (radix 10)"},
	} {
		_, err := c.Encrypt(tt.x, nil)
		assert.ErrorIs(t, err, tt.err)
		assert.ErrorContains(t, err, tt.msg)
		_, err = c.Decrypt(tt.x, nil)
		assert.ErrorIs(t, err, tt.err)
	}
	c2, err := New(key, 2)
	require.NoError(t, err)
	_, err = c2.Encrypt(make([]uint16, 19), nil)
	assert.ErrorContains(t, err, "19 numerals of radix 2, want 20")

	for _, n := range []int{-1, 0, 19, 65} {
		_, err := NewBinary(key, n)
		assert.ErrorIs(t, err, ErrLength, "n=%d", n)
		assert.ErrorContains(t, err, "want 20 to 64")
	}
	f, err := NewBinary(key, 53)
	require.NoError(t, err)
	for _, x := range []uint64{1 << 53, 1<<64 - 1} {
		_, err := f.Encrypt(x)
		assert.ErrorIs(t, err, ErrNumeral)
		assert.ErrorContains(t, err, "not a string of 53 bits, want below 2^53")
		_, err = f.Decrypt(x)
		assert.ErrorIs(t, err, ErrNumeral)
	}
}

// TestKeysAndLengthsSeparate checks that keys, lengths and key sizes give
// different permutations: the length is in P, the key in every block.
func TestKeysAndLengthsSeparate(t *testing.T) {
	t.Parallel()
	k16 := bytes.Repeat([]byte{1}, 16)
	k24 := bytes.Repeat([]byte{1}, 24)
	a, _ := NewBinary(k16, 63)
	b, _ := NewBinary(bytes.Repeat([]byte{2}, 16), 63)
	c, _ := NewBinary(k24, 63)
	d, _ := NewBinary(k16, 64)
	same := 0
	for x := range uint64(1000) {
		ya, _ := a.Encrypt(x)
		yb, _ := b.Encrypt(x)
		yc, _ := c.Encrypt(x)
		yd, _ := d.Encrypt(x)
		if ya == yb || ya == yc || ya == yd {
			same++
		}
	}
	assert.Zero(t, same)
}
