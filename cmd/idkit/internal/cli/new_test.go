package cli_test

import (
	"bufio"
	"bytes"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

func TestNewTraceID(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := clitest.Run("new", "traceid", "--node", "7", "-n", "3")
	require.Equal(t, 0, code, stderr)
	clitest.AssertWaitLine(t, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 3)
	var prev traceid.ID
	for _, line := range lines {
		id, err := traceid.Parse(line)
		require.NoError(t, err)
		assert.Equal(t, 7, id.Node())
		assert.Greater(t, id, prev)
		prev = id
	}
}

func TestNewZero(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"ulid", "uuid4", "uuidv4", "uuidv7", "xid", "ksuid"} {
		code, stdout, stderr := clitest.Run("new", s, "-n", "0")
		assert.Equal(t, 0, code, stderr)
		assert.Empty(t, stdout)
	}
}

// timeField returns the "time" field of an inspect object.
func timeField(t *testing.T, got map[string]any) time.Time {
	t.Helper()
	s, ok := got["time"].(string)
	require.True(t, ok, "time is a string: %v", got)
	tm, err := time.Parse(time.RFC3339Nano, s)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(s, "Z"), "UTC: %s", s)
	return tm
}

// assertWithin checks that tm lies in [from truncated to unit, to].
func assertWithin(t *testing.T, tm, from, to time.Time, unit time.Duration) {
	t.Helper()
	assert.False(t, tm.Before(from.Truncate(unit)), "%v before %v", tm, from)
	assert.False(t, tm.After(to), "%v after %v", tm, to)
}

// TestRoundTrip makes IDs of every scheme with "idkit new" and explains
// them with "idkit inspect": the parts are the ones the flags asked for and
// the time is when the command ran.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, name := range cli.SchemeNames() {
		f, ok := roundTrips[name]
		if !ok {
			t.Errorf("no round trip test for scheme %s", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t)
		})
	}
}

