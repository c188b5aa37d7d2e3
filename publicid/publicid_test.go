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

// TestSmallDomainsBijection checks, value by value, that the network with
// cycle walking is a permutation of small domains, including sizes that
// are not powers of two (most values walk) and tiny ones.
func TestSmallDomainsBijection(t *testing.T) {
	t.Parallel()
	for _, n := range []uint64{2, 3, 5, 16, 17, 1000, 1024, 1025, 4099} {
		p, err := newPerm(bytes.Repeat([]byte{7}, 16), n)
		require.NoError(t, err)
		seen := make([]bool, n)
		walked := 0
		buf := new([16]byte)
		for x := range n {
			y := p.encrypt(x)
			require.Less(t, y, n, "n=%d: %d maps outside the domain", n, x)
			require.False(t, seen[y], "n=%d: %d is the image of two values", n, y)
			seen[y] = true
			require.Equal(t, x, p.decrypt(y), "n=%d: decrypt(encrypt(%d))", n, x)
			if p.feistel(buf, x) >= n {
				walked++
			}
		}
		if n&(n-1) != 0 && n > 4 {
			assert.Positive(t, walked, "n=%d: some values walk the cycle", n)
		}
		var fixed int
		for x := range n {
			if p.encrypt(x) == x {
				fixed++
			}
		}
		assert.Less(t, fixed, int(n/4)+3, "n=%d: a permutation, not the identity", n)
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
		{"Y0000000000000", ErrSyntax, "its number 0 is outside 1 to 9223372036854775807"},
		{"YZZZZZZZZZZZZZ", ErrSyntax, "above 9223372036854775807"},
		{"Y8000000000000", ErrSyntax, "above 9223372036854775807"},
		{"YG000000000001", ErrSyntax, "above"}, // 65 bits: would wrap to 1
		{"*" + s[1:], ErrSyntax, "key character '*'"},
		{"A" + s[1:], ErrUnknownKey, "made under key A, and the codec holds keys Y"},
	} {
		_, err := c.Decode(tt.text)
		assert.ErrorIs(t, err, tt.err, tt.text)
		assert.ErrorContains(t, err, tt.msg, tt.text)
	}
	c53, err := New(Domain53, testKey(0, 9))
	require.NoError(t, err)
	s53, err := c53.Encode(c53.Domain().Max())
	require.NoError(t, err)
	assert.Len(t, s53, 12)
	assert.Less(t, s53[1], byte('8'), "a 53-bit number leaves the first digit's top two bits 0")
	_, err = c53.Decode("08ZZZZZZZZZZ")
	assert.ErrorIs(t, err, ErrSyntax)
	max, err := c53.Decode("07ZZZZZZZZZZ")
	require.NoError(t, err, "the largest public number")
	assert.Positive(t, max)
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
	file := "# current first\n" + b.String() + "\n\n" + a.String() + "\n"
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
