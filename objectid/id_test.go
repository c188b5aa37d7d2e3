package objectid

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vectors are ObjectIDs with their parts.
var vectors = []struct {
	hex     string
	time    time.Time
	process [ProcessLen]byte
	counter uint32
}{
	// The ObjectId of MongoDB's documentation, created 2012-10-17T21:13:27Z.
	{"507f1f77bcf86cd799439011", time.Date(2012, 10, 17, 21, 13, 27, 0, time.UTC), [5]byte{0xbc, 0xf8, 0x6c, 0xd7, 0x99}, 0x439011},
	{"000000000000000000000001", time.Unix(0, 0).UTC(), [5]byte{}, 1},
	{"ffffffffffffffffffffffff", time.Date(2106, 2, 7, 6, 28, 15, 0, time.UTC), [5]byte{0xff, 0xff, 0xff, 0xff, 0xff}, MaxCounter},
	{"6737a0c0a1b2c3d4e5000000", time.Date(2024, 11, 15, 19, 28, 0, 0, time.UTC), [5]byte{0xa1, 0xb2, 0xc3, 0xd4, 0xe5}, 0},
}

func TestVectors(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		t.Run(v.hex, func(t *testing.T) {
			t.Parallel()
			id, err := Parse(v.hex)
			require.NoError(t, err)
			assert.Equal(t, v.hex, id.String())
			assert.Equal(t, v.time, id.Timestamp())
			assert.Equal(t, v.process, id.Process())
			assert.Equal(t, v.counter, id.Counter())

			c, err := Compose(v.time.Add(999*time.Millisecond), v.process, v.counter)
			require.NoError(t, err)
			assert.Equal(t, id, c, "Compose truncates to the second")
			b, err := FromBytes(id[:])
			require.NoError(t, err)
			assert.Equal(t, id, b)
		})
	}
}

func TestComposeRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		t       time.Time
		counter uint32
		msg     string
	}{
		{time.Unix(-1, 0), 0, "time 1969-12-31 23:59:59 +0000 UTC, want 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z"},
		{time.Unix(1<<32, 0), 0, "time 2106-02-07 06:28:16 +0000 UTC"},
		{time.Unix(0, 0), MaxCounter + 1, "counter 16777216, want 0 to 16777215"},
	} {
		_, err := Compose(tt.t, [5]byte{}, tt.counter)
		require.ErrorIs(t, err, ErrInvalid)
		assert.Contains(t, err.Error(), tt.msg)
	}
	_, err := FromBytes(make([]byte, 11))
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "11 bytes, want 12")
}

func TestParse(t *testing.T) {
	t.Parallel()
	upper := MustParse("507F1F77BCF86CD799439011")
	assert.Equal(t, "507f1f77bcf86cd799439011", upper.String(), "either case parses; text is lowercase")
	_, err := Parse("000000000000000000000000")
	require.ErrorIs(t, err, ErrRange, "the zero ObjectID is not an ID")
	assert.Panics(t, func() { MustParse("x") })

	for _, in := range []string{"", "507f1f77bcf86cd79943901", "507f1f77bcf86cd7994390111", "507f1f77bcf86cd79943901g",
		" 07f1f77bcf86cd799439011", "0x7f1f77bcf86cd799439011", "507f1f77-bcf86cd7994390", "５07f1f77bcf86cd79943901"} {
		t.Run(in, func(t *testing.T) {
			_, err := Parse(in)
			require.ErrorIs(t, err, ErrSyntax)
			assert.Contains(t, err.Error(), fmt.Sprintf("%q", in), "the error carries the input")
		})
	}
}

func TestCompareSortsByTime(t *testing.T) {
	t.Parallel()
	a := MustParse("507f1f77ffffffffffffffff")
	ids := []ID{MustParse("507f1f78000000000000000a"), a, MustParse("507f1f77000000000000000b")}
	slices.SortFunc(ids, ID.Compare)
	assert.Equal(t, []string{"507f1f77000000000000000b", "507f1f77ffffffffffffffff", "507f1f78000000000000000a"},
		[]string{ids[0].String(), ids[1].String(), ids[2].String()})
	assert.Equal(t, 0, a.Compare(a))
}

func TestTextJSONRoundTrip(t *testing.T) {
	t.Parallel()
	type doc struct {
		ID ID `json:"_id"`
	}
	for _, v := range vectors {
		id := MustParse(v.hex)
		text, err := id.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, v.hex, string(text))
		var back ID
		require.NoError(t, back.UnmarshalText(text))
		assert.Equal(t, id, back)

		b, err := json.Marshal(doc{id})
		require.NoError(t, err)
		assert.Equal(t, `{"_id":"`+v.hex+`"}`, string(b))
		var d doc
		require.NoError(t, json.Unmarshal(b, &d))
		assert.Equal(t, id, d.ID)

		var ext doc
		require.NoError(t, json.Unmarshal([]byte(`{"_id":{"$oid":"`+v.hex+`"}}`), &ext), "Extended JSON")
		assert.Equal(t, id, ext.ID)
	}
}

func TestZeroID(t *testing.T) {
	t.Parallel()
	var zero ID
	assert.True(t, zero.IsZero())
	assert.False(t, MustParse("000000000000000000000001").IsZero())
	assert.Equal(t, "000000000000000000000000", zero.String())
	text, err := zero.MarshalText()
	require.NoError(t, err)
	assert.Empty(t, text)
	b, err := json.Marshal(zero)
	require.NoError(t, err)
	assert.Equal(t, `""`, string(b))

	id := MustParse(vectors[0].hex)
	require.NoError(t, json.Unmarshal([]byte(`""`), &id))
	assert.True(t, id.IsZero())
	id = MustParse(vectors[0].hex)
	require.NoError(t, json.Unmarshal([]byte(`null`), &id))
	assert.Equal(t, MustParse(vectors[0].hex), id, "null leaves the value alone")
}

func TestJSONRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`"x"`, `1`, `true`, `{}`, `{"$oid":1}`, `{"$oid":"zz"}`, `[]`, `"507f1f77bcf86cd79943901"`} {
		var id ID
		err := json.Unmarshal([]byte(in), &id)
		assert.ErrorIs(t, err, ErrSyntax, in)
	}
}

func TestSQLRoundTrip(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		id := MustParse(v.hex)
		val, err := id.Value()
		require.NoError(t, err)
		assert.Equal(t, v.hex, val, "stored as the hexadecimal string")
		for _, src := range []any{val, []byte(v.hex), id[:]} {
			var back ID
			require.NoError(t, back.Scan(src), "%#v", src)
			assert.Equal(t, id, back)
		}
	}
	val, err := ID{}.Value()
	require.NoError(t, err)
	assert.Nil(t, val, "the zero ID is NULL")
	for _, zero := range []any{nil, "", []byte{}} {
		id := MustParse(vectors[0].hex)
		require.NoError(t, id.Scan(zero), "%#v", zero)
		assert.True(t, id.IsZero(), "%#v scans as the zero ID", zero)
	}
	for _, bad := range []any{"x", []byte("short"), int64(5), 1.5} {
		var id ID
		assert.ErrorIs(t, id.Scan(bad), ErrSyntax, "%#v", bad)
	}
}
