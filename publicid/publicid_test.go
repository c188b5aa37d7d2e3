package publicid

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testKey(id int, b byte) Key { return Key{ID: id, Secret: bytes.Repeat([]byte{b}, 16)} }

// TestExhaustiveBijection checks, value by value, that FF1 walked past 0
// permutes the IDs of a 20-bit domain (FF1's smallest binary one),
// 1 to 2^20-1: every ID maps to an ID, no two to the same one, decrypt
// inverts encrypt, and the one ID that FF1 maps to 0 takes 0's image.
func TestExhaustiveBijection(t *testing.T) {
	t.Parallel()
	const bits = 20
	const n = 1 << bits
	p, err := newPerm(bytes.Repeat([]byte{7}, 16), bits)
	require.NoError(t, err)
	walked, err := p.ff1.Decrypt(0)
	require.NoError(t, err)
	require.NotZero(t, walked)
	imageOfZero, err := p.ff1.Encrypt(0)
	require.NoError(t, err)

	seen := make([]bool, n)
	fixed := 0
	for x := uint64(1); x < n; x++ {
		y, err := p.encrypt(x)
		if err != nil || y == 0 || y >= n {
			t.Fatalf("encrypt(%d) = %d, %v: not an ID of the domain", x, y, err)
		}
		if seen[y] {
			t.Fatalf("encrypt(%d) = %d, the image of another ID too", x, y)
		}
		seen[y] = true
		if back, err := p.decrypt(y); err != nil || back != x {
			t.Fatalf("decrypt(encrypt(%d)) = %d, %v", x, back, err)
		}
		if x == walked && y != imageOfZero {
			t.Fatalf("the ID FF1 maps to 0, %d, maps to %d, want FF1(0) = %d", x, y, imageOfZero)
		}
		if y == x {
			fixed++
		}
	}
	assert.Less(t, fixed, 20, "a random permutation has about one fixed point")
}

// TestWalkPastZero checks the one ID of each domain that FF1 maps to 0:
// Permute gives it FF1(0), and Unpermute brings it back.
func TestWalkPastZero(t *testing.T) {
	t.Parallel()
	for _, d := range []Domain{Domain63, Domain53} {
		c, err := New(d, testKey(3, 0xA5))
		require.NoError(t, err)
		f := c.current.ff1
		id, err := f.Decrypt(0)
		require.NoError(t, err)
		want, err := f.Encrypt(0)
		require.NoError(t, err)
		got, err := c.Permute(int64(id))
		require.NoError(t, err)
		assert.Equal(t, int64(want), got, "domain %d", d)
		back, err := c.Unpermute(got)
		require.NoError(t, err)
		assert.Equal(t, int64(id), back)
		s, err := c.Encode(int64(id))
		require.NoError(t, err)
		back, err = c.Decode(s)
		require.NoError(t, err)
		assert.Equal(t, int64(id), back)
	}
}

// roundTrips is how many random values each domain round-trips: 10^7, or
// 10^5 under the race detector, which makes each ID about 10 times slower.
func roundTrips() int {
	if raceEnabled || testing.Short() {
		return 100_000
	}
	return 10_000_000
}

