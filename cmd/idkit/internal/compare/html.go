package compare

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
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
	Data         *Report
	Script       template.JS
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
	if err := reportTemplate.Execute(&b, htmlView{Report: r, WriterCounts: r.writerCounts(), Tables: r.tables(), EngineCharts: r.engineCharts(), Data: r, Script: template.JS(reportJS)}); err != nil {
		return fmt.Errorf("compare: write HTML: %w", err)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("compare: write HTML: %w", err)
	}
	return nil
}
