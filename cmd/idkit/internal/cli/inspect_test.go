package cli_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/otelid"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// notOfScheme lists text that is not an ID of the scheme, and what the one
// line of the error says.
var notOfScheme = []struct {
	scheme string
	id     string
	msg    string
	flags  []string
}{
	{"traceid", "abc", `traceid: invalid syntax: "abc", want a decimal TraceId, or 16 or 32 hex digits (an OpenTelemetry span or trace ID)`, nil},
	{"traceid", "0", `traceid: not an ID: "0", want 1 to 9223372036854775807 with the low 22 bits (thread and counter) not all 0`, nil},
	{"traceid", "-5", "not an ID", nil},
	{"traceid", "9223372036854775808", "not an ID", nil},
	{"traceid", "4194304", "low 22 bits (thread and counter) not all 0", nil},
	{"traceid", "64", "counter is 0, want 1 to 63 (with 16 thread bits)", []string{"--thread-bits", "16"}},
	{"traceid", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "invalid syntax", nil},
	{"traceid", " 1", "invalid syntax", nil},
	{"traceid", "4061f04001c0000x", `invalid syntax: "4061f04001c0000x", want a decimal TraceId, or 16 or 32 hex digits`, nil},
	{"traceid", "4061f04001c000021", "want a decimal TraceId, or 16 or 32 hex digits", nil},
	{"traceid", "f061f04001c00002", `traceid: parse span ID "f061f04001c00002": the top bit is set, which no TraceId has`, nil},
	{"traceid", "F061F04001C000027C2B7E15A1F3D904", `parse trace ID "f061f04001c000027c2b7e15a1f3d904": the top bit is set`, nil},
	{"traceid", "00000000000000007c2b7e15a1f3d904", "the high 8 bytes are zero, which no TraceId is", nil},
	{"traceid", "0000000000000000", `the zero span ID is invalid`, nil},
	{"traceid", "0000000000000000", `parse span ID "0000000000000000": the zero span ID is invalid`, []string{"--hex"}},
	{"traceid", "4061f04001c00000", "counter is 0, want 1 to 4194303", nil},
	{"traceid", "4649545502335959041", `parse "4649545502335959041": want 16 or 32 hex digits (an OpenTelemetry span or trace ID), got 19 characters`, []string{"--hex"}},
	{"traceid", "4061f04001c0000g", "want 16 or 32 hex digits", []string{"--hex"}},
	{"decimalid", "abc", `decimalid: invalid syntax: "abc", want decimal digits without leading zero, or counter-ggggg-lllll`, nil},
	{"decimalid", "9999999999", "not an ID: \"9999999999\", want 10000000000 to 9223372029999999999 (counter 1 to 922337202)", nil},
	{"decimalid", "014150009200065", "invalid syntax", nil},
	{"decimalid", "1415-92-65", "invalid syntax", nil},
	{"decimalid", "9223372036854775807", "not an ID", nil},
	{"decimalid", "f47ac10b-58cc-4372-a567-0e02b2c3d479", "invalid syntax", nil},
	{"snowflake", "abc", `snowflake: invalid syntax: "abc", want decimal digits without sign or leading zero`, nil},
	{"snowflake", "0", `not an ID: "0", want 1 to 9223372036854775807`, nil},
	{"snowflake", "f47ac10b-58cc-4372-a567-0e02b2c3d479", "invalid syntax", nil},
	{"snowflake", "9223372036854775807", "bits above the 53 that layout jssafe uses are set", []string{"--preset", "jssafe"}},
	{"objectid", "507f1f77bcf86cd79943901", `objectid: invalid syntax: "507f1f77bcf86cd79943901", want 24 hexadecimal digits`, nil},
	{"objectid", "507f1f77bcf86cd79943901g", "want 24 hexadecimal digits", nil},
	{"objectid", "000000000000000000000000", "is the zero ObjectID", nil},
	{"objectid", "4649545502335959041", "want 24 hexadecimal digits", nil},
	{"objectid", "f47ac10b-58cc-4372-a567-0e02b2c3d479", "want 24 hexadecimal digits", nil},
	{"ulid", "4649545502335959041", `ulid: parse "4649545502335959041": bad data size`, nil},
	{"ulid", "f47ac10b-58cc-4372-a567-0e02b2c3d479", "bad data size", nil},
	{"ulid", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "overflow", nil},
	{"ulid", "01ARZ3NDEKTSV4RRFFQ69G5FAU", "bad data characters", nil},
	{"xid", "4649545502335959041", `xid: parse "4649545502335959041": invalid ID`, nil},
	{"xid", "9m4e2mr0ui3e8a215n4", "invalid ID", nil},
	{"ksuid", "4649545502335959041", `ksuid: parse "4649545502335959041": `, nil},
	{"ksuid", "3MgFtadJLGxu7LVCivgLA20IJwy!", "ksuid: parse", nil},
	{"uuidv4", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f", `uuidv4: parse "017f22e2-79b0-7cc3-98c4-dc0c0c07398f": version 7, want 4`, nil},
	{"uuidv4", "00000000-0000-0000-0000-000000000000", "variant Reserved, want RFC 4122", nil},
	{"uuidv4", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "invalid UUID length: 26", nil},
	{"uuidv4", "4649545502335959041", "invalid UUID length", nil},
	{"uuidv7", "f47ac10b-58cc-4372-a567-0e02b2c3d479", "version 4, want 7", nil},
	{"uuidv7", "f47ac10b-58cc-4372-a567-0e02b2c3d47", "invalid UUID length", nil},
	{"uuidv7", "017f22e2-79b0-7cc3-18c4-dc0c0c07398f", "variant Reserved, want RFC 4122", nil},
}

func TestInspectNotOfScheme(t *testing.T) {
	t.Parallel()
	for _, tt := range notOfScheme {
		args := append(append([]string{"inspect", tt.scheme}, tt.flags...), "--", tt.id)
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := clitest.Run(args...)
			assert.Equal(t, 2, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.msg)
			assert.True(t, strings.HasPrefix(stderr, "idkit inspect: "+tt.scheme), "names the scheme: %s", stderr)
			clitest.AssertOneLine(t, stderr, args)
		})
	}
}