var roundTrips = map[string]func(t *testing.T){
	"traceid": func(t *testing.T) {
		from := time.Now()
		ids := clitest.NewIDs(t, "traceid", "--node", "7", "--thread-bits", "4", "-n", "3")
		to := time.Now()
		require.Len(t, ids, 3)
		prev := 0.0
		for _, id := range ids {
			got := clitest.InspectJSON(t, "traceid", id, "--thread-bits", "4")
			assert.Equal(t, "traceid", got["scheme"])
			assert.Equal(t, id, got["id"], "the ID is a JSON string")
			assert.Equal(t, 7.0, got["node"])
			tm := timeField(t, got)
			assert.Equal(t, float64(tm.Unix()%(1<<25)), got["second"])
			assertWithin(t, tm, from, to, time.Second)
			assert.Less(t, prev, got["counter"])
			prev, _ = got["counter"].(float64)
		}
	},
	"decimalid": func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "idkit.db")
		code, stdout, stderr := clitest.Run("launch", "begin", "--log", log, "--ticket", "REL-7")
		require.Equal(t, 0, code, stderr)
		require.Equal(t, "1\n", stdout)
		for _, tt := range []struct {
			args              []string
			launch, generator float64
		}{
			{[]string{"-n", "3"}, 1, 0},
			{[]string{"-n", "3", "--split"}, 1, 1}, // each call takes a fresh generator id
			{[]string{"-n", "3", "--launch", "42"}, 42, 0},
		} {
			ids := clitest.NewIDs(t, append([]string{"decimalid", "--log", log}, tt.args...)...)
			require.Len(t, ids, 3)
			for i, id := range ids {
				want, err := decimalid.Parse(id)
				require.NoError(t, err)
				if slices.Contains(tt.args, "--split") {
					assert.Equal(t, want.SplitString(), id, "split form")
				} else {
					assert.Equal(t, want.String(), id)
				}
				got := clitest.InspectJSON(t, "decimalid", id)
				assert.Equal(t, want.String(), got["id"])
				assert.Equal(t, want.SplitString(), got["split"])
				assert.Equal(t, float64(i+1), got["counter"])
				assert.Equal(t, tt.generator, got["generator"])
				assert.Equal(t, tt.launch, got["launch"])
				if tt.launch == 1 {
					got = clitest.InspectJSON(t, "decimalid", id, "--log", log)
					assert.Equal(t, "REL-7", got["ticket"])
				}
			}
		}
	},
	"snowflake": func(t *testing.T) {
		for _, tt := range []struct {
			preset string // empty for the default
			args   []string
			node   map[string]float64
		}{
			{"", []string{"--datacenter", "1", "--worker", "3"}, map[string]float64{"datacenter": 1, "worker": 3}},
			{"", []string{"--worker", "3"}, map[string]float64{"datacenter": 0, "worker": 3}},
			{"", []string{"--node", "35"}, map[string]float64{"datacenter": 1, "worker": 3}},
			{"discord", []string{"--node", "1023"}, map[string]float64{"worker": 31, "process": 31}},
			{"sonyflake", []string{"--machine", "42"}, map[string]float64{"machine": 42}},
			{"Instagram", []string{"--shard", "8191"}, map[string]float64{"shard": 8191}},
			{"simpleflake", nil, map[string]float64{}},
		} {
			t.Run(tt.preset+" "+strings.Join(tt.args, " "), func(t *testing.T) {
				t.Parallel()
				layout := snowflake.Twitter()
				args := []string{"snowflake", "-n", "3"}
				var preset []string
				if tt.preset != "" {
					var err error
					layout, err = snowflake.Preset(tt.preset)
					require.NoError(t, err)
					preset = []string{"--preset", tt.preset}
				}
				from := time.Now()
				ids := clitest.NewIDs(t, append(append(args, preset...), tt.args...)...)
				to := time.Now()
				require.Len(t, ids, 3)
				var prev snowflake.ID
				for _, id := range ids {
					got := clitest.InspectJSON(t, append([]string{"snowflake", id}, preset...)...)
					assert.Equal(t, id, got["id"])
					assert.Equal(t, layout.Name, got["preset"])
					for name, v := range tt.node {
						assert.Equal(t, v, got[name], name)
					}
					assert.Len(t, got, 6+len(layout.Fields), "scheme id preset time tick fields sequence")
					assertWithin(t, timeField(t, got), from, to, layout.Unit)
					n := snowflake.MustParse(id)
					assert.Greater(t, n, prev, "increasing")
					prev = n
				}
			})
		}
	},
	"objectid": func(t *testing.T) {
		from := time.Now()
		ids := clitest.NewIDs(t, "objectid", "-n", "3")
		to := time.Now()
		require.Len(t, ids, 3)
		var first map[string]any
		for i, id := range ids {
			got := clitest.InspectJSON(t, "objectid", strings.ToUpper(id))
			assert.Equal(t, id, got["id"], "canonical lower case")
			assertWithin(t, timeField(t, got), from, to, time.Second)
			if i == 0 {
				first = got
				continue
			}
			assert.Equal(t, first["process"], got["process"], "one process")
			assert.Equal(t, math.Mod(first["counter"].(float64)+float64(i), 1<<24), got["counter"], "consecutive counters")
		}
	},
	"ulid": func(t *testing.T) {
		from := time.Now()
		ids := clitest.NewIDs(t, "ulid", "-n", "3")
		to := time.Now()
		require.Len(t, ids, 3)
		for i, id := range ids {
			got := clitest.InspectJSON(t, "ulid", strings.ToLower(id))
			assert.Equal(t, id, got["id"], "canonical upper case")
			assertWithin(t, timeField(t, got), from, to, time.Millisecond)
			assert.Len(t, got["entropy"], 20, "80 bits in hex")
			if i > 0 {
				assert.Greater(t, id, ids[i-1], "monotonic")
			}
		}
	},
	"uuidv4": func(t *testing.T) {
		for _, id := range clitest.NewIDs(t, "uuidv4", "-n", "3") {
			got := clitest.InspectJSON(t, "uuidv4", strings.ToUpper(id))
			assert.Equal(t, id, got["id"], "canonical lower case")
			assert.Equal(t, 4.0, got["version"])
			assert.Equal(t, "RFC4122", got["variant"])
			assert.NotContains(t, got, "time")
		}
	},
	"uuidv7": func(t *testing.T) {
		from := time.Now()
		ids := clitest.NewIDs(t, "uuidv7", "-n", "3")
		to := time.Now()
		for i, id := range ids {
			got := clitest.InspectJSON(t, "uuidv7", id)
			assert.Equal(t, id, got["id"])
			assert.Equal(t, 7.0, got["version"])
			assertWithin(t, timeField(t, got), from, to, time.Millisecond)
			if i > 0 {
				assert.Greater(t, id, ids[i-1], "time-ordered")
			}
		}
	},
	"xid": func(t *testing.T) {
		from := time.Now().Truncate(time.Second)
		ids := clitest.NewIDs(t, "xid", "-n", "3")
		to := time.Now()
		for i, id := range ids {
			got := clitest.InspectJSON(t, "xid", id)
			assert.Equal(t, id, got["id"])
			assertWithin(t, timeField(t, got), from, to, time.Second)
			assert.Len(t, got["machine"], 6, "3 bytes in hex")
			if i > 0 {
				assert.Greater(t, id, ids[i-1], "ordered within a process")
			}
		}
	},
	"ksuid": func(t *testing.T) {
		from := time.Now().Truncate(time.Second)
		ids := clitest.NewIDs(t, "ksuid", "-n", "3")
		to := time.Now()
		for _, id := range ids {
			got := clitest.InspectJSON(t, "ksuid", id)
			assert.Equal(t, id, got["id"])
			assertWithin(t, timeField(t, got), from, to, time.Second)
			assert.Len(t, got["payload"], 32, "16 bytes in hex")
		}
	},
}

