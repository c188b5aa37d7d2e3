package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseNeed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want report.Need
		err  string
	}{
		{"", report.Need{}, ""},
		{"64bit", report.Need{Bits64: true}, ""},
		{" js-safe , 64bit,writers=8 ", report.Need{JSSafe: true, Bits64: true, Writers: 8}, ""},
		{"sortable,rate=5_000_000", report.Need{Sortable: true, Rate: 5_000_000}, ""},
		{"BIGINT", report.Need{Bits64: true}, ""},
		{"unguessable,64bit", report.Need{Unguessable: true, Bits64: true}, ""},
		{"fleet", report.Need{Fleet: true}, ""},
		{"fleet, writers=4", report.Need{Fleet: true, Writers: 4}, ""},
		{"fleet=yes", report.Need{}, `bad constraint "fleet=yes": fleet takes no value`},
		{"fast", report.Need{}, `bad constraint "fast": want one of 64bit, js-safe, sortable, unguessable, writers=K, rate=IDS_PER_SECOND, fleet`},
		{"writers=0", report.Need{}, `bad constraint "writers=0": want writers=1..1024`},
		{"writers", report.Need{}, `bad constraint "writers": want writers=1..1024`},
		{"rate=x", report.Need{}, `bad constraint "rate=x"`},
		{"64bit=yes", report.Need{}, `bad constraint "64bit=yes": 64bit takes no value`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := report.ParseNeed(tt.in)
			if tt.err != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, report.ErrNeed)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			again, err := report.ParseNeed(got.String())
			if got == (report.Need{}) {
				assert.Equal(t, "none", got.String())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, got, again, "String round-trips")
		})
	}
}

// TestNeedHelp: every constraint NeedHelp lists parses, fleet among them.
func TestNeedHelp(t *testing.T) {
	t.Parallel()
	items := strings.Split(report.NeedHelp, ", ")
	assert.Contains(t, items, report.Need{Fleet: true}.String())
	for _, item := range items {
		k, _, hasValue := strings.Cut(item, "=")
		if hasValue {
			item = k + "=1"
		}
		n, err := report.ParseNeed(item)
		require.NoError(t, err, item)
		assert.NotEqual(t, report.Need{}, n, item)
	}
}

func TestDecideErrors(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	_, err := r.Decide(report.Need{}, engine.Postgres)
	assert.ErrorIs(t, err, ErrOptions)
	assert.Contains(t, err.Error(), `engine "postgres" was not measured in this run (measured: bbolt, sqlite, pebble)`)
	_, err = r.Decide(report.Need{Writers: 8}, "")
	assert.ErrorIs(t, err, ErrOptions)
	assert.Contains(t, err.Error(), "need writers=8, but the run measured 1 and 3 writers; run with --writers 8")
}

