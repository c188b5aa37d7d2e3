package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Small runs are shared by the tests that only read their report.
const (
	smallN       = 3000
	smallWriters = 3
)

var small struct {
	once     sync.Once
	report   *report.Report
	progress string
	err      error
}

// smallReport runs every scheme once at N = smallN with smallWriters
// writers.
func smallReport(t *testing.T) *report.Report {
	t.Helper()
	small.once.Do(func() {
		var progress bytes.Buffer
		small.report, small.err = Run(Options{
			N: smallN, Writers: smallWriters, BatchSize: 500,
			SpeedTime: time.Millisecond, Dir: t.TempDir(), Progress: &progress,
		})
		small.progress = progress.String()
	})
	require.NoError(t, small.err)
	return small.report
}

func TestRunShape(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	require.Len(t, r.Schemes, len(scheme.Schemes()))
	assert.Equal(t, report.Config{
		N: smallN, Writers: smallWriters, Fills: DefaultFills, BatchSize: 500, ValueSize: DefaultValueSize,
		PageSize: r.Config.PageSize, SpeedTimeNs: int64(time.Millisecond), CheckpointEvery: 500,
		Ranges: engine.RangeModel{Nodes: 4, RangeRows: 100, PreSplit: 1},
	}, r.Config)
	assert.Equal(t, []string{engine.Bbolt, engine.SQLite, engine.Pebble}, r.Measured(), "the embedded engines run by default")
	assert.Positive(t, r.Config.PageSize)
	assert.Positive(t, r.Seconds)
	for _, s := range r.Schemes {
		t.Run(s.Name, func(t *testing.T) {
			assert.Positive(t, s.Speed.NsPerID, "ns/ID")
			assert.Positive(t, s.Speed.ParallelNsPerID, "parallel ns/ID")
			assert.GreaterOrEqual(t, s.Speed.AllocsPerID, 0.0)
			require.Len(t, s.Runs, 2)
			for i, run := range s.Runs {
				assert.Equal(t, []int{1, smallWriters}[i], run.Writers)
				assert.Zero(t, run.Order.Duplicates, "%d writers issued a key twice", run.Writers)
				require.Len(t, run.Loads, len(DefaultFills))
				for j, l := range run.Loads {
					assert.Equal(t, DefaultFills[j], l.FillPercent)
					assert.Equal(t, smallN, l.Keys, "every insert is a distinct key")
					assert.Equal(t, smallN/500, l.Commits)
					assert.Greater(t, l.PagesWritten, int64(l.Commits), "each commit writes a meta page and more")
					assert.InDelta(t, float64(l.PagesWritten)*1000/smallN, l.PagesPer1000, 1e-9)
					assert.Greater(t, l.LeafFill, 0.2)
					assert.LessOrEqual(t, l.LeafFill, 1.0)
					assert.GreaterOrEqual(t, l.DataBytes, int64(smallN*(s.Runs[0].Size.KeyBytes+DefaultValueSize)), "the data fits in the pages")
					assert.GreaterOrEqual(t, l.FileBytes, l.DataBytes)
					assert.Positive(t, l.InsertsPerSecond)
				}
				sq, ok := run.EngineLoad(engine.SQLite)
				require.True(t, ok, "a SQLite load of the same keys")
				assert.Positive(t, sq.Metrics["wal_frames_per_1000"])
				assert.Positive(t, sq.Metrics["inserts_per_second"])
				assert.Greater(t, sq.Metrics["leaf_density"], 0.3)
				assert.GreaterOrEqual(t, sq.Metrics["bytes_per_key"], float64(run.Size.KeyBytes+DefaultValueSize))
			}
			if s.Kind == scheme.Peer {
				assert.NotEmpty(t, s.Module)
			}
		})
	}
}