// TestNewWithLogSurvivesClockStepBack runs "idkit new" twice, the second
// time with the clock stepped back to where the first run started. Without
// --log the second run repeats the first one's IDs (the caveat that --log
// removes); with --log it continues after the first run's last ID.
func TestNewWithLogSurvivesClockStepBack(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 6, 1, 12, 0, 0, 500_000_000, time.UTC)
	for _, tt := range []struct {
		name string
		args []string
		step time.Duration
	}{
		{"traceid", []string{"traceid", "--node", "7", "-n", "5"}, 100 * time.Millisecond},
		{"snowflake", []string{"snowflake", "--node", "7", "-n", "5"}, time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, withLog := range []bool{false, true} {
				args := append([]string{"new"}, tt.args...)
				if withLog {
					args = append(args, "--log", filepath.Join(t.TempDir(), "idkit.db"))
				}
				f := clock.NewFake(start)
				code, first, stderr := clitest.RunOn(f, tt.step, args...)
				require.Equal(t, 0, code, stderr)
				f.Set(start) // the clock steps back between the runs
				code, second, stderr := clitest.RunOn(f, tt.step, args...)
				require.Equal(t, 0, code, stderr)

				require.Len(t, strings.Fields(first), 5)
				require.Len(t, strings.Fields(second), 5)
				if !withLog {
					assert.Equal(t, first, second, "without --log a stepped-back clock repeats IDs")
					continue
				}
				seen := make(map[string]bool)
				for _, id := range strings.Fields(first + second) {
					assert.False(t, seen[id], "%s issued twice", id)
					seen[id] = true
				}
				last, err := strconv.ParseInt(strings.Fields(first)[4], 10, 64)
				require.NoError(t, err)
				next, err := strconv.ParseInt(strings.Fields(second)[0], 10, 64)
				require.NoError(t, err)
				assert.Greater(t, next, last, "the second run starts past the first")
			}
		})
	}
}

// TestNewUsesTheClock checks that the IDs of the schemes that take the
// console's clock carry its time, and that IDs of one tick still increase.
func TestNewUsesTheClock(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 6, 1, 12, 0, 0, 123_000_000, time.UTC)
	for _, tt := range []struct {
		scheme string
		want   time.Time // the time inspect shows
	}{
		{"ulid", at},
		{"objectid", at.Truncate(time.Second)},
	} {
		t.Run(tt.scheme, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := clitest.RunOn(clock.NewFake(at), time.Millisecond, "new", tt.scheme, "-n", "100")
			require.Equal(t, 0, code, stderr)
			ids := strings.Fields(stdout)
			require.Len(t, ids, 100)
			for i, id := range ids {
				got := clitest.InspectJSON(t, tt.scheme, id)
				assert.Equal(t, tt.want, timeField(t, got))
				if i > 0 && tt.scheme == "ulid" {
					assert.Greater(t, id, ids[i-1], "monotonic within the millisecond")
				}
			}
		})
	}
}

func TestNewUUIDVersions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		scheme  string
		version uuid.Version
	}{{"uuidv4", 4}, {"uuidv7", 7}, {"uuid4", 4}, {"uuid7", 7}} {
		t.Run(tt.scheme, func(t *testing.T) {
			t.Parallel()
			for _, s := range clitest.NewIDs(t, tt.scheme, "-n", "50") {
				id, err := uuid.Parse(s)
				require.NoError(t, err)
				assert.Equal(t, tt.version, id.Version())
				assert.Equal(t, uuid.RFC4122, id.Variant())
				assert.Equal(t, id.String(), s)
			}
		})
	}
}

func TestNewSnowflakePresets(t *testing.T) {
	t.Parallel()
	for _, name := range snowflake.PresetNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			layout, err := snowflake.Preset(name)
			require.NoError(t, err)
			args := []string{"new", "snowflake", "--preset", name}
			if layout.NodeBits() > 0 {
				args = append(args, "--node", "1")
			}
			code, stdout, stderr := clitest.Run(args...)
			if time.Now().After(layout.Expires()) {
				assert.Equal(t, 1, code)
				assert.Contains(t, stderr, "expired")
				clitest.AssertOneLine(t, stderr, args)
				return
			}
			require.Equal(t, 0, code, stderr)
			id, err := snowflake.Parse(strings.TrimSpace(stdout))
			require.NoError(t, err)
			_, err = layout.Decode(id)
			assert.NoError(t, err)
		})
	}
}

// TestNewInterrupted: Ctrl-C during a long "idkit new -n" ends it after a
// whole line: every line printed is a whole ID, and the command says how
// many it printed.
func TestNewInterrupted(t *testing.T) {
	t.Parallel()
	bin := clitest.Build(t, "github.com/idkit/idkit/cmd/idkit")
	cmd := exec.Command(bin, "new", "objectid", "-n", "100000000")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := bufio.NewReader(stdout)
	first, err := r.ReadString('\n')
	require.NoError(t, err, "the first ID")
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	rest, err := io.ReadAll(r)
	require.NoError(t, err)
	werr := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, werr, &exit, "interrupted: %s", stderr.String())
	assert.Equal(t, 1, exit.ExitCode())
	assert.Contains(t, stderr.String(), "idkit new: interrupted after ")

	out := first + string(rest)
	assert.True(t, strings.HasSuffix(out, "\n"), "the output ends with a whole line")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	assert.Less(t, len(lines), 100000000, "it stopped")
	for _, l := range lines {
		_, err := objectid.Parse(l)
		require.NoError(t, err, "every line a whole ID: %q", l)
	}
}
