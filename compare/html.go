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
	"maxbits": func(runs []WriterRun) int {
		m := 0
		for _, r := range runs {
			m = max(m, r.Size.MaxBits)
		}
		return m
	},
	"dups": func(runs []WriterRun) int {
		n := 0
		for _, r := range runs {
			n += r.Order.Duplicates
		}
		return n
	},
}).Parse(reportHTML))

// htmlView is what the template sees: the report, its writer counts, the
// report again for the embedded JSON, and the drawing script.
type htmlView struct {
	*Report
	WriterCounts []int
	Data         *Report
	Script       template.JS
}

// WriteHTML writes r as a self-contained HTML page: tables rendered on the
// server and charts that an inline script draws as SVG from the report's
// JSON, embedded in the page. It loads nothing from the network.
func (r *Report) WriteHTML(w io.Writer) error {
	if len(r.Schemes) == 0 {
		return fmt.Errorf("compare: write HTML: %w", ErrEmptyReport)
	}
	var b strings.Builder
	if err := reportTemplate.Execute(&b, htmlView{Report: r, WriterCounts: r.writerCounts(), Data: r, Script: template.JS(reportJS)}); err != nil {
		return fmt.Errorf("compare: write HTML: %w", err)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("compare: write HTML: %w", err)
	}
	return nil
}
