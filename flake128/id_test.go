package flake128

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// boundaryWorker is the worker in the IDs of Boundary's flake README
// (github.com/boundary/flake, readme.md): MAC address 10:9a:dd:5e:0e:8f.
const boundaryWorker = 0x109add5e0e8f

// The README's "Generate 1 id and receive the erlang binary" example.
var boundaryBinary = ID{0, 0, 1, 52, 212, 33, 45, 67, 16, 154, 221, 94, 14, 143, 0, 0}

// The README's "Generate 10 base-62 encoded ids" example, as the Erlang
// shell printed the list: newest first, two milliseconds, sequences 5..0
// and 3..0.
var boundaryText = []struct {
	text string
	ms   uint64
	seq  uint16
}{
	{"8HFaR8qWtRlGDHnO57", 1326409013776, 5},
	{"8HFaR8qWtRlGDHnO56", 1326409013776, 4},
	{"8HFaR8qWtRlGDHnO55", 1326409013776, 3},
	{"8HFaR8qWtRlGDHnO54", 1326409013776, 2},
	{"8HFaR8qWtRlGDHnO53", 1326409013776, 1},
	{"8HFaR8qWtRlGDHnO52", 1326409013776, 0},
	{"8HFaR8qAulTgCBd6Wp", 1326409013775, 3},
	{"8HFaR8qAulTgCBd6Wo", 1326409013775, 2},
	{"8HFaR8qAulTgCBd6Wn", 1326409013775, 1},
	{"8HFaR8qAulTgCBd6Wm", 1326409013775, 0},
}

func TestBoundaryBinary(t *testing.T) {
	t.Parallel()
	p, err := Decode(boundaryBinary)
	require.NoError(t, err)
	assert.Equal(t, uint64(0x134d4212d43), p.Milliseconds)
	assert.Equal(t, time.Date(2012, 1, 12, 22, 54, 31, 235*int(time.Millisecond), time.UTC), p.Time)
	assert.Equal(t, uint64(boundaryWorker), p.Worker)
	assert.Equal(t, uint16(0), p.Sequence)
	assert.Equal(t, "00000134d4212d43109add5e0e8f0000", boundaryBinary.Hex())
	assert.Equal(t, "8HFaDzqL3ULkWgRE8G", boundaryBinary.String(), "base 62 as flake_util:as_list(Int, 62) writes it")
	c, err := Compose(p.Milliseconds, p.Worker, p.Sequence)
	require.NoError(t, err)
	assert.Equal(t, boundaryBinary, c)
}

func TestBoundaryText(t *testing.T) {
	t.Parallel()
	var prev ID
	for i, v := range boundaryText {
		id, err := Parse(v.text)
		require.NoError(t, err, v.text)
		assert.Equal(t, v.text, id.String())
		assert.Equal(t, v.ms, id.Milliseconds(), v.text)
		assert.Equal(t, uint64(boundaryWorker), id.Worker(), "%s: the same worker as the README's binary ID", v.text)
		assert.Equal(t, v.seq, id.Sequence(), v.text)
		assert.Equal(t, 2012, id.Time().Year())
		want, err := Compose(v.ms, boundaryWorker, v.seq)
		require.NoError(t, err)
		assert.Equal(t, want, id)
		if i > 0 {
			assert.Equal(t, 1, prev.Compare(id), "the list is newest first")
			assert.Greater(t, prev.String(), id.String(), "18-character texts sort like the IDs")
		}
		prev = id
	}
}

func TestParseForms(t *testing.T) {
	t.Parallel()
	max := ID{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	one := ID{15: 1}
	for _, tt := range []struct {
		text string
		want ID
	}{
		{"1", one},
		{"z", ID{15: 61}},
		{"10", ID{15: 62}},
		{"7n42DGM5Tflk9n8mt7Fhc7", max},
		{"ffffffffffffffffffffffffffffffff", max},
		{"00000000000000000000000000000001", one},
		{"00000134d4212d43109add5e0e8f0000", boundaryBinary},
	} {
		id, err := Parse(tt.text)
		require.NoError(t, err, tt.text)
		assert.Equal(t, tt.want, id, tt.text)
		back, err := Parse(id.Hex())
		require.NoError(t, err)
		assert.Equal(t, id, back)
	}
	for _, tt := range []struct {
		text string
		err  error
	}{
		{"", ErrSyntax},
		{"0", ErrRange},
		{"00000000000000000000000000000000", ErrRange},
		{"01", ErrSyntax},
		{"7n42DGM5Tflk9n8mt7Fhc8", ErrRange},
		{"zzzzzzzzzzzzzzzzzzzzzz", ErrRange},
		{"10000000000000000000000", ErrSyntax},
		{"8HFaR8qWtRlGDHnO5-", ErrSyntax},
		{" 8HFaR8qWtRlGDHnO57", ErrSyntax},
		{"00000134D4212D43109ADD5E0E8F0000", ErrSyntax},
		{"00000134d4212d43109add5e0e8f000g", ErrSyntax},
		{"00000134-d421-2d43-109a-dd5e0e8f0000", ErrSyntax},
	} {
		_, err := Parse(tt.text)
		assert.ErrorIs(t, err, tt.err, "Parse(%q)", tt.text)
	}
}

func TestComposeRejects(t *testing.T) {
	t.Parallel()
	_, err := Compose(1, MaxWorker+1, 0)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "worker 281474976710656, want 0 to 281474976710655")
	_, err = Compose(0, 0, 0)
	assert.ErrorIs(t, err, ErrInvalid)
	_, err = FromBytes(make([]byte, 15))
	assert.ErrorContains(t, err, "15 bytes, want 16")
	_, err = Decode(ID{})
	assert.ErrorIs(t, err, ErrRange)
}

func TestEncodings(t *testing.T) {
	t.Parallel()
	id := MustParse("8HFaR8qWtRlGDHnO57")
	b, err := json.Marshal(map[string]ID{"id": id})
	require.NoError(t, err)
	assert.Equal(t, `{"id":"8HFaR8qWtRlGDHnO57"}`, string(b))
	var m map[string]ID
	require.NoError(t, json.Unmarshal(b, &m))
	assert.Equal(t, id, m["id"])
	var h ID
	require.NoError(t, json.Unmarshal([]byte(`"`+id.Hex()+`"`), &h))
	assert.Equal(t, id, h)
	assert.ErrorIs(t, h.UnmarshalJSON([]byte(`123`)), ErrSyntax, "a JSON number cannot hold 128 bits")

	v, err := id.Value()
	require.NoError(t, err)
	assert.Equal(t, id[:], v, "SQL stores the 16 bytes")
	for _, src := range []any{v, id.String(), []byte(id.String()), id.Hex(), []byte(id.Hex())} {
		var s ID
		require.NoError(t, s.Scan(src), "%#v", src)
		assert.Equal(t, id, s)
	}
	var s ID
	assert.ErrorIs(t, s.Scan(int64(7)), ErrSyntax)
	assert.ErrorIs(t, s.Scan(1.5), ErrSyntax)
	require.NoError(t, s.Scan(make([]byte, 16)))
	assert.True(t, s.IsZero())
	assert.Equal(t, "0", ID{}.String())
}
