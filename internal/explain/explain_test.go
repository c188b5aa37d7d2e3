package explain

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

// TestReportJSON checks that the JSON object keeps the fields in the order
// they were added, one a line, and escapes names and values.
func TestReportJSON(t *testing.T) {
	t.Parallel()
	r := New("decimalid", "10000000001").Add("launch", 1).Add("note", `a "quoted" note`).Add("by", "<ci>")
	got := string(r.JSON())
	assert.Equal(t, `{"scheme":"decimalid","id":"10000000001","launch":1,"note":"a \"quoted\" note","by":"\u003cci\u003e"}`+"\n", got)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(got), &m))
	assert.Len(t, m, len(r.Fields))
}

// TestTraceIDParts checks that the parts of a TraceId made by Compose are
// the ones it was made from, and that AddTraceID adds what TraceID shows.
func TestTraceIDParts(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	want := traceid.Parts{Second: 100, Node: 7, Thread: 2, Counter: 5}
	id, err := traceid.Compose(want, 3)
	require.NoError(t, err)
	r, err := TraceID(id.String(), at, 3)
	require.NoError(t, err)
	v := values(r)
	assert.Equal(t, []any{"traceid", id.String()}, []any{v["scheme"], v["id"]})
	assert.Equal(t, []any{want.Second, want.Node, want.Thread, want.Counter}, []any{v["second"], v["node"], v["thread"], v["counter"]})
	again, err := AddTraceID(New("traceid", id.String()), id, at, 3)
	require.NoError(t, err)
	assert.Equal(t, r, again)

	_, err = TraceID("abc", at, 0)
	assert.ErrorIs(t, err, traceid.ErrSyntax)
}

// TestDecimalIDLaunch checks that a nil lookup leaves the launch out, that
// a lookup's record is shown and that its error reaches the caller as is.
func TestDecimalIDLaunch(t *testing.T) {
	t.Parallel()
	const text = "10000200003"
	id, err := decimalid.Parse(text)
	require.NoError(t, err)

	r, err := DecimalID(text, nil)
	require.NoError(t, err)
	assert.NotContains(t, values(r), "launch_started")
	assert.Equal(t, id.Launch(), values(r)["launch"])

	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var asked decimalid.ID
	r, err = DecimalID(text, func(got decimalid.ID) (store.Launch, error) {
		asked = got
		return store.Launch{ID: got.Launch(), StartedAt: started, Ticket: "REL-9", By: "ci", Note: "n"}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, id, asked)
	v := values(r)
	assert.Equal(t, []any{"2026-01-02T03:04:05Z", "REL-9", "ci", "n"}, []any{v["launch_started"], v["ticket"], v["by"], v["note"]})

	missing := errors.New("no such launch here")
	_, err = DecimalID(text, func(decimalid.ID) (store.Launch, error) { return store.Launch{}, missing })
	assert.Same(t, missing, err)
}

// TestSnowflakeFields checks that a snowflake's node fields are named as
// in its layout, between its tick and its sequence.
func TestSnowflakeFields(t *testing.T) {
	t.Parallel()
	layout, err := snowflake.Preset("twitter")
	require.NoError(t, err)
	r, err := Snowflake("1541815603606036480", layout)
	require.NoError(t, err)
	var names []string
	for _, f := range r.Fields {
		names = append(names, f.Name)
	}
	want := []string{"scheme", "id", "preset", "time", "tick"}
	for _, f := range layout.Fields {
		want = append(want, f.Name)
	}
	assert.Equal(t, append(want, "sequence"), names)
}

// TestObjectIDZero checks that the zero ObjectID, which parses, is refused.
func TestObjectIDZero(t *testing.T) {
	t.Parallel()
	_, err := ObjectID(objectid.ID{}.String())
	assert.ErrorContains(t, err, "zero ObjectID")
}

func values(r *Report) map[string]any {
	m := make(map[string]any, len(r.Fields))
	for _, f := range r.Fields {
		m[f.Name] = f.Value
	}
	return m
}
