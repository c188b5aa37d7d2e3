package report

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNiceCeil: the top of a chart's axis is the next of 1, 2, 2.5, 3,
// 4, 5, 6 and 8 times a power of ten.
func TestNiceCeil(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]float64{0: 1, -3: 1, 0.3: 0.3, 1: 1, 1.2: 2, 2.2: 2.5, 3.1: 4, 255: 300, 797: 800, 1001: 2000, 24.2: 25, 5500: 6000} {
		assert.InDelta(t, want, NiceCeil(v), 1e-9, "niceCeil(%g)", v)
	}
}

// TestLineChart: a point per size on each series, in the plot, higher
// values higher up, a missing value left out of its line; the axes, five
// value ticks, a tick per size and a legend entry per series; names
// escaped.
func TestLineChart(t *testing.T) {
	t.Parallel()
	svg := string(LineChart("c", "pages", []int{10_000, 100_000, 1_000_000}, []LineSeries{
		{name: "counter", values: []float64{24, 24, 24}},
		{name: "<uuid>", values: []float64{47, 257, math.NaN()}},
	}, FmtInt))
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
