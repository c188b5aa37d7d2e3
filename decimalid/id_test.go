package decimalid

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vectors are IDs at every field's bounds, with both text forms.
var vectors = []struct {
	counter, generator, launch int
	id                         ID
	text, split                string
}{
	{1, 0, 0, 10_000_000_000, "10000000000", "1-00000-00000"},
	{1, 0, 1, 10_000_000_001, "10000000001", "1-00000-00001"},
	{1, 1, 0, 10_000_100_000, "10000100000", "1-00001-00000"},
	{1, 0, MaxLaunch, 10_000_099_999, "10000099999", "1-00000-99999"},
	{1, MaxGenerator, 0, 19_999_900_000, "19999900000", "1-99999-00000"},
	{1, MaxGenerator, MaxLaunch, 19_999_999_999, "19999999999", "1-99999-99999"},
	{2, 0, 0, 20_000_000_000, "20000000000", "2-00000-00000"},
	{1415, 92, 65, 14_150_009_200_065, "14150009200065", "1415-00092-00065"},
	{MaxCounter, 0, 0, 9_223_372_020_000_000_000, "9223372020000000000", "922337202-00000-00000"},
	{MaxCounter, 0, 1, 9_223_372_020_000_000_001, "9223372020000000001", "922337202-00000-00001"},
	{MaxCounter, MaxGenerator, MaxLaunch, 9_223_372_029_999_999_999, "9223372029999999999", "922337202-99999-99999"},
}

func TestMax(t *testing.T) {
	t.Parallel()
	assert.Equal(t, ID(9_223_372_029_999_999_999), Max)
	assert.Less(t, int64(Max), int64(math.MaxInt64))
	assert.Equal(t, ID(10_000_000_000), Min)
	assert.True(t, Max.IsValid())
	assert.True(t, Min.IsValid())
	assert.False(t, (Max + 1).IsValid())
	assert.False(t, (Min - 1).IsValid())
	assert.False(t, ID(0).IsValid())
	assert.False(t, ID(-Min).IsValid())
}

func TestCompose(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		t.Run(v.split, func(t *testing.T) {
			t.Parallel()
			got, err := Compose(v.counter, v.generator, v.launch)
			require.NoError(t, err)
			assert.Equal(t, v.id, got)
			assert.Equal(t, v.counter, got.Counter())
			assert.Equal(t, v.generator, got.Generator())
			assert.Equal(t, v.launch, got.Launch())
			assert.Equal(t, v.text, got.String())
			assert.Equal(t, v.split, got.SplitString())
			assert.True(t, got.IsValid())
			assert.False(t, got.IsZero())
		})
	}
}

func TestComposeInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		counter, generator, launch int
		want                       string
	}{
		{0, 0, 1, "counter = 0, want 1 to 922337202"},
		{-1, 0, 1, "counter = -1, want 1 to 922337202"},
		{MaxCounter + 1, 0, 1, "counter = 922337203, want 1 to 922337202"},
		{1, -1, 1, "generator = -1, want 0 to 99999"},
		{1, MaxGenerator + 1, 1, "generator = 100000, want 0 to 99999"},
		{1, 0, -1, "launch = -1, want 0 to 99999"},
		{1, 0, MaxLaunch + 1, "launch = 100000, want 0 to 99999"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			t.Parallel()
			got, err := Compose(tt.counter, tt.generator, tt.launch)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.ErrorContains(t, err, tt.want)
			assert.Zero(t, got)
		})
	}
}