func TestRoundTripsRandom(t *testing.T) {
	t.Parallel()
	n := roundTrips()
	for _, d := range []Domain{Domain63, Domain53} {
		t.Run(d.name(), func(t *testing.T) {
			t.Parallel()
			c, err := New(d, testKey(3, 0xA5))
			require.NoError(t, err)
			const workers = 4
			seed := rand.Uint64()
			t.Logf("seed %d", seed)
			var wg sync.WaitGroup
			errs := make(chan string, workers)
			for w := range workers {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(seed, uint64(w)))
					for range n / workers {
						id := 1 + r.Int64N(d.Max())
						v, err := c.Permute(id)
						if err != nil || v < 1 || v > d.Max() {
							errs <- err.Error()
							return
						}
						back, err := c.Unpermute(v)
						if err != nil || back != id {
							errs <- "Unpermute(Permute(id)) != id"
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Fatal(e)
			}
			// The text form, on fewer values: it adds only formatting.
			r := rand.New(rand.NewPCG(seed, 99))
			for _, id := range append([]int64{1, 2, d.Max() - 1, d.Max()}, r.Int64N(d.Max())+1, r.Int64N(d.Max())+1) {
				s, err := c.Encode(id)
				require.NoError(t, err)
				require.Len(t, s, d.TextLen())
				back, err := c.Decode(s)
				require.NoError(t, err)
				require.Equal(t, id, back, s)
			}
		})
	}
}

func (d Domain) name() string {
	if d == Domain53 {
		return "53"
	}
	return "63"
}

func TestKeysGiveDifferentPermutations(t *testing.T) {
	t.Parallel()
	for _, d := range []Domain{Domain63, Domain53} {
		a, err := New(d, testKey(0, 1))
		require.NoError(t, err)
		b, err := New(d, testKey(0, 2))
		require.NoError(t, err)
		same := 0
		for id := int64(1); id <= 1000; id++ {
			x, _ := a.Permute(id)
			y, _ := b.Permute(id)
			if x == y {
				same++
			}
		}
		assert.Zero(t, same, "two keys agree on %d of 1,000 IDs", same)
	}
	// The same key on the two domains gives unrelated permutations too.
	a, _ := New(Domain63, testKey(0, 1))
	b, _ := New(Domain53, testKey(0, 1))
	x, _ := a.Permute(12345)
	y, _ := b.Permute(12345)
	assert.NotEqual(t, x&(1<<53-1), y)
}

func TestKeyRotation(t *testing.T) {
	t.Parallel()
	old, cur := testKey(1, 0x11), testKey(2, 0x22)
	before, err := New(Domain63, old)
	require.NoError(t, err)
	issued, err := before.Encode(4242)
	require.NoError(t, err)
	assert.Equal(t, byte('1'), issued[0], "the text starts with its key id")

	after, err := New(Domain63, cur, old)
	require.NoError(t, err)
	got, err := after.Decode(issued)
	require.NoError(t, err)
	assert.Equal(t, int64(4242), got, "a public ID of the old key still decodes")
	fresh, err := after.Encode(4242)
	require.NoError(t, err)
	assert.Equal(t, byte('2'), fresh[0])
	assert.NotEqual(t, issued[1:], fresh[1:])

	retired, err := New(Domain63, cur)
	require.NoError(t, err)
	_, err = retired.Decode(issued)
	require.ErrorIs(t, err, ErrUnknownKey)
	assert.EqualError(t, err, `publicid: unknown key: "`+issued+`" was made under key 1, and the codec holds keys 2`)
	_, err = retired.UnpermuteWith(1, 5)
	assert.ErrorIs(t, err, ErrUnknownKey)
	v, _ := before.Permute(4242)
	got, err = after.UnpermuteWith(1, v)
	require.NoError(t, err)
	assert.Equal(t, int64(4242), got)
}

func TestText(t *testing.T) {
	t.Parallel()
	c, err := New(Domain63, testKey(30, 9))
	require.NoError(t, err)
	s, err := c.Encode(1)
	require.NoError(t, err)
	assert.Len(t, s, 14)
	assert.Equal(t, byte('Y'), s[0])
	assert.Contains(t, "89ABCDEF", s[1:2], "the first digit's top two bits are the construction, 1")
	for _, r := range s {
		assert.True(t, strings.ContainsRune(Alphabet, r), "%q in %s", r, s)
	}
	for _, variant := range []string{strings.ToLower(s), confuse(s)} {
		got, err := c.Decode(variant)
		require.NoError(t, err, variant)
		assert.Equal(t, int64(1), got, variant)
	}
	for _, tt := range []struct {
		text string
		err  error
		msg  string
	}{
		{s[:13], ErrSyntax, "has 13 characters, want 14"},
		{s + "0", ErrSyntax, "want 14"},
		{s[:5] + "U" + s[6:], ErrSyntax, "character 6 is 'U'"},
		{s[:5] + "-" + s[6:], ErrSyntax, "character 6 is '-'"},
		{"Y8000000000000", ErrSyntax, "its number is 0, want 1 to 9223372036854775807"},
		{"Y0000000000001", ErrUnknownConstruction, "construction 0, publicid's AES Feistel network before FF1"},
		{"Y7ZZZZZZZZZZZZ", ErrUnknownConstruction, "construction 0"},
		{"YG000000000001", ErrUnknownConstruction, "construction 2, which this version of publicid does not know"},
		{"YZZZZZZZZZZZZZ", ErrUnknownConstruction, "construction 3"},
		{"*" + s[1:], ErrSyntax, "key character '*'"},
		{"A" + s[1:], ErrUnknownKey, "made under key A, and the codec holds keys Y"},
	} {
		_, err := c.Decode(tt.text)
		assert.ErrorIs(t, err, tt.err, tt.text)
		assert.ErrorContains(t, err, tt.msg, tt.text)
	}
	max63, err := c.Decode("YFZZZZZZZZZZZZ")
	require.NoError(t, err, "the largest public number")
	assert.Positive(t, max63)
	c53, err := New(Domain53, testKey(0, 9))
	require.NoError(t, err)
	s53, err := c53.Encode(c53.Domain().Max())
	require.NoError(t, err)
	assert.Len(t, s53, 12)
	assert.Contains(t, "89ABCDEF", s53[1:2], "the first digit's top two bits are the construction, 1")
	_, err = c53.Decode("07ZZZZZZZZZZ")
	assert.ErrorIs(t, err, ErrUnknownConstruction)
	_, err = c53.Decode("0G0000000000")
	assert.ErrorIs(t, err, ErrUnknownConstruction)
	max53, err := c53.Decode("0FZZZZZZZZZZ")
	require.NoError(t, err, "the largest public number")
	assert.Positive(t, max53)
}

// confuse writes 0 as O and 1 as I or L, as a reader may.
func confuse(s string) string {
	b := []byte(s)
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '0':
			b[i] = 'O'
		case '1':
			b[i] = "IL"[i%2]
		}
	}
	return string(b)
}