func TestRunProgress(t *testing.T) {
	t.Parallel()
	smallReport(t)
	p := small.progress
	assert.NotContains(t, p, "\r", "no bar outside a terminal")
	lines := strings.Split(strings.TrimSuffix(p, "\n"), "\n")
	require.NotEmpty(t, lines)
	// First what the run needs of the disk, then one line per step.
	assert.Regexp(t, `^disk: about \d+ MiB of disk at once .*, \d+ MiB written in all, in /`, lines[0])
	lines = lines[1:]
	require.NotEmpty(t, lines)
	assert.Contains(t, lines[0], "counter: generation speed")
	assert.Contains(t, p, "bbolt, 3 writer(s), fill 0.9")
	total := strings.TrimSuffix(strings.Fields(lines[len(lines)-1])[0][1:], "]")
	done, all, ok := strings.Cut(total, "/")
	require.True(t, ok, "a step line starts with [done/total]: %q", lines[len(lines)-1])
	assert.Equal(t, all, strings.TrimSpace(done), "the last line is the last step")
	assert.Len(t, lines, mustAtoi(t, all), "one line per step")
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// On a terminal the bar is redrawn in place and cleared at the end.
func TestProgressBar(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := newProgress(&out, true, 2)
	p.label("first")
	p.partial(0.5)
	p.step(1)
	p.label("second")
	p.step(1)
	p.finish()
	s := out.String()
	assert.Contains(t, s, "\r[=======", "redrawn with carriage returns")
	assert.Contains(t, s, " 25% first")
	assert.Contains(t, s, "100% second")
	assert.NotContains(t, s, "\n")
	assert.True(t, strings.HasSuffix(s, "\r"), "the bar is cleared at the end")
	assert.NotContains(t, s, "ETA", "no estimate in the first second")
}

// The bar estimates the time left from the pace so far.
func TestProgressETA(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	p := newProgress(&out, true, 4)
	now := p.start
	p.now = func() time.Time { return now }
	p.label("first")
	now = now.Add(30 * time.Second)
	p.step(1) // a quarter in 30 s: 90 s left
	assert.Contains(t, out.String(), " 25% ETA 1m30s first")
	p.step(3)
	p.finish()
	assert.NotContains(t, out.String(), "100% ETA", "no estimate once done")
}

func TestRunOptionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"N", Options{N: -1}, "N = -1, want 1..=50000000"},
		{"N too big", Options{N: MaxN + 1}, "N = 50000001, want 1..=50000000"},
		{"writers", Options{Writers: 2000}, "Writers = 2000, want 1..=1024"},
		{"batch", Options{BatchSize: -5}, "BatchSize = -5, want 1..=1000000"},
		{"value", Options{ValueSize: 1 << 20}, "ValueSize = 1048576, want 1..=65536"},
		{"page", Options{PageSize: 3000}, "PageSize = 3000, want 0 (the OS page size) or a power of two in 1024..=65536"},
		{"fill", Options{Fills: []float64{0.5, 1.5}}, "fill 1.5, want 0.1..=1"},
		{"no fills", Options{Fills: []float64{}}, "Fills is empty"},
		{"no schemes", Options{Schemes: []scheme.Scheme{}}, "no schemes, want at least one of counter"},
		{"speed", Options{SpeedTime: time.Hour}, "SpeedTime = 1h0m0s, want 0 (default 100ms) up to 1m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Run(tt.opts)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrOptions)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestRunGeneratorError(t *testing.T) {
	t.Parallel()
	bad := scheme.Scheme{
		Name: "short", KeyLen: 8,
		New: func(writers int) ([]scheme.Generator, error) {
			return scheme.Each(writers, func(int) (scheme.Generator, error) {
				return scheme.GenFunc(func(dst []byte) ([]byte, error) { return append(dst, 1), nil }), nil
			})
		},
		Design: func() scheme.Design { return scheme.Design{Bits: 64} },
	}
	_, err := Run(Options{N: 10, Schemes: []scheme.Scheme{bad}, SpeedTime: time.Millisecond, Dir: t.TempDir()})
	require.Error(t, err)
	assert.ErrorIs(t, err, scheme.ErrKey)
	assert.Contains(t, err.Error(), "compare: short: ")
}