// TestInspectTraceIDTime reads the wrapping second of a TraceId against a
// reference time: --at, or the clock.
func TestInspectTraceIDTime(t *testing.T) {
	t.Parallel()
	issued := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	id, err := traceid.Compose(traceid.Parts{Second: int(issued.Unix() % (1 << traceid.SecondBits)), Node: 3, Counter: 9}, 0)
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		now  time.Time
		at   string
		want time.Time
	}{
		{"now, same second", issued, "", issued},
		{"now, a day later", issued.Add(24 * time.Hour), "", issued},
		{"now, a second earlier", issued.Add(-time.Second), "", issued.Add(-traceid.Period)},
		{"now, a period later", issued.Add(traceid.Period), "", issued.Add(traceid.Period)},
		{"at", issued.Add(-time.Hour), "2026-07-01T00:00:00Z", issued},
		{"at with offset and fraction", issued, "2026-06-01T14:00:00.5+02:00", issued},
		{"at just before", issued, "2026-06-01T11:59:59.999Z", issued.Add(-traceid.Period)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := []string{"inspect", "traceid", id.String(), "--json"}
			if tt.at != "" {
				args = append(args, "--at", tt.at)
			}
			code, stdout, stderr := clitest.RunOn(clock.NewFake(tt.now), time.Second, args...)
			require.Equal(t, 0, code, stderr)
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(stdout), &got))
			assert.Equal(t, tt.want.Format(time.RFC3339), got["time"])
			assert.Equal(t, 3.0, got["node"])
			assert.Equal(t, 9.0, got["counter"])
		})
	}
}

