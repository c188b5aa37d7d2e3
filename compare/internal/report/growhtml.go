package report

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"strings"

	"github.com/idkit/idkit/compare/internal/engine"
)

// ChartPalette colours the schemes of a line chart, in report order; past
// its end the colours repeat with dashed lines.
var ChartPalette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// LineSeries is one scheme's line: its value at each x, NaN where it has
// none.
type LineSeries struct {
	name   string
	values []float64
}

// Geometry of a line chart, in SVG units.
const (
	chartWidth   = 640
	chartPlotTop = 16
	chartPlotH   = 220
	chartLeft    = 72
	chartRight   = 40
	legendRow    = 18
	legendCols   = 4
)

// LineChart draws series against xs as an SVG line chart: xs on a log
// scale with a tick and label at each, values on a linear scale from 0
// with five labelled ticks, a polyline and a dot per point of each
// series, and a legend below the axes. The SVG stands alone: no script,
// no style sheet, no font from the network.
func LineChart(id, yTitle string, xs []int, series []LineSeries, format func(float64) string) template.HTML {
	plotW := float64(chartWidth - chartLeft - chartRight)
	axisY := float64(chartPlotTop + chartPlotH)
	rows := (len(series) + legendCols - 1) / legendCols
	height := int(axisY) + 44 + rows*legendRow
	top := 0.0
	for _, s := range series {
		for _, v := range s.values {
			if !math.IsNaN(v) {
				top = max(top, v)
			}
		}
	}
	top = NiceCeil(top)
	lo, hi := math.Log10(float64(xs[0])), math.Log10(float64(xs[len(xs)-1]))
	x := func(i int) float64 {
		if hi == lo {
			return chartLeft + plotW/2
		}
		return chartLeft + plotW*(math.Log10(float64(xs[i]))-lo)/(hi-lo)
	}
	y := func(v float64) float64 { return axisY - chartPlotH*v/top }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" data-chart="%s" data-series="%d" data-points="%d" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		html.EscapeString(id), len(series), len(xs), chartWidth, height, chartWidth, height, html.EscapeString(yTitle))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>`, chartWidth, height)
	// The grid and the value ticks.
	for k := range 5 {
		v := top * float64(k) / 4
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd" shape-rendering="crispEdges"/>`, chartLeft, y(v), chartWidth-chartRight, y(v))
		fmt.Fprintf(&b, `<text class="ytick" x="%d" y="%.1f" font-size="11" text-anchor="end" font-family="sans-serif">%s</text>`, chartLeft-6, y(v)+4, html.EscapeString(format(v)))
	}
	// The axes, over the grid.
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%d" x2="%d" y2="%.1f" stroke="#333" shape-rendering="crispEdges"/>`, chartLeft, chartPlotTop, chartLeft, axisY)
	fmt.Fprintf(&b, `<line class="axis" x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#333" shape-rendering="crispEdges"/>`, chartLeft, axisY, chartWidth-chartRight, axisY)
	for i, n := range xs {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`, x(i), axisY, x(i), axisY+5)
		fmt.Fprintf(&b, `<text class="xtick" x="%.1f" y="%.1f" font-size="11" text-anchor="middle" font-family="sans-serif">%s</text>`, x(i), axisY+18, engine.Thousands(int64(n)))
	}
	fmt.Fprintf(&b, `<text class="xtitle" x="%.1f" y="%.1f" font-size="11" text-anchor="middle" font-family="sans-serif">N, keys in the table (log scale)</text>`, chartLeft+plotW/2, axisY+32)
	fmt.Fprintf(&b, `<text class="ytitle" x="%d" y="%d" font-size="11" font-family="sans-serif">%s</text>`, chartLeft+4, chartPlotTop-4, html.EscapeString(yTitle))
	// The series, then the legend.
	for si, s := range series {
		color, dash := ChartPalette[si%len(ChartPalette)], ""
		if si >= len(ChartPalette) {
			dash = ` stroke-dasharray="6 3"`
		}
		var pts []string
		for i, v := range s.values {
			if !math.IsNaN(v) {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
			}
		}
		fmt.Fprintf(&b, `<polyline class="series" data-scheme="%s" points="%s" fill="none" stroke="%s" stroke-width="2.5"%s/>`,
			html.EscapeString(s.name), strings.Join(pts, " "), color, dash)
		for i, v := range s.values {
			if !math.IsNaN(v) {
				fmt.Fprintf(&b, `<circle class="point" cx="%.1f" cy="%.1f" r="3.5" fill="%s"><title>%s at %s: %s</title></circle>`,
					x(i), y(v), color, html.EscapeString(s.name), engine.Thousands(int64(xs[i])), html.EscapeString(format(v)))
			}
		}
		lx := chartLeft + (si%legendCols)*((chartWidth-chartLeft)/legendCols)
		ly := int(axisY) + 44 + (si/legendCols)*legendRow
		fmt.Fprintf(&b, `<g class="legend"><rect x="%d" y="%d" width="14" height="10" fill="%s"/><text x="%d" y="%d" font-size="11" font-family="sans-serif">%s</text></g>`,
			lx, ly-9, color, lx+18, ly, html.EscapeString(s.name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every text in it is escaped above
}

// NiceCeil returns the smallest of 1, 2, 2.5, 3, 4, 5, 6 and 8 times a
// power of ten at or above v, so that a quarter of it is a round tick; 1
// for v <= 0.
func NiceCeil(v float64) float64 {
	if !(v > 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// growChart is one chart of a growth page and the table of its values.
type growChart struct {
	Title string
	SVG   template.HTML
	Head  []string
	Rows  [][]string
}

// growSection is an engine's charts.
type growSection struct {
	Engine string
	Charts []growChart
}

var growTemplate = template.Must(template.New("grow").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>idkit compare --grow</title>
<style>
body{font-family:sans-serif;margin:1.5em;max-width:60em;color:#222}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
td:first-child,th:first-child{text-align:left}
.wide{overflow-x:auto}
svg{max-width:100%;height:auto}
</style></head>
<body>
<h1>idkit compare --grow</h1>
<p>{{.Header}}</p>
{{range .Sections}}<h2>{{.Engine}}</h2>
{{range .Charts}}<h3>{{.Title}}</h3>
{{.SVG}}
<div class="wide"><table><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></div>
{{end}}{{end}}
{{with .Verdict}}<h2>Verdict at each N</h2>
<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body></html>
`))

