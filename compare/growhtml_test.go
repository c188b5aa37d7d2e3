package compare

import (
	"bytes"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
	o.Schemes, err = scheme.Select("counter,uuidv4,traceid")
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
	want := len(report.GrowFigures(engine.Bbolt))
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
		c := hexColor(t, report.ChartPalette[i])
		assert.GreaterOrEqual(t, count(c), 140, "%s's colour %s: its legend box (14x10) at least", s, report.ChartPalette[i])
	}
	assert.GreaterOrEqual(t, count(hexColor(t, "#333333")), 400, "the axes, drawn in #333")
}

func hexColor(t *testing.T, h string) color.Color {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(h, "#"), 16, 32)
	require.NoError(t, err)
	return color.RGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 255}
}
