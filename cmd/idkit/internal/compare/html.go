package compare

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
)

//go:embed report.html
var reportHTML string

//go:embed report.js
var reportJS string

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"thousands": func(v any) string {
		switch v := v.(type) {
		case int:
			return thousands(int64(v))
		case int64:
			return thousands(v)
		case float64:
			return thousands(int64(v + 0.5))
		}
		return fmt.Sprint(v)
	},
	"fills": joinFloats,
	"yesno": yesNo,
	"pct":   pct,
	"ns":    num,
}).Parse(reportHTML))

// htmlView is what the template sees: the report, its writer counts, the
// report again for the embedded JSON, and the drawing script.
type htmlView struct {
	*Report
	WriterCounts []int
	Tables       []Table
	EngineCharts []engineChart
	VerdictChart *figureChart
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

// verdictChart draws the figures the verdict ranks by, each over the
// baseline's, in the run it read; nil without a verdict or a baseline.
func (r *Report) verdictChart() *figureChart {
	v, base := r.Verdict, r.baselineResult()
	if v == nil || base == nil {
		return nil
	}
	run := slices.Index(r.writerCounts(), v.Writers)
	if run < 0 || len(v.Figures) == 0 {
		return nil
	}
	var keys, labels []string
	for _, f := range v.Figures {
		keys, labels = append(keys, f.Key), append(labels, f.Name)
	}
	return &figureChart{
		ID: "verdict", Title: fmt.Sprintf("The verdict's figures on %s, %d writer(s), over the %s's", v.Engine, v.Writers, base.Name),
		Doc:    "Each figure the verdict ranks by, divided by the baseline's: above 2 a scheme is rejected.",
		Engine: v.Engine, Keys: strings.Join(keys, ","), Labels: strings.Join(labels, "|"), Run: run, Baseline: base.Name,
	}
}

// readCharts draws, for each server engine whose loads were read back,
// the pages a point lookup touches in the run with the most writers.
func (r *Report) readCharts() []figureChart {
	titles := map[string]string{EnginePostgres: "PostgreSQL", EngineMySQL: "InnoDB"}
	var out []figureChart
	for _, e := range r.measured() {
		if titles[e] == "" {
			continue
		}
		out = append(out, figureChart{
			ID: "reads-" + e, Title: "Reads in " + titles[e] + ": pages per point lookup",
			Doc:    "Pages a lookup by key touches, over 1,000 keys spread over the table and over up to 1,000 of its newest 1% of rows; counts, the same from run to run.",
			Engine: e, Keys: "lookup_pages,lookup_pages_newest", Labels: "spread over the table|newest 1%", Run: len(r.writerCounts()) - 1,
		})
	}
	return out
}

// engineChart is the headline chart of a database engine.
type engineChart struct {
	ID, Engine, Key, Title, Head, Doc string
}

// engineCharts returns a chart for each database engine that ran.
func (r *Report) engineCharts() []engineChart {
	titles := map[string]string{EngineSQLite: "SQLite", EnginePostgres: "PostgreSQL", EngineMySQL: "InnoDB"}
	var out []engineChart
	for _, e := range r.measured() {
		if e == EngineBbolt {
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
	if err := reportTemplate.Execute(&b, htmlView{Report: r, WriterCounts: r.writerCounts(), Tables: r.tables(), EngineCharts: r.engineCharts(),
		VerdictChart: r.verdictChart(), ReadCharts: r.readCharts(), Data: r, Script: template.JS(reportJS)}); err != nil {
		return fmt.Errorf("compare: write HTML: %w", err)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("compare: write HTML: %w", err)
	}
	return nil
}
