package compare

import (
	"bytes"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNiceCeil: the top of a chart's axis is the next of 1, 2, 2.5, 3,
// 4, 5, 6 and 8 times a power of ten.
func TestNiceCeil(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]float64{0: 1, -3: 1, 0.3: 0.3, 1: 1, 1.2: 2, 2.2: 2.5, 3.1: 4, 255: 300, 797: 800, 1001: 2000, 24.2: 25, 5500: 6000} {
		assert.InDelta(t, want, niceCeil(v), 1e-9, "niceCeil(%g)", v)
	}
}

// TestLineChart: a point per size on each series, in the plot, higher
// values higher up, a missing value left out of its line; the axes, five
// value ticks, a tick per size and a legend entry per series; names
// escaped.
func TestLineChart(t *testing.T) {
	t.Parallel()
	svg := string(lineChart("c", "pages", []int{10_000, 100_000, 1_000_000}, []lineSeries{
		{name: "counter", values: []float64{24, 24, 24}},
		{name: "<uuid>", values: []float64{47, 257, math.NaN()}},
	}, fmtInt))
	assert.Equal(t, 2, strings.Count(svg, `class="axis"`))
	assert.Equal(t, 5, strings.Count(svg, `class="ytick"`))
	assert.Equal(t, 3, strings.Count(svg, `class="xtick"`))
	assert.Equal(t, 2, strings.Count(svg, `class="legend"`))
	assert.Equal(t, 5, strings.Count(svg, `class="point"`), "a dot per value, none for the missing one")
	assert.Contains(t, svg, "&lt;uuid&gt;")
	assert.NotContains(t, svg, "<uuid>")
	assert.Contains(t, svg, ">1,000,000</text>")
	assert.Contains(t, svg, ">300</text>", "the axis runs to the next round value above 257")
	// The uuid line rises: its second point is above (a smaller y than)
	// its first.
	i := strings.Index(svg, `data-scheme="&lt;uuid&gt;" points="`)
	require.GreaterOrEqual(t, i, 0)
	pts := strings.Fields(strings.SplitN(svg[i+len(`data-scheme="&lt;uuid&gt;" points="`):], `"`, 2)[0])
	require.Len(t, pts, 2)
	y := func(p string) float64 {
		v, err := strconv.ParseFloat(strings.Split(p, ",")[1], 64)
		require.NoError(t, err)
		return v
	}
	assert.Less(t, y(pts[1]), y(pts[0]))
}

// TestGrowthHTMLInBrowser renders a growth run's page in headless
// Chromium. From the DOM: every chart has a line and a legend entry per
// scheme, a tick per size and its axes. From a screenshot of the first
// chart: each scheme's colour is on the screen, in its line and its
// legend, and so are the axes.
func TestGrowthHTMLInBrowser(t *testing.T) {
	t.Parallel()
	bin := needChromium(t)
	o := Options{NoSQLite: true, NoPebble: true, SpeedTime: time.Millisecond, Dir: t.TempDir(), Fills: []float64{0.9}}
	var err error
	o.Schemes, err = Select("counter,uuidv4,traceid")
	require.NoError(t, err)
	g, err := GrowContext(t.Context(), o, []int{2_000, 20_000})
	require.NoError(t, err)
	dir := t.TempDir()
	page := filepath.Join(dir, "grow.html")
	var b bytes.Buffer
	require.NoError(t, g.WriteHTML(&b))
	require.NoError(t, os.WriteFile(page, b.Bytes(), 0o600))

	run := func(args ...string) []byte {
		return runChromium(t, bin, dir, "800,700", append([]string{"--hide-scrollbars", "--force-device-scale-factor=1"}, args...)...)
	}

	charts := svgCharts(t, string(run("--dump-dom", "file://"+page)))
	want := len(growFigures(engine.Bbolt))
	require.Len(t, charts, want, "a chart per bbolt figure")
	for name, c := range charts {
		assert.Equal(t, "3", c.attrs["data-series"], name)
		assert.Equal(t, 3, strings.Count(c.body, `class="series"`), "%s: a line per scheme", name)
		assert.Equal(t, 3, strings.Count(c.body, `class="legend"`), "%s: a legend entry per scheme", name)
		assert.Equal(t, 2, strings.Count(c.body, `class="xtick"`), "%s: a tick per size", name)
		assert.Equal(t, 2, strings.Count(c.body, `class="axis"`), "%s: the axes", name)
		for _, s := range []string{"counter", "uuidv4", "traceid"} {
			assert.Contains(t, c.body, ">"+s+"</text>", "%s: legend names %s", name, s)
		}
	}

	shot := filepath.Join(dir, "grow.png")
	run("--screenshot="+shot, "file://"+page)
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	count := func(want color.Color) int {
		wr, wg, wb, _ := want.RGBA()
		n := 0
		bounds := img.Bounds()
		for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
			for x := bounds.Min.X; x < bounds.Max.X; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				if r>>8 == wr>>8 && g>>8 == wg>>8 && b>>8 == wb>>8 {
					n++
				}
			}
		}
		return n
	}
	for i, s := range []string{"counter", "uuidv4", "traceid"} {
		c := hexColor(t, chartPalette[i])
		assert.GreaterOrEqual(t, count(c), 140, "%s's colour %s: its legend box (14x10) at least", s, chartPalette[i])
	}
	assert.GreaterOrEqual(t, count(hexColor(t, "#333333")), 400, "the axes, drawn in #333")
}

func hexColor(t *testing.T, h string) color.Color {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(h, "#"), 16, 32)
	require.NoError(t, err)
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}