// TestInspectOTelIDs inspects the span and trace IDs that otelid's
// IDGenerator makes in a real TracerProvider: each decodes to the TraceId
// it holds, in either case of hex digits.
func TestInspectOTelIDs(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	g, err := traceid.New(context.Background(), traceid.Options{Node: 321, Clock: fake})
	require.NoError(t, err)
	fake.Advance(time.Second)
	ids, err := otelid.NewIDGenerator(context.Background(), g, otelid.Options{})
	require.NoError(t, err)
	tp := sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(ids))
	t.Cleanup(func() { assert.NoError(t, tp.Shutdown(context.Background())) })
	ctx, root := tp.Tracer("test").Start(context.Background(), "root")
	_, child := tp.Tracer("test").Start(ctx, "child")
	child.End()
	root.End()

	sc := child.SpanContext()
	want, ok := otelid.FromSpanID(sc.SpanID())
	require.True(t, ok)
	wantRoot, ok := otelid.FromTraceID(sc.TraceID())
	require.True(t, ok)
	inspect := func(args ...string) map[string]any {
		t.Helper()
		code, stdout, stderr := clitest.RunOn(fake, time.Second, append([]string{"inspect", "traceid", "--json"}, args...)...)
		require.Equal(t, 0, code, stderr)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(stdout), &got))
		return got
	}
	for _, tt := range []struct {
		name   string
		args   []string
		id     string
		form   string
		holds  traceid.ID
		random string
	}{
		{"span ID", []string{sc.SpanID().String()}, sc.SpanID().String(), "span-id", want, ""},
		{"span ID upper case", []string{strings.ToUpper(sc.SpanID().String())}, sc.SpanID().String(), "span-id", want, ""},
		{"span ID with --hex", []string{"--hex", sc.SpanID().String()}, sc.SpanID().String(), "span-id", want, ""},
		{"trace ID", []string{sc.TraceID().String()}, sc.TraceID().String(), "trace-id", wantRoot, sc.TraceID().String()[16:]},
		{"trace ID upper case", []string{strings.ToUpper(sc.TraceID().String())}, sc.TraceID().String(), "trace-id", wantRoot, sc.TraceID().String()[16:]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := inspect(tt.args...)
			assert.Equal(t, tt.id, got["id"])
			assert.Equal(t, tt.form, got["form"])
			assert.Equal(t, tt.holds.String(), got["traceid"])
			assert.Equal(t, 321.0, got["node"])
			assert.Equal(t, "2026-06-01T12:00:01Z", got["time"])
			p, err := traceid.Decode(tt.holds, 0)
			require.NoError(t, err)
			assert.Equal(t, float64(p.Counter), got["counter"])
			if tt.random == "" {
				assert.NotContains(t, got, "random")
			} else {
				assert.Equal(t, tt.random, got["random"])
			}
		})
	}
	assert.Equal(t, want, wantRoot+1, "the child's TraceId follows the root's")

	// 16 decimal digits read as a decimal TraceId, or with --hex as a span
	// ID.
	dec, err := traceid.Compose(traceid.Parts{Second: 20000, Node: 2, Counter: 3}, 0)
	require.NoError(t, err)
	require.Len(t, dec.String(), 16)
	got := inspect(dec.String())
	assert.Equal(t, dec.String(), got["id"])
	assert.NotContains(t, got, "form")
	assert.Equal(t, 2.0, got["node"])
	got = inspect("--hex", dec.String())
	assert.Equal(t, "span-id", got["form"])
	v, err := strconv.ParseUint(dec.String(), 16, 64)
	require.NoError(t, err)
	assert.Equal(t, strconv.FormatUint(v, 10), got["traceid"])
}

// TestInspectTextMatchesJSON checks that both outputs hold the same fields
// in the same order, and that in JSON the integer ID is a string and the
// other integers are numbers.
func TestInspectTextMatchesJSON(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"traceid", "4649545502335959041", "--at", "2026-12-01T00:00:00Z"},
		{"traceid", "4061f04001c00002", "--at", "2026-12-01T00:00:00Z"},
		{"traceid", "4061F04001C000017C2B7E15A1F3D904", "--at", "2026-12-01T00:00:00Z"},
		{"decimalid", "1415-00092-00065"},
		{"snowflake", "1541815603606036480"},
		{"snowflake", "647215071113510954", "--preset", "sonyflake"},
		{"ulid", "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
		{"uuid4", "f47ac10b-58cc-4372-a567-0e02b2c3d479"},
		{"uuid7", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			code, text, stderr := clitest.Run(append([]string{"inspect"}, args...)...)
			require.Equal(t, 0, code, stderr)
			code, js, stderr := clitest.Run(append([]string{"inspect"}, append(args, "--json")...)...)
			require.Equal(t, 0, code, stderr)

			dec := json.NewDecoder(strings.NewReader(js))
			dec.UseNumber()
			tok, err := dec.Token()
			require.NoError(t, err)
			require.Equal(t, json.Delim('{'), tok)
			lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			for i := 0; dec.More(); i++ {
				key, err := dec.Token()
				require.NoError(t, err)
				value, err := dec.Token()
				require.NoError(t, err)
				require.Less(t, i, len(lines))
				name, v, _ := strings.Cut(lines[i], " ")
				assert.Equal(t, name, key, "field %d", i)
				assert.Equal(t, strings.TrimSpace(v), strings.TrimSpace(toString(value)), key)
				switch key {
				case "id", "scheme", "time", "split", "preset", "variant", "entropy", "process", "form", "traceid", "random":
					assert.IsType(t, "", value, "%s is a string", key)
				default:
					assert.IsType(t, json.Number(""), value, "%s is a number", key)
				}
			}
		})
	}
}

func toString(v any) string {
	if n, ok := v.(json.Number); ok {
		return n.String()
	}
	s, _ := v.(string)
	return s
}

