package traceid

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vectors are the bit-exact layout: parts and T -> int64.
var vectors = []struct {
	name       string
	parts      Parts
	threadBits int
	id         int64
}{
	{"smallest", Parts{Counter: 1}, 0, 1},
	{"largest", Parts{Second: 1<<25 - 1, Node: 65535, Counter: 4194303}, 0, 9223372036854775807},
	{"second 1", Parts{Second: 1, Counter: 1}, 0, 274877906945},
	{"node 1", Parts{Node: 1, Counter: 1}, 0, 4194305},
	{"T=10 mixed", Parts{Second: 12345, Node: 7, Thread: 3, Counter: 1000}, 10, 3393367790597096},
	{"T=16 first", Parts{Counter: 1}, 16, 1},
	{"T=16 thread 1", Parts{Thread: 1, Counter: 1}, 16, 65},
	{"T=16 largest low", Parts{Thread: 65535, Counter: 63}, 16, 4194303},
	{"T=16 node 65535", Parts{Second: 100, Node: 65535, Thread: 65535, Counter: 63}, 16, 27762668601343},
}

func TestComposeDecodeVectors(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			got, err := Compose(v.parts, v.threadBits)
			require.NoError(t, err)
			assert.Equal(t, ID(v.id), got)

			parts, err := Decode(ID(v.id), v.threadBits)
			require.NoError(t, err)
			assert.Equal(t, v.parts, parts)
			assert.Equal(t, v.parts.Second, got.Second())
			assert.Equal(t, v.parts.Node, got.Node())
		})
	}
}

func TestComposeRejectsOutOfRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		parts      Parts
		threadBits int
		field      string
	}{
		{Parts{Second: 1 << 25, Counter: 1}, 0, "Second = 33554432, want 0 to 33554431"},
		{Parts{Second: -1, Counter: 1}, 0, "Second = -1"},
		{Parts{Node: 65536, Counter: 1}, 0, "Node = 65536, want 0 to 65535"},
		{Parts{Thread: 1, Counter: 1}, 0, "Thread = 1, want 0 to 0"},
		{Parts{Thread: 1 << 16, Counter: 1}, 16, "Thread = 65536, want 0 to 65535"},
		{Parts{Counter: 0}, 0, "Counter = 0, want 1 to 4194303"},
		{Parts{Counter: 1 << 22}, 0, "Counter = 4194304, want 1 to 4194303"},
		{Parts{Counter: 64}, 16, "Counter = 64, want 1 to 63"},
		{Parts{Counter: 1}, 17, "threadBits = 17, want 0 to 16"},
		{Parts{Counter: 1}, -1, "threadBits = -1, want 0 to 16"},
	}
	for _, tt := range tests {
		_, err := Compose(tt.parts, tt.threadBits)
		require.ErrorIs(t, err, ErrInvalid)
		assert.Contains(t, err.Error(), tt.field)
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		id         ID
		threadBits int
		err        error
		msg        string
	}{
		{0, 0, ErrRange, "not an ID: 0, want 1 to 9223372036854775807"},
		{-5, 0, ErrRange, "not an ID: -5"},
		{1 << 22, 0, ErrRange, "counter is 0, want 1 to 4194303"},
		{64, 16, ErrRange, "counter is 0, want 1 to 63"},
		{1, 17, ErrInvalid, "threadBits = 17"},
	} {
		_, err := Decode(tt.id, tt.threadBits)
		require.ErrorIs(t, err, tt.err)
		assert.Contains(t, err.Error(), tt.msg)
	}
}

// The accessors read what Decode reads, for every T; Compose inverts Decode.
func TestAccessorsAgreeWithDecode(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		id := ID(v.id)
		for tb := 0; tb <= MaxThreadBits; tb++ {
			p, err := Decode(id, tb)
			if err != nil {
				continue // counter 0 under this T
			}
			assert.Equal(t, p.Second, id.Second())
			assert.Equal(t, p.Node, id.Node())
			assert.Equal(t, p.Thread, id.Thread(tb))
			assert.Equal(t, p.Counter, id.Counter(tb))
			back, err := Compose(p, tb)
			require.NoError(t, err)
			assert.Equal(t, id, back)
		}
	}
}

func TestTimeWithReference(t *testing.T) {
	t.Parallel()
	issued := time.Date(2026, 11, 21, 10, 30, 15, 0, time.UTC)
	id, err := Compose(Parts{Second: int(issued.Unix() & (1<<25 - 1)), Counter: 1}, 0)
	require.NoError(t, err)
	for _, ref := range []time.Time{
		issued,
		issued.Add(time.Hour),
		issued.Add(Period - time.Second),
	} {
		assert.Equal(t, issued, id.Time(ref), "ref %v", ref)
	}
	assert.Equal(t, issued.Add(-Period), id.Time(issued.Add(-time.Second)), "a reference before the issue time gives the previous period")
	assert.Equal(t, issued.Add(Period), id.Time(issued.Add(Period)))
}

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
		{"4194304", ErrRange}, // thread and counter bits all 0
		{"-1", ErrRange},
		{"-9223372036854775808", ErrRange},
		{"9223372036854775808", ErrRange},
		{"99999999999999999999999", ErrRange},
	} {
		_, err := Parse(tt.in)
		require.ErrorIs(t, err, tt.err, "input %q", tt.in)
		assert.Contains(t, err.Error(), `"`+tt.in+`"`, "the error carries the input")
	}
}

func TestParseAccepts(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		s := ID(v.id).String()
		got, err := Parse(s)
		require.NoError(t, err)
		assert.Equal(t, ID(v.id), got)
	}
	assert.Equal(t, ID(42), MustParse("42"))
	assert.Panics(t, func() { MustParse("x") })
}

func TestTextJSONRoundTrip(t *testing.T) {
	t.Parallel()
	type entry struct {
		ID  ID  `json:"id"`
		Ref *ID `json:"ref,omitempty"`
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

func TestMarshalRejectsNonIDs(t *testing.T) {
	t.Parallel()
	for _, id := range []ID{-1, 4194304, -9223372036854775808} {
		_, err := id.MarshalText()
		require.ErrorIs(t, err, ErrRange, "%d", id)
		_, err = json.Marshal(id)
		require.ErrorIs(t, err, ErrRange, "%d", id)
		_, err = id.Value()
		require.ErrorIs(t, err, ErrRange, "%d", id)
		assert.False(t, id.IsValid())
	}
}

func TestZeroIDText(t *testing.T) {
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
	for _, in := range []string{`"0"`, `0`, `-1`, `1.5`, `"x"`, `true`, `{}`, `"9223372036854775808"`} {
		var id ID
		err := json.Unmarshal([]byte(in), &id)
		assert.Error(t, err, in)
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
	var id ID
	for _, bad := range []any{int64(-1), "x", 1.5, true} {
		err := id.Scan(bad)
		assert.Error(t, err, "%#v", bad)
	}
	assert.True(t, errors.Is(id.Scan(int64(-1)), ErrRange))
}
