package segment_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/segment"
)

func TestIDText(t *testing.T) {
	t.Parallel()
	for _, v := range []int64{1, 9, 10, 1001, 1<<53 + 1, 1<<63 - 1} {
		id := segment.ID(v)
		s := strconv.FormatInt(v, 10)
		assert.Equal(t, s, id.String())
		text, err := id.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, s, string(text))
		got, err := segment.Parse(s)
		require.NoError(t, err)
		assert.Equal(t, id, got)

		j, err := json.Marshal(struct{ ID segment.ID }{id})
		require.NoError(t, err)
		assert.Equal(t, `{"ID":"`+s+`"}`, string(j), "JSON carries the ID as a string")
		var back struct{ ID segment.ID }
		require.NoError(t, json.Unmarshal(j, &back))
		assert.Equal(t, id, back.ID)

		sv, err := id.Value()
		require.NoError(t, err)
		assert.Equal(t, v, sv)
		var scanned segment.ID
		require.NoError(t, scanned.Scan(v))
		assert.Equal(t, id, scanned)
		assert.True(t, id.IsValid())
		assert.False(t, id.IsZero())
	}
	assert.True(t, segment.ID(0).IsZero())
	assert.False(t, segment.ID(-1).IsValid())
	for _, bad := range []string{"", "0", "-1", "01", "1.5", "9223372036854775808", "x"} {
		_, err := segment.Parse(bad)
		assert.Error(t, err, "%q", bad)
		assert.ErrorContains(t, err, strconv.Quote(bad))
	}
	_, err := segment.ID(-5).MarshalText()
	assert.ErrorIs(t, err, segment.ErrRange)
	assert.Panics(t, func() { segment.MustParse("0") })
	assert.Equal(t, segment.ID(7), segment.MustParse("7"))
}

func TestCheckTag(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"o", "order", "Order.v2", "a_b-c:d", string(make([]byte, 0)) + "x"} {
		assert.NoError(t, segment.CheckTag(ok), "%q", ok)
	}
	long := make([]byte, segment.MaxTagLen)
	for i := range long {
		long[i] = 'a'
	}
	assert.NoError(t, segment.CheckTag(string(long)))
	for _, bad := range []string{"", string(long) + "a", "a b", "a/b", "é", "a\x00", "a\n", "a'b", `a"b`, "a%b"} {
		err := segment.CheckTag(bad)
		assert.ErrorIs(t, err, segment.ErrInvalid, "%q", bad)
		assert.ErrorContains(t, err, strconv.Quote(bad))
	}
	assert.NoError(t, segment.CheckStep(1))
	assert.NoError(t, segment.CheckStep(segment.MaxStep))
	for _, bad := range []int64{0, -1, segment.MaxStep + 1} {
		assert.ErrorIs(t, segment.CheckStep(bad), segment.ErrInvalid, "%d", bad)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"1", "42", "9223372036854775807", "0", "-1", "01", "", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := segment.Parse(s)
		want, werr := strconv.ParseInt(s, 10, 64)
		canonical := werr == nil && want > 0 && strconv.FormatInt(want, 10) == s
		if !canonical {
			require.Error(t, err, "%q", s)
			return
		}
		require.NoError(t, err, "%q", s)
		require.Equal(t, segment.ID(want), id)
		require.Equal(t, s, id.String())
	})
}