// TestDecideSmallRun checks the verdict the small run carries: on SQLite
// by default, every scheme either ranked or rejected with a reason, and
// random keys rejected for a measured figure.
func TestDecideSmallRun(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	v := r.Verdict
	require.NotNil(t, v)
	assert.Equal(t, engine.SQLite, v.Engine)
	assert.Equal(t, smallWriters, v.Writers)
	assert.Equal(t, len(r.Schemes), len(v.Ranked)+len(v.Rejected))
	reasons := map[string]string{}
	for _, x := range v.Rejected {
		assert.NotEmpty(t, x.Reason, x.Scheme)
		reasons[x.Scheme] = x.Reason
	}
	assert.Contains(t, reasons["uuidv4"], "x the counter's")
	assert.Contains(t, reasons["ksuid"], "x the counter's")
	for i := 1; i < len(v.Ranked); i++ {
		assert.LessOrEqual(t, v.Ranked[i-1].Score, v.Ranked[i].Score*1.02+1e-9, "ranked best first")
	}

	bbolt, err := r.Decide(report.Need{Bits64: true}, engine.Bbolt)
	require.NoError(t, err)
	for _, p := range bbolt.Ranked {
		s, err := scheme.Lookup(p.Scheme)
		require.NoError(t, err)
		assert.True(t, s.Design().Int63, "%s ranked under 64bit", p.Scheme)
	}

	var b bytes.Buffer
	require.NoError(t, r.WriteJSON(&b))
	var got struct {
		Verdict report.Verdict `json:"verdict"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.Equal(t, *v, got.Verdict, "the JSON carries the verdict")
}

// TestDecideWithoutBaseline: without the counter in the run, figures are
// compared with the best scheme's, so random keys are still rejected.
func TestDecideWithoutBaseline(t *testing.T) {
	t.Parallel()
	schemes, err := scheme.Select("traceid,uuidv4")
	require.NoError(t, err)
	r, err := Run(Options{N: 20_000, Writers: 1, Schemes: schemes, SpeedTime: time.Millisecond, Dir: t.TempDir(), Fills: []float64{0.9}})
	require.NoError(t, err)
	v := r.Verdict
	require.Len(t, v.Ranked, 1)
	assert.Equal(t, "traceid", v.Ranked[0].Scheme)
	require.Len(t, v.Rejected, 1)
	assert.Equal(t, "uuidv4", v.Rejected[0].Scheme)
	assert.Contains(t, v.Rejected[0].Reason, "x the best scheme's")
}

// TestDecideJSSafe: under js-safe the verdict ranks the JS-safe Snowflake
// layout and the dense counters, the latter with the years they stay under
// 2^53 at the stated rate, and rejects the 64-bit time-based schemes and a
// dense counter too fast for a hundred years.
func TestDecideJSSafe(t *testing.T) {
	t.Parallel()
	schemes, err := scheme.Select("counter,snowflake-jssafe,segment-bbolt,traceid,uuidv7")
	require.NoError(t, err)
	r, err := Run(Options{N: 20_000, Writers: 2, Schemes: schemes, Fills: []float64{0.9}, NoSQLite: true,
		SpeedTime: time.Millisecond, Dir: t.TempDir(), Need: report.Need{JSSafe: true}})
	require.NoError(t, err)
	v := r.Verdict
	ranked := map[string]string{}
	for _, p := range v.Ranked {
		ranked[p.Scheme] = p.Why
	}
	require.Contains(t, ranked, "snowflake-jssafe")
	require.Contains(t, ranked, "segment-bbolt")
	assert.Contains(t, ranked["segment-bbolt"], "js-safe as a dense counter: under 2^53 for 2,854 years at 100,000 IDs/s")
	assert.NotContains(t, ranked["snowflake-jssafe"], "dense counter")
	rejected := map[string]string{}
	for _, x := range v.Rejected {
		rejected[x.Scheme] = x.Reason
	}
	assert.Contains(t, rejected["traceid"], "IDs use up to 63 bits, need js-safe")
	assert.Contains(t, rejected["uuidv7"], "need js-safe")

	fast, err := r.Decide(report.Need{JSSafe: true, Rate: 10_000_000}, "")
	require.NoError(t, err)
	for _, x := range fast.Rejected {
		rejected[x.Scheme] = x.Reason
	}
	assert.Contains(t, rejected["segment-bbolt"], "a dense counter passes 2^53 after 29 years at 10,000,000 IDs/s, need js-safe for 100")
}

// TestVerdictLeavesOutDisturbedServerCounters: on a plain InnoDB run, a
// load that another session wrote beside has the server's write counters
// (pages written, redo) wrong: the verdict leaves them out, by name, and
// ranks nothing, since the index sizes alone cannot tell random keys
// from ordered ones; on quiet loads it ranks on all three.
func TestVerdictLeavesOutDisturbedServerCounters(t *testing.T) {
	t.Parallel()
	build := func(disturbed string) *report.Report {
		r := likeReport(engine.MySQL, engine.LikeTable{},
			likeLoad{name: "counter", kind: scheme.Baseline, pkBytes: 100_000, server: map[string]float64{"pages_written_per_1000": 20, "redo_bytes_per_insert": 200}},
			likeLoad{name: "traceid", pkBytes: 100_000, server: map[string]float64{"pages_written_per_1000": 21, "redo_bytes_per_insert": 210}},
			likeLoad{name: "ulid", keyBytes: 16, pkBytes: 160_000, server: map[string]float64{"pages_written_per_1000": 5, "redo_bytes_per_insert": 100}},
		)
		r.Like, r.Config.Like = nil, ""
		for i := range r.Schemes {
			if r.Schemes[i].Name == disturbed {
				r.Schemes[i].Runs[0].Engines[0].Metrics["disturbed"] = 1
			}
		}
		return r
	}
	quiet, err := build("").Decide(report.Need{}, engine.MySQL)
	require.NoError(t, err)
	assert.NotContains(t, quiet.Basis, "left out")
	assert.Equal(t, "ulid", quiet.Ranked[0].Scheme, "its quiet counters are lower")

	v, err := build("ulid").Decide(report.Need{}, engine.MySQL)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(v.Basis, "clustered index size on mysql"), v.Basis)
	assert.Contains(t, v.Basis, "; pages written left out: another session wrote to the server during the loads of ulid")
	assert.Contains(t, v.Basis, "; redo left out: another session wrote to the server during the loads of ulid")
	assert.Empty(t, v.Ranked, "no scheme ranks on size alone")
	assert.Contains(t, v.CannotJudge, "cannot judge writes here")
	assert.Contains(t, v.CannotJudge, "run again when no other session writes to the server")
	require.Len(t, v.Unjudged, 2)
	assert.Equal(t, "traceid", v.Unjudged[0].Scheme, "the 8-byte key first, unranked")
	var text strings.Builder
	require.NoError(t, (&report.Report{Schemes: build("ulid").Schemes, Engines: []engine.Info{{Name: engine.MySQL}}, Verdict: v}).WriteTable(&text))
	assert.Contains(t, text.String(), "\n  cannot judge writes here")
	assert.Contains(t, text.String(), "\n  unranked traceid: ")
	assert.NotContains(t, text.String(), "no scheme meets")
	var page strings.Builder
	require.NoError(t, (&report.Report{Schemes: build("ulid").Schemes, Engines: []engine.Info{{Name: engine.MySQL}}, Verdict: v}).WriteHTML(&page))
	assert.Contains(t, page.String(), "<b>cannot judge writes here")
	assert.Contains(t, page.String(), "<li>unranked <b>traceid</b>: ")
	assert.NotContains(t, page.String(), "no scheme meets")
}