func TestRanges(t *testing.T) {
	t.Parallel()
	c, err := New(Domain53, testKey(0, 9))
	require.NoError(t, err)
	for _, id := range []int64{0, -1, 1 << 53} {
		_, err := c.Encode(id)
		assert.ErrorIs(t, err, ErrRange)
		assert.ErrorContains(t, err, "want 1 to 9007199254740991")
		_, err = c.Unpermute(id)
		assert.ErrorIs(t, err, ErrRange)
	}
	for i := int64(1); i < 2000; i++ {
		v, err := c.Permute(i)
		require.NoError(t, err)
		require.LessOrEqual(t, v, int64(1<<53-1), "a JavaScript-safe number")
		require.Positive(t, v)
	}
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d    Domain
		keys []Key
		msg  string
	}{
		{Domain(64), []Key{testKey(0, 1)}, "domain 64, want Domain63 or Domain53"},
		{Domain63, nil, "no key"},
		{Domain63, []Key{testKey(32, 1)}, "key id 32, want 0 to 31"},
		{Domain63, []Key{testKey(4, 1), testKey(4, 2)}, "key id 4 (4) appears twice"},
		{Domain63, []Key{{ID: 1, Secret: []byte("short")}}, "secret of 5 bytes, want 16, 24 or 32"},
	} {
		_, err := New(tt.d, tt.keys...)
		assert.ErrorIs(t, err, ErrInvalid, tt.msg)
		assert.ErrorContains(t, err, tt.msg)
	}
}

func TestKeyFile(t *testing.T) {
	t.Parallel()
	a, err := NewKey(5)
	require.NoError(t, err)
	b, err := NewKey(17)
	require.NoError(t, err)
	assert.NotEqual(t, a.Secret, b.Secret)
	file := "# current first\n" + b.KeyLine() + "\n\n" + a.KeyLine() + "\n"
	keys, err := ParseKeys([]byte(file))
	require.NoError(t, err)
	assert.Equal(t, []Key{b, a}, keys)
	keys, err = ParseKeys([]byte("17 " + strings.Repeat("ab", 16)))
	require.NoError(t, err)
	assert.Equal(t, 17, keys[0].ID)
	for _, bad := range []string{"", "# none\n", "5", "U 00", "5 zz", "32 00", "5 00 00"} {
		_, err := ParseKeys([]byte(bad))
		assert.ErrorIs(t, err, ErrInvalid, "%q", bad)
	}
	_, err = NewKey(32)
	assert.ErrorIs(t, err, ErrInvalid)
}
