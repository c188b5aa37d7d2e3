package publicid

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendEncodeAll(t *testing.T) {
	t.Parallel()
	for _, d := range []Domain{Domain63, Domain53} {
		c, err := New(d, testKey(4, 0x44))
		require.NoError(t, err)
		ids := []int64{1, 2, 3, 1000, d.Max() - 1, d.Max()}
		var want strings.Builder
		for _, id := range ids {
			s, err := c.Encode(id)
			require.NoError(t, err)
			want.WriteString(s)
		}
		got, err := c.AppendEncodeAll([]byte("page:"), ids)
		require.NoError(t, err)
		assert.Equal(t, "page:"+want.String(), string(got))
		for i, id := range ids {
			back, err := c.Decode(string(got[5+i*d.TextLen():][:d.TextLen()]))
			require.NoError(t, err)
			assert.Equal(t, id, back)
		}

		empty, err := c.AppendEncodeAll(nil, nil)
		require.NoError(t, err)
		assert.Empty(t, empty)

		b := []byte("page:")
		got, err = c.AppendEncodeAll(b, []int64{5, 6, 0, 7})
		assert.ErrorIs(t, err, ErrRange)
		assert.ErrorContains(t, err, "ids[2] is 0, want 1 to")
		assert.Equal(t, "page:", string(got), "nothing appended")
	}
}

func TestAppendPermuteAll(t *testing.T) {
	t.Parallel()
	c, err := New(Domain53, testKey(4, 0x44))
	require.NoError(t, err)
	ids := []int64{1, 2, 3, 1000, 1 << 52}
	want := make([]int64, len(ids))
	for i, id := range ids {
		want[i], err = c.Permute(id)
		require.NoError(t, err)
	}
	got, err := c.AppendPermuteAll(nil, ids)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	inPlace := append([]int64(nil), ids...)
	inPlace, err = c.AppendPermuteAll(inPlace[:0], inPlace)
	require.NoError(t, err)
	assert.Equal(t, want, inPlace, "dst may be ids[:0]")

	dst := []int64{-7}
	dst, err = c.AppendPermuteAll(dst, []int64{1, 1 << 53})
	assert.ErrorIs(t, err, ErrRange)
	assert.ErrorContains(t, err, "ids[1] is 9007199254740992, want 1 to 9007199254740991")
	assert.Equal(t, []int64{-7}, dst)
}

// TestNoAllocations checks that mapping an ID allocates nothing, alone or
// in a batch, given room in the destination. The race detector's
// sync.Pool drops buffers on purpose, so it runs without it.
func TestNoAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	c, err := New(Domain63, testKey(4, 0x44))
	require.NoError(t, err)
	ids := make([]int64, 100)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	public, err := c.Encode(42)
	require.NoError(t, err)
	text := make([]byte, 0, len(ids)*Domain63.TextLen())
	numbers := make([]int64, 0, len(ids))
	for name, f := range map[string]func(){
		"Permute":   func() { _, _ = c.Permute(42) },
		"Unpermute": func() { _, _ = c.Unpermute(42) },
		"AppendEncode": func() {
			_, _ = c.AppendEncode(text[:0], 42)
		},
		"Decode":           func() { _, _ = c.Decode(public) },
		"AppendEncodeAll":  func() { _, _ = c.AppendEncodeAll(text[:0], ids) },
		"AppendPermuteAll": func() { _, _ = c.AppendPermuteAll(numbers[:0], ids) },
	} {
		assert.Zero(t, testing.AllocsPerRun(20, f), name)
	}
}