// parseTests holds texts and what Parse makes of them; fuzzing starts
// from them too.
var parseTests = []struct {
	in   string
	want ID
	err  error
}{
	{"10000000000", Min, nil},
	{"1-00000-00000", Min, nil},
	{"14150009200065", 14_150_009_200_065, nil},
	{"1415-00092-00065", 14_150_009_200_065, nil},
	{"9223372029999999999", Max, nil},
	{"922337202-99999-99999", Max, nil},
	{"10000000001", 10_000_000_001, nil},
	{"", 0, ErrSyntax},
	{"0", 0, ErrRange},
	{"1", 0, ErrRange},
	{"9999999999", 0, ErrRange},
	{"9223372030000000000", 0, ErrRange},
	{"9223372036854775807", 0, ErrRange},
	{"9999999999999999999", 0, ErrRange},
	{"99999999999999999999", 0, ErrRange},
	{"0-00000-00001", 0, ErrRange},
	{"922337203-00000-00000", 0, ErrRange},
	{"999999999-99999-99999", 0, ErrRange},
	{"1000000000-00000-00000", 0, ErrSyntax},
	{"+14150009200065", 0, ErrSyntax},
	{"-14150009200065", 0, ErrRange},
	{" 14150009200065", 0, ErrSyntax},
	{"14150009200065 ", 0, ErrSyntax},
	{"014150009200065", 0, ErrSyntax},
	{"1.4150009200065e13", 0, ErrSyntax},
	{"0x1000000000", 0, ErrSyntax},
	{"1415-92-65", 0, ErrSyntax},
	{"01415-00092-00065", 0, ErrSyntax},
	{"1415-000092-00065", 0, ErrSyntax},
	{"1415-00092-000065", 0, ErrSyntax},
	{"1415-00092-0065", 0, ErrSyntax},
	{"1415-00092-00065-", 0, ErrSyntax},
	{"1415--00092-00065", 0, ErrSyntax},
	{"1415-00092--0065", 0, ErrSyntax},
	{"-1415-00092-00065", 0, ErrSyntax},
	{"1415-0009a-00065", 0, ErrSyntax},
	{"1415-00092-+0065", 0, ErrSyntax},
	{"1415_00092_00065", 0, ErrSyntax},
	{"1415 00092 00065", 0, ErrSyntax},
	{"１４１５０００９２０００６５", 0, ErrSyntax},
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tt := range parseTests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.in)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				assert.ErrorContains(t, err, fmt.Sprintf("%q", tt.in), "the error carries the input")
				assert.Equal(t, 1, strings.Count(err.Error(), "decimalid:"), "one package prefix: %s", err)
				assert.Zero(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseVectors(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		for _, s := range []string{v.text, v.split} {
			got, err := Parse(s)
			require.NoError(t, err, s)
			assert.Equal(t, v.id, got, s)
		}
	}
}

func TestParseErrorText(t *testing.T) {
	t.Parallel()
	_, err := Parse("0-00092-00065")
	assert.EqualError(t, err, `decimalid: not an ID: "0-00092-00065": counter 0, want 1 to 922337202`)
	_, err = Parse("14x")
	assert.EqualError(t, err, `decimalid: invalid syntax: "14x", want decimal digits without leading zero, or counter-ggggg-lllll`)
}

func TestMustParse(t *testing.T) {
	t.Parallel()
	assert.Equal(t, ID(14_150_009_200_065), MustParse("1415-00092-00065"))
	assert.PanicsWithError(t, `decimalid: invalid syntax: "x", want decimal digits without leading zero, or counter-ggggg-lllll`, func() { MustParse("x") })
}

func TestText(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		b, err := v.id.MarshalText()
		require.NoError(t, err)
		assert.Equal(t, v.text, string(b))
		b, err = v.id.AppendText([]byte("id="))
		require.NoError(t, err)
		assert.Equal(t, "id="+v.text, string(b))
		b, err = v.id.AppendSplitText([]byte("id="))
		require.NoError(t, err)
		assert.Equal(t, "id="+v.split, string(b))

		for _, s := range []string{v.text, v.split} {
			var got ID
			require.NoError(t, got.UnmarshalText([]byte(s)))
			assert.Equal(t, v.id, got)
		}
	}

	// The zero ID is empty text both ways.
	var zero ID
	b, err := zero.MarshalText()
	require.NoError(t, err)
	assert.Empty(t, b)
	b, err = zero.AppendSplitText(nil)
	require.NoError(t, err)
	assert.Empty(t, b)
	got := Max
	require.NoError(t, got.UnmarshalText(nil))
	assert.Zero(t, got)

	// An ID outside the domain has no text.
	for _, bad := range []ID{1, Min - 1, Max + 1, -Min} {
		_, err := bad.MarshalText()
		assert.ErrorIs(t, err, ErrRange, "%d", bad)
		_, err = bad.AppendSplitText(nil)
		assert.ErrorIs(t, err, ErrRange, "%d", bad)
		assert.Equal(t, bad.String(), bad.SplitString(), "invalid IDs print as decimal")
	}
	var bad ID
	assert.ErrorIs(t, bad.UnmarshalText([]byte("nope")), ErrSyntax)
}