// WriteHTML writes g as a self-contained page: for each engine a line
// chart of each figure against N, drawn as SVG by the report itself, with
// its table, and the verdict's ranking at each N.
func (g *Growth) WriteHTML(w io.Writer) error {
	if len(g.Reports) == 0 {
		return fmt.Errorf("compare: write growth HTML: %w", ErrEmptyReport)
	}
	last := g.Reports[len(g.Reports)-1]
	sizes := g.sizeLabels()
	view := struct {
		Header   string
		Sections []growSection
		Verdict  []string
	}{Header: fmt.Sprintf("Measured %s UTC on %s/%s, %d CPUs, at N = %s keys, each N a run of its own from empty tables, %d writer(s).",
		g.Reports[0].Started.Format("2006-01-02 15:04"), last.Machine.OS, last.Machine.Arch, last.Machine.CPUs, strings.Join(sizes, ", "), last.Config.Writers)}
	for _, eng := range last.Measured() {
		sec := growSection{Engine: eng}
		for _, f := range GrowFigures(eng) {
			lines, rows := g.figure(eng, f)
			sec.Charts = append(sec.Charts, growChart{
				Title: f.name, Head: append([]string{"scheme"}, sizes...), Rows: rows,
				SVG: LineChart(eng+"-"+f.key, f.name, g.Sizes, lines, f.format),
			})
		}
		view.Sections = append(view.Sections, sec)
	}
	if last.Verdict != nil {
		view.Verdict = g.verdictLines()
	}
	if err := growTemplate.Execute(w, view); err != nil {
		return fmt.Errorf("compare: write growth HTML: %w", err)
	}
	return nil
}
