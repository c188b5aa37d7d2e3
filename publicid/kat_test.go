package publicid

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/publicid/internal/ff1"
)

// pinned are public IDs made by FF1 (construction 1) under a fixed key, as
// it first produced them. Public IDs handed out must decode forever, so
// any change to the permutation, the walk past 0 or the text form fails
// here first: such a change needs a new construction version, not an edit
// of these strings.
var pinned = []struct {
	domain Domain
	id     int64
	text   string
}{
	{Domain63, 1, "7EGSJCREQ9RJ9Y"},
	{Domain63, 2, "7FJBFAQ7FN4WBD"},
	{Domain63, 9223372036854775807, "7D9Q98X7KMBRV1"},
	{Domain53, 1, "79GNPDVTZWAR"},
	{Domain53, 2, "79148YPZNX46"},
	{Domain53, 9007199254740991, "7CS0KJYXHNF1"},
}

// beforeFF1 are public IDs of the same key made by construction 0,
// publicid's AES Feistel network before FF1.
var beforeFF1 = []struct {
	domain Domain
	id     int64
	text   string
}{
	{Domain63, 1, "72FW5FNTKGS1WJ"},
	{Domain63, 9223372036854775807, "71FCJ5Z1XSXGTE"},
	{Domain53, 1, "75NG5RWK9DKM"},
	{Domain53, 9007199254740991, "76CH08Y7KZHN"},
}

var pinnedKey = Key{ID: 7, Secret: bytes.Repeat([]byte{0x5c}, 16)}

func TestPinned(t *testing.T) {
	t.Parallel()
	for _, p := range pinned {
		c, err := New(p.domain, pinnedKey)
		require.NoError(t, err)
		got, err := c.Encode(p.id)
		require.NoError(t, err)
		assert.Equal(t, p.text, got, "domain %d, ID %d", p.domain, p.id)
		back, err := c.Decode(p.text)
		require.NoError(t, err)
		assert.Equal(t, p.id, back)
	}
}

// TestPinnedIsFF1 computes the pinned public numbers with the general FF1
// of package ff1, which NIST's samples check, on the ID's bits: the text
// carries FF1's output unchanged (none of these IDs is the one walked
// past 0).
func TestPinnedIsFF1(t *testing.T) {
	t.Parallel()
	c, err := ff1.New(pinnedKey.Secret, 2)
	require.NoError(t, err)
	for _, p := range pinned {
		n := int(p.domain)
		x := make([]uint16, n)
		for i := range x {
			x[i] = uint16(p.id >> (n - 1 - i) & 1)
		}
		y, err := c.Encrypt(x, nil)
		require.NoError(t, err)
		var want int64
		for _, d := range y {
			want = want<<1 | int64(d)
		}
		codec, err := New(p.domain, pinnedKey)
		require.NoError(t, err)
		got, err := codec.Permute(p.id)
		require.NoError(t, err)
		assert.Equal(t, want, got, "domain %d, ID %d", p.domain, p.id)
	}
}

// TestBeforeFF1 checks that texts of the construction before FF1 fail
// with a clear error instead of decoding to a wrong ID, and that the copy
// of that construction the benchmarks compare with is the one that made
// them.
func TestBeforeFF1(t *testing.T) {
	t.Parallel()
	for _, p := range beforeFF1 {
		c, err := New(p.domain, pinnedKey)
		require.NoError(t, err)
		_, err = c.Decode(p.text)
		require.ErrorIs(t, err, ErrUnknownConstruction, p.text)
		assert.EqualError(t, err, `publicid: unknown construction: "`+p.text+
			`" was made by construction 0, publicid's AES Feistel network before FF1, no longer supported; this codec reads construction 1 (FF1), whose texts have one of 89ABCDEF as second character`)

		old, err := newFeistelPerm(pinnedKey.Secret, uint64(p.domain.Max()))
		require.NoError(t, err)
		var v uint64
		for i := 1; i < len(p.text); i++ {
			d, _ := digit(p.text[i])
			v = v<<5 | uint64(d)
		}
		assert.Equal(t, v, old.encrypt(uint64(p.id-1))+1, "the construction before FF1, ID %d", p.id)
	}
}
