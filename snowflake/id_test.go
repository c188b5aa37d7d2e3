package snowflake

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in  string
		err error
	}{
		{"", ErrSyntax},
		{"abc", ErrSyntax},
		{"12a", ErrSyntax},
		{" 12", ErrSyntax},
		{"+12", ErrSyntax},
		{"1.5", ErrSyntax},
		{"0x10", ErrSyntax},
		{"-", ErrSyntax},
		{"0", ErrRange},
		{"000", ErrSyntax},
		{"0042", ErrSyntax},
		{"-1", ErrRange},
		{"-9223372036854775808", ErrRange},
		{"9223372036854775808", ErrRange},
		{"99999999999999999999999", ErrRange},
	} {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(tt.in)
			require.ErrorIs(t, err, tt.err)
			assert.Contains(t, err.Error(), `"`+tt.in+`"`, "the error carries the input")
			assert.Equal(t, 1, strings.Count(err.Error(), "snowflake:"), "one package prefix: %s", err)
		})
	}
}

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		got, err := Parse(ID(v.id).String())
		require.NoError(t, err)
		assert.Equal(t, ID(v.id), got)
	}
	assert.Equal(t, ID(42), MustParse("42"))
	assert.Equal(t, ID(1<<63-1), MustParse("9223372036854775807"))
	assert.Panics(t, func() { MustParse("x") })
}

func TestTextJSONRoundTrip(t *testing.T) {
	t.Parallel()
	type entry struct {
		ID ID `json:"id"`
	}
	for _, v := range vectors {
		id := ID(v.id)
		text, err := id.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, id.String(), string(text))
		var back ID
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, id, back)

		b, err := json.Marshal(entry{ID: id})
		require.NoError(t, err)
		assert.Equal(t, `{"id":"`+id.String()+`"}`, string(b), "JSON carries a string")
		var e entry
		require.NoError(t, json.Unmarshal(b, &e))
		assert.Equal(t, id, e.ID)

		var bare entry
		require.NoError(t, json.Unmarshal([]byte(`{"id":`+id.String()+`}`), &bare), "a bare number decodes too")
		assert.Equal(t, id, bare.ID)
	}
}

func TestZeroID(t *testing.T) {
	t.Parallel()
	var zero ID
	assert.True(t, zero.IsZero())
	assert.False(t, ID(1).IsZero())
	text, err := zero.MarshalText()
	require.NoError(t, err)
	assert.Empty(t, text)
	b, err := json.Marshal(zero)
	require.NoError(t, err)
	assert.Equal(t, `""`, string(b))

	id := ID(7)
	require.NoError(t, json.Unmarshal([]byte(`""`), &id))
	assert.True(t, id.IsZero())
	id = 7
	require.NoError(t, json.Unmarshal([]byte(`null`), &id))
	assert.Equal(t, ID(7), id, "null leaves the value alone")
}

func TestJSONRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`"0"`, `0`, `-1`, `1.5`, `"x"`, `true`, `{}`, `"9223372036854775808"`, `" 1"`} {
		var id ID
		assert.Error(t, json.Unmarshal([]byte(in), &id), in)
	}
}

func TestSQLRoundTrip(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		id := ID(v.id)
		val, err := id.Value()
		require.NoError(t, err)
		assert.Equal(t, v.id, val)
		var back ID
		require.NoError(t, back.Scan(val))
		assert.Equal(t, id, back)
		require.NoError(t, back.Scan([]byte(id.String())))
		assert.Equal(t, id, back)
		require.NoError(t, back.Scan(id.String()))
		assert.Equal(t, id, back)
	}

	val, err := ID(0).Value()
	require.NoError(t, err)
	assert.Nil(t, val, "the zero ID is NULL")
	for _, zero := range []any{nil, int64(0), "0", ""} {
		id := ID(5)
		require.NoError(t, id.Scan(zero), "%#v", zero)
		assert.True(t, id.IsZero(), "%#v scans as the zero ID", zero)
	}
	for _, tt := range []struct {
		src any
		err error
	}{{int64(-1), ErrRange}, {"x", ErrSyntax}, {1.5, ErrSyntax}, {true, ErrSyntax}, {"-3", ErrRange}} {
		var id ID
		assert.ErrorIs(t, id.Scan(tt.src), tt.err, "%#v", tt.src)
	}
}
