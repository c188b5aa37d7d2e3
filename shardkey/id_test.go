package shardkey_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/shardkey"
	"github.com/idkit/idkit/snowflake"
)

func TestTextRoundTrip(t *testing.T) {
	t.Parallel()
	for _, id := range []shardkey.ID{1, 1 << 62, 0x6000000000000000, 1<<63 - 1, 42} {
		s := id.String()
		got, err := shardkey.Parse(s)
		require.NoError(t, err)
		assert.Equal(t, id, got)
		assert.Equal(t, id, shardkey.MustParse(s))

		text, err := id.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, s, string(text))
		var back shardkey.ID
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, id, back)

		j, err := json.Marshal(id)
		require.NoError(t, err)
		assert.Equal(t, `"`+s+`"`, string(j), "JSON is a string")
		back = 0
		require.NoError(t, json.Unmarshal(j, &back))
		assert.Equal(t, id, back)
		back = 0
		require.NoError(t, json.Unmarshal([]byte(s), &back), "a bare number")
		assert.Equal(t, id, back)

		v, err := id.Value()
		require.NoError(t, err)
		assert.Equal(t, int64(id), v)
		back = 0
		require.NoError(t, back.Scan(v))
		assert.Equal(t, id, back)
		back = 0
		require.NoError(t, back.Scan([]byte(s)))
		assert.Equal(t, id, back)

		b, err := id.AppendText([]byte("id="))
		require.NoError(t, err)
		assert.Equal(t, "id="+s, string(b))
	}
}

func TestZero(t *testing.T) {
	t.Parallel()
	var zero shardkey.ID
	assert.True(t, zero.IsZero())
	assert.False(t, shardkey.ID(1).IsZero())
	text, err := zero.MarshalText()
	require.NoError(t, err)
	assert.Empty(t, text)
	v, err := zero.Value()
	require.NoError(t, err)
	assert.Nil(t, v)
	id := shardkey.ID(7)
	require.NoError(t, id.Scan(nil))
	assert.Zero(t, id)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "x", "+1", " 1", "007", "1.0"} {
		_, err := shardkey.Parse(s)
		assert.ErrorIs(t, err, shardkey.ErrSyntax, "%q", s)
		assert.ErrorIs(t, err, idkit.ErrInvalid, "%q", s)
	}
	for _, s := range []string{"0", "-1", "9223372036854775808"} {
		_, err := shardkey.Parse(s)
		assert.ErrorIs(t, err, shardkey.ErrRange, "%q", s)
		assert.ErrorContains(t, err, "shardkey: ")
	}
	_, err := shardkey.ID(-1).MarshalText()
	assert.ErrorIs(t, err, shardkey.ErrRange)
	_, err = shardkey.ID(-1).Value()
	assert.ErrorIs(t, err, shardkey.ErrRange)
	assert.Panics(t, func() { shardkey.MustParse("0") })
}

func TestShardAndInner(t *testing.T) {
	t.Parallel()
	for bits := 1; bits <= shardkey.MaxBits; bits++ {
		shard := int64(0x5a5a) & (1<<bits - 1)
		inner := snowflake.ID(int64(0x0123456789abcdef) & (1<<(63-bits) - 1))
		id := shardkey.ID(shard<<(63-bits) | int64(inner))
		assert.Equal(t, shard, id.Shard(bits), "bits %d", bits)
		assert.Equal(t, inner, id.Inner(bits), "bits %d", bits)
	}
	id := shardkey.ID(1<<62 | 5)
	assert.Equal(t, int64(16), id.Shard(5))
	assert.Equal(t, snowflake.ID(5), id.Inner(5))
	for _, bits := range []int{0, -1, 16, 63} {
		assert.Zero(t, id.Shard(bits), "bits %d", bits)
		assert.Zero(t, id.Inner(bits), "bits %d", bits)
	}
	assert.Zero(t, shardkey.ID(-5).Shard(5))
	assert.Zero(t, shardkey.ID(-5).Inner(5))
}