func TestJSON(t *testing.T) {
	t.Parallel()
	type record struct {
		ID ID `json:"id"`
	}
	for _, v := range vectors {
		b, err := json.Marshal(record{v.id})
		require.NoError(t, err)
		assert.Equal(t, `{"id":"`+v.text+`"}`, string(b))
		var got record
		require.NoError(t, json.Unmarshal(b, &got))
		assert.Equal(t, v.id, got.ID)
	}
	b, err := json.Marshal(record{})
	require.NoError(t, err)
	assert.Equal(t, `{"id":""}`, string(b))

	decode := []struct {
		in   string
		want ID
		err  error
	}{
		{`{"id":"14150009200065"}`, 14_150_009_200_065, nil},
		{`{"id":"1415-00092-00065"}`, 14_150_009_200_065, nil},
		{`{"id":14150009200065}`, 14_150_009_200_065, nil},
		{`{"id":9223372029999999999}`, Max, nil},
		{`{"id":"\u0031415-00092-00065"}`, 14_150_009_200_065, nil},
		{`{"id":""}`, 0, nil},
		{`{"id":null}`, 7, nil}, // null leaves the field alone
		{`{}`, 7, nil},
		{`{"id":0}`, 0, ErrRange},
		{`{"id":-14150009200065}`, 0, ErrRange},
		{`{"id":1.4150009200065e13}`, 0, ErrSyntax},
		{`{"id":"x"}`, 0, ErrSyntax},
		{`{"id":9223372030000000000}`, 0, ErrRange},
	}
	for _, tt := range decode {
		t.Run(tt.in, func(t *testing.T) {
			got := record{ID: 7}
			err := json.Unmarshal([]byte(tt.in), &got)
			if tt.err != nil {
				assert.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.ID)
		})
	}
	var id ID
	assert.ErrorIs(t, id.UnmarshalJSON([]byte("1415-00092-00065")), ErrSyntax, "the split form is not a JSON number")
	_, err = json.Marshal(record{ID: 5})
	assert.ErrorIs(t, err, ErrRange)
}

func TestSQL(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		got, err := v.id.Value()
		require.NoError(t, err)
		assert.Equal(t, driver.Value(int64(v.id)), got)
	}
	got, err := ID(0).Value()
	require.NoError(t, err)
	assert.Nil(t, got, "the zero ID is NULL")
	_, err = ID(5).Value()
	assert.ErrorIs(t, err, ErrRange)

	scans := []struct {
		src  any
		want ID
		err  error
	}{
		{nil, 0, nil},
		{int64(0), 0, nil},
		{int64(14_150_009_200_065), 14_150_009_200_065, nil},
		{int64(Max), Max, nil},
		{"14150009200065", 14_150_009_200_065, nil},
		{"1415-00092-00065", 14_150_009_200_065, nil},
		{[]byte("1415-00092-00065"), 14_150_009_200_065, nil},
		{"0", 0, nil},
		{"", 0, nil},
		{int64(5), 0, ErrRange},
		{int64(-14_150_009_200_065), 0, ErrRange},
		{int64(Max + 1), 0, ErrRange},
		{"x", 0, ErrSyntax},
		{3.5, 0, ErrSyntax},
		{true, 0, ErrSyntax},
	}
	for _, tt := range scans {
		got := ID(7)
		err := got.Scan(tt.src)
		if tt.err != nil {
			assert.ErrorIs(t, err, tt.err, "%#v", tt.src)
			continue
		}
		require.NoError(t, err, "%#v", tt.src)
		assert.Equal(t, tt.want, got, "%#v", tt.src)
	}
}