// FuzzInspect feeds any text to inspect for every scheme: it either explains
// it, with the canonical ID in the output, or fails with one line; never a
// panic or a hang.
func FuzzInspect(f *testing.F) {
	for _, tt := range notOfScheme {
		f.Add(tt.id)
	}
	for _, id := range []string{
		"4649545502335959041", "14150009200065", "1415-00092-00065", "1541815603606036480",
		"507f1f77bcf86cd799439011", "507F1F77BCF86CD799439011",
		"4061f04001c00002", "4061F04001C000017C2B7E15A1F3D904", "4061504001900002",
		"01ARZ3NDEKTSV4RRFFQ69G5FAV", "f47ac10b-58cc-4372-a567-0e02b2c3d479",
		"017F22E2-79B0-7CC3-98C4-DC0C0C07398F", "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}",
		"urn:uuid:f47ac10b-58cc-4372-a567-0e02b2c3d479", "-", "--json", "", "\n",
	} {
		f.Add(id)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if id == "-" {
			t.Skip(`"-" reads standard input (TestInspectStdin)`)
		}
		for _, name := range cli.SchemeNames() {
			args := []string{"inspect", name, "--json", "--", id}
			code, stdout, stderr := clitest.Run(args...)
			if code != 0 {
				assert.Contains(t, []int{1, 2}, code)
				assert.Empty(t, stdout)
				clitest.AssertOneLine(t, stderr, args)
				continue
			}
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
			canon, ok := got["id"].(string)
			require.True(t, ok, "id is a string: %s", stdout)
			code, again, stderr := clitest.Run("inspect", name, "--json", "--", canon)
			require.Equal(t, 0, code, stderr)
			assert.Equal(t, stdout, again, "the canonical ID %q explains the same", canon)
		}
	})
}

// TestInspectHelpExamplesRun runs the examples of "idkit help inspect".
func TestInspectHelpExamplesRun(t *testing.T) {
	t.Parallel()
	_, after, ok := strings.Cut(cli.Lookup("inspect").Long, "Examples:")
	require.True(t, ok)
	n := 0
	for line := range strings.Lines(after) {
		stdin := ""
		for cmd := range strings.SplitSeq(line, "|") {
			args := strings.Fields(cmd)
			if len(args) == 0 {
				continue
			}
			require.Equal(t, "idkit", args[0], line)
			code, stdout, stderr := clitest.RunIn(stdin, args[1:]...)
			assert.Equal(t, 0, code, "%s: %s", line, stderr)
			stdin = stdout
			n++
		}
	}
	assert.Greater(t, n, 3)
}

// TestInspectPresetHint: a Sonyflake ID read under the default Twitter
// preset decodes to 2015, plausible for some ID but not for one made
// today, and the report names the preset that reads it as now; an ID that
// decodes to decades ahead is called implausible; an ID that decodes to
// now gets no hint.
func TestInspectPresetHint(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 7, 30, 0, 0, time.UTC)
	sony, err := snowflake.Preset("sonyflake")
	require.NoError(t, err)
	id, err := sony.Compose(snowflake.Parts{Time: now, Node: map[string]int64{"machine": 5}})
	require.NoError(t, err)

	inspect := func(args ...string) map[string]any {
		code, stdout, stderr := clitest.RunOn(clock.NewFake(now), time.Millisecond, append([]string{"inspect", "snowflake"}, append(args, "--json")...)...)
		require.Equal(t, 0, code, stderr)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
		return got
	}
	got := inspect(id.String())
	assert.Equal(t, "twitter", got["preset"])
	assert.Contains(t, got["time"], "2015-")
	assert.Equal(t, "if the ID was made in the last day, its preset is not twitter: it decodes to now under --preset sonyflake (2026-11-27T07:30:00Z)", got["hint"])

	assert.NotContains(t, inspect("--preset", "sonyflake", id.String()), "hint", "read under its own preset")

	far := inspect("9223372036854775807")
	assert.Contains(t, far["hint"], "the time is implausible for preset twitter (more than a year ahead)")

	// --at checks against another time than now: a week later the ID is
	// no longer recent, and the day it was made it is again.
	assert.NotContains(t, inspect(id.String(), "--at", "2026-12-04T07:30:00Z"), "hint", "a week after the ID was made")
	assert.Equal(t, got["hint"], inspect(id.String(), "--at", "2026-11-27T08:00:00Z")["hint"])
	code, _, stderr := clitest.RunOn(clock.NewFake(now), time.Millisecond, "inspect", "snowflake", id.String(), "--at", "yesterday")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--at "yesterday" is not an RFC 3339 time`)
}
