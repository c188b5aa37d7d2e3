package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/idkit/idkit/compare/internal/engine"
)

//go:embed report.html
var reportHTML string

//go:embed report.js
var reportJS string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"thousands": func(v any) string {
		switch v := v.(type) {
		case int:
			return engine.Thousands(int64(v))
		case int64:
			return engine.Thousands(v)
		case float64:
			return engine.Thousands(int64(v + 0.5))
		}
		return fmt.Sprint(v)
	},
	"fills": JoinFloats,
	"yesno": yesNo,
	"pct":   engine.Pct,
	"ns":    num,
}).Parse(reportHTML))

// htmlView is what the template sees: the report, its writer counts, the
// report again for the embedded JSON, and the drawing script.
type htmlView struct {
	*Report
	WriterCounts []int
	Tables       []Table
	EngineCharts []engineChart
	Verdicts     []verdictView
	ReadCharts   []figureChart
	Data         *Report
	Script       template.JS
}

// figureChart is a chart of chosen figures of one engine in one writer
// run, each a series; with a Baseline, each figure over that scheme's.
type figureChart struct {
	ID, Title, Doc, Engine string
	Keys, Labels           string // comma- and |-separated, in series order
	Run                    int
	Baseline               string
}

// verdictView is one verdict of the page: its heading's id, whether it
// ranks the copies of a --like run's table, and the chart of its figures.
type verdictView struct {
	*Verdict
	ID    string
	Like  bool
	Chart *figureChart
}

// verdictViews returns the report's verdict, then the verdict on the
// other engine family, each with its chart.
func (r *Report) verdictViews() []verdictView {
	var out []verdictView
	for i, v := range r.verdicts() {
		id := "verdict"
		if i > 0 {
			id += "-" + v.Engine
		}
		out = append(out, verdictView{Verdict: v, ID: id, Like: i == 0 && r.Config.Like != "", Chart: r.verdictChart(v, id)})
	}
	return out
}

// verdictChart draws the figures verdict v ranks by, each over the
// baseline's, in the run it read; nil without a baseline.
func (r *Report) verdictChart(v *Verdict, id string) *figureChart {
	base := r.baselineResult()
	if v == nil || base == nil {
		return nil
	}
	run := slices.Index(r.WriterCounts(), v.Writers)
	if run < 0 || len(v.Figures) == 0 {
		return nil
	}
	var keys, labels []string
	for _, f := range v.Figures {
		keys, labels = append(keys, f.Key), append(labels, f.Name)
	}
	return &figureChart{
		ID: id, Title: fmt.Sprintf("The verdict's figures on %s, %d writer(s), over the %s's", v.Engine, v.Writers, base.Name),
		Doc:    "Each figure the verdict ranks by, divided by the baseline's: above 2 a scheme is rejected.",
		Engine: v.Engine, Keys: strings.Join(keys, ","), Labels: strings.Join(labels, "|"), Run: run, Baseline: base.Name,
	}
}

// readCharts draws, for each server engine whose loads were read back,
// the pages a point lookup touches in the run with the most writers.
func (r *Report) readCharts() []figureChart {
	titles := map[string]string{engine.Postgres: "PostgreSQL", engine.MySQL: "InnoDB"}
	var out []figureChart
	for _, e := range r.Measured() {
		if engineFamily[e] == FamilyLSM {
			out = append(out, r.lsmCharts(e)...)
			continue
		}
		if titles[e] == "" {
			continue
		}
		out = append(out, figureChart{
			ID: "reads-" + e, Title: "Reads in " + titles[e] + ": pages per point lookup",
			Doc:    "Pages a lookup by key touches, over 1,000 keys spread over the table and over up to 1,000 of its newest 1% of rows; counts, the same from run to run.",
			Engine: e, Keys: "lookup_pages,lookup_pages_newest", Labels: "spread over the table|newest 1%", Run: len(r.WriterCounts()) - 1,
		})
	}
	return out
}

// lsmCharts draws the reads and the expiry of an LSM engine, in the run
// with the most writers.
func (r *Report) lsmCharts(e string) []figureChart {
	run := len(r.WriterCounts()) - 1
	return []figureChart{{
		ID: "reads-" + e, Title: "Reads in " + chartTitles[e] + ": blocks per point lookup",
		Doc:    "Blocks (index, filter, data) a lookup by key touches, over 1,000 keys spread over the table and over up to 1,000 of its newest 1% of rows; counts, the same from run to run.",
		Engine: e, Keys: "lookup_blocks,lookup_newest_blocks", Labels: "spread over the table|newest 1%", Run: run,
	}, {
		ID: "expiry-" + e, Title: "Expiry in " + chartTitles[e] + ": bytes written per expired row",
		Doc:    "Log, flush and compaction bytes from deleting the oldest tenth of the rows (one range deletion when the keys sort rows by age, else row by row) until their space was reclaimed, per expired row.",
		Engine: e, Keys: "expiry_bytes_per_row", Labels: "bytes written per expired row", Run: run,
	}}
}

// chartTitles name the engines in the charts' titles.
var chartTitles = map[string]string{engine.SQLite: "SQLite", engine.Pebble: "Pebble", engine.Postgres: "PostgreSQL", engine.MySQL: "InnoDB", engine.MyRocks: "MyRocks", engine.SpiderRange: "Spider by range", engine.SpiderHash: "Spider by hash"}

// engineChart is the headline chart of a database engine.
type engineChart struct {
	ID, Engine, Key, Title, Head, Doc string
}

// engineCharts returns a chart for each database engine that ran.
func (r *Report) engineCharts() []engineChart {
	titles := chartTitles
	var out []engineChart
	for _, e := range r.Measured() {
		if e == engine.Bbolt {
			continue
		}
		for _, c := range r.Columns {
			if c.Section == e && c.Headline {
				out = append(out, engineChart{ID: "engine-" + e, Engine: e, Key: c.Key, Title: titles[e], Head: c.Head, Doc: c.Doc})
			}
		}
	}
	return out
}

// WriteHTML writes r as a self-contained HTML page: tables rendered on the
// server and charts that an inline script draws as SVG from the report's
// JSON, embedded in the page. It loads nothing from the network.
func (r *Report) WriteHTML(w io.Writer) error {
	if len(r.Schemes) == 0 {
		return fmt.Errorf("compare: write HTML: %w", ErrEmptyReport)
	}
	var b strings.Builder
	if err := reportTemplate.Execute(&b, htmlView{Report: r, WriterCounts: r.WriterCounts(), Tables: r.Tables(), EngineCharts: r.engineCharts(),
		Verdicts: r.verdictViews(), ReadCharts: r.readCharts(), Data: r, Script: template.JS(reportJS)}); err != nil {
		return fmt.Errorf("compare: write HTML: %w", err)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("compare: write HTML: %w", err)
	}
	return nil
}