func TestWriteTable(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	var b strings.Builder
	require.NoError(t, r.WriteTable(&b))
	out := b.String()
	for _, want := range []string{
		"DESIGN — computed from each scheme's layout, not measured",
		"GENERATION, ORDER, SIZE — measured in this run (3,000 keys generated back to back)",
		"INSERT LOCALITY IN BBOLT — measured in this run",
		"headline: pages written per 1,000 inserts",
		"pages/1k @0.5", "pages/1k @0.9", "leaf fill @0.9", "append  inversions",
		"INSERT LOCALITY IN SQLITE — measured in this run (3,000 keys", "WAL frames/1k",
		"postgres skipped: no server: set IDKIT_POSTGRES_DSN", "VERDICT — need none, engine sqlite, 3 writer(s)",
		"rejected uuidv4: WAL frames",
		"sonyflake: locality keys composed over a simulated clock",
		"until 2188-11-16",
	} {
		assert.Contains(t, out, want)
	}
	for _, s := range r.Schemes {
		// Design row, and one row per writer count in generation, bbolt
		// and SQLite.
		assert.GreaterOrEqual(t, strings.Count(out, s.Name+" "), 7, "%s rows", s.Name)
	}
}

func TestWriteTableError(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	err := r.WriteTable(failWriter{})
	assert.ErrorIs(t, err, errFail)
}

func TestWriteJSON(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	var b bytes.Buffer
	require.NoError(t, r.WriteJSON(&b))
	var got report.Report
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.Equal(t, r.Config, got.Config)
	assert.Equal(t, r.Machine, got.Machine)
	require.Len(t, got.Schemes, len(r.Schemes))
	for i := range got.Schemes {
		assert.Equal(t, r.Schemes[i].Runs, got.Schemes[i].Runs)
		assert.Equal(t, r.Schemes[i].Design.Epoch.Unix(), got.Schemes[i].Design.Epoch.Unix())
	}
	assert.Equal(t, r.Verdict, got.Verdict)
	assert.Equal(t, r.Engines, got.Engines)
	assert.Len(t, got.Columns, len(r.Columns))
	for _, c := range got.Columns {
		assert.NotEmpty(t, c.Doc, "column %s", c.Key)
		assert.Contains(t, []string{report.SourceComputed, report.SourceMeasured}, c.Source, "column %s", c.Key)
		assert.NotEqual(t, engine.Postgres, c.Section, "no columns for an engine that did not run")
	}
	assert.Contains(t, b.String(), `"head": "ns/ID x`+fmt.Sprint(r.Goroutines())+`"`)
	for _, key := range []string{`"design"`, `"speed"`, `"runs"`, `"pages_written_per_1000"`, `"sources"`, `"wal_frames_per_1000"`, `"verdict"`, `"columns"`} {
		assert.Contains(t, b.String(), key)
	}
	assert.Contains(t, got.Sources["design"], "computed from each scheme's layout")
	assert.Contains(t, got.Sources["runs"], "measured in this run")
}

func TestWriteHTML(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	var b strings.Builder
	require.NoError(t, r.WriteHTML(&b))
	page := b.String()
	// Pebble adds its headline, reads, expiry and the LSM tree's verdict.
	assert.Equal(t, 14, strings.Count(page, "data-chart="), "one svg per chart, each verdict's among them")
	assert.Less(t, strings.Index(page, `id="verdict"`), strings.Index(page, "data-chart="), "the page opens with the verdict")
	for _, tbl := range r.Tables() {
		assert.Contains(t, page, `<table id="table-`+tbl.ID+`">`)
		for _, h := range tbl.Head {
			assert.Contains(t, page, ">"+template.HTMLEscapeString(h)+"</th>", "the HTML table has the text table's column %q", h)
		}
	}
	assert.Contains(t, page, `<script id="report-data" type="application/json">{"tool":"idkit compare"`)
	assert.NotContains(t, page, "</script><script src", "nothing loaded from elsewhere")
	assertNoExternalResources(t, page)
	for _, s := range r.Schemes {
		assert.Contains(t, page, "<td>"+s.Name+"</td>")
	}

	assert.ErrorIs(t, (&report.Report{}).WriteHTML(&b), ErrEmptyReport)
}

// assertNoExternalResources fails if the page refers to anything it would
// have to fetch.
func assertNoExternalResources(t *testing.T, page string) {
	t.Helper()
	for _, attr := range []string{`src="http`, `href="http`, `src="//`, `href="//`, "@import", "url(http"} {
		assert.NotContains(t, page, attr)
	}
}

type failWriter struct{}

var errFail = assert.AnError

func (failWriter) Write([]byte) (int, error) { return 0, errFail }
