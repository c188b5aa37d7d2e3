package compare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/idkit/idkit/internal/testkit/testenv"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium returns the path of a headless-capable Chromium, or "".
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// needChromium returns the path of Chromium, or skips the test without
// it, unless IDKIT_REQUIRE_BROWSER=1 (as in CI) or CI, where it fails.
func needChromium(t *testing.T) string {
	t.Helper()
	bin := chromium()
	if bin == "" {
		if os.Getenv("IDKIT_REQUIRE_BROWSER") == "1" || testenv.CI() {
			t.Fatal("IDKIT_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install -y chromium)")
		}
		t.Skip("no chromium on PATH; set IDKIT_REQUIRE_BROWSER=1 to make this a failure")
	}
	return bin
}

// runChromium runs headless Chromium with a profile in dir, a window of
// size ("800,600") and args, within two minutes, and returns its output.
func runChromium(t *testing.T, bin, dir, size string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--window-size=" + size, "--user-data-dir=" + filepath.Join(dir, "profile")}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())
	return out
}

// TestHTMLInBrowser loads the HTML report in headless Chromium and checks
// from the DOM it dumps that the script drew every chart with one bar per
// scheme and series. Without Chromium it skips, unless
// IDKIT_REQUIRE_BROWSER=1 (as in CI), where it fails.
func TestHTMLInBrowser(t *testing.T) {
	t.Parallel()
	bin := needChromium(t)
	r := smallReport(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	require.NoError(t, err)
	require.NoError(t, r.WriteHTML(f))
	require.NoError(t, f.Close())
	// A probe, in this copy of the page only, reads the layout once the
	// report's script has drawn: how wide the page is against the window.
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	probe := `<script>document.body.setAttribute("data-page-width", document.documentElement.scrollWidth);` +
		`document.body.setAttribute("data-window-width", window.innerWidth);</script></body>`
	require.NoError(t, os.WriteFile(page, []byte(strings.Replace(string(html), "</body>", probe, 1)), 0o600))

	dom := string(runChromium(t, bin, dir, "800,600", "--dump-dom", "file://"+page))

	writerRuns, fills := len(r.WriterCounts()), len(r.Config.Fills)
	want := map[string]int{
		"pages":      writerRuns * fills,
		"splits":     writerRuns * fills,
		"fill":       writerRuns * fills,
		"rate":       writerRuns * fills,
		"speed":      2,
		"order":      2 * writerRuns,
		"size":       1 + writerRuns,
		"randomness": 3,
		// One chart per database engine that ran: SQLite by default.
		"engine-sqlite": writerRuns,
		// The verdict's figures on SQLite: WAL frames and bytes per key.
		"verdict": len(report.VerdictFigures[engine.SQLite]),
		// Pebble, embedded too: its headline, reads (over the table and
		// its newest 1%), expiry, and the LSM tree's verdict.
		"engine-pebble":  writerRuns,
		"reads-pebble":   2,
		"expiry-pebble":  1,
		"verdict-pebble": len(report.VerdictFigures[engine.Pebble]),
	}
	charts := svgCharts(t, dom)
	require.Len(t, charts, len(want), "charts in the page")
	for name, series := range want {
		t.Run(name, func(t *testing.T) {
			c, ok := charts[name]
			require.True(t, ok, "chart %s missing", name)
			assert.Empty(t, c.attrs["data-error"], "script error")
			assert.Equal(t, "true", c.attrs["data-drawn"])
			bars := series * len(r.Schemes)
			assert.Equal(t, strconv.Itoa(bars), c.attrs["data-bars"])
			assert.Equal(t, bars, strings.Count(c.body, `class="bar"`), "bars in the DOM")
			assert.GreaterOrEqual(t, strings.Count(c.body, "<text"), len(r.Schemes)+series, "labels")
		})
	}
	assert.Contains(t, dom, fmt.Sprintf(`data-charts-drawn="%d"`, len(want)))

	t.Run("verdict over the baseline", func(t *testing.T) {
		// The counter comes first and is the baseline: each of its bars
		// is 1, its figure over itself.
		bars := barRe.FindAllStringSubmatch(charts["verdict"].body, -1)
		require.GreaterOrEqual(t, len(bars), 2)
		for _, b := range bars[:2] {
			assert.Contains(t, b[1], `data-value="1"`)
		}
	})

	t.Run("fits the window", func(t *testing.T) {
		// Wide tables scroll in their own box; the page does not.
		body := attrRe.FindAllStringSubmatch(regexp.MustCompile(`<body ([^>]*)>`).FindString(dom), -1)
		attrs := map[string]string{}
		for _, a := range body {
			attrs[a[1]] = a[2]
		}
		page, err1 := strconv.Atoi(attrs["data-page-width"])
		window, err2 := strconv.Atoi(attrs["data-window-width"])
		require.NoError(t, errors.Join(err1, err2), "the layout probe's attributes: %v", attrs)
		assert.LessOrEqual(t, page, window, "the page is wider than an 800-pixel window")
	})
	t.Run("bars to scale", func(t *testing.T) {
		// Every bar's length is its value times one scale of its chart,
		// and the longest bar of a series that spans 1.5-fold or more
		// says its multiple of the lowest.
		for _, name := range []string{"pages", "speed", "engine-sqlite", "splits"} {
			c := charts[name]
			scale := 0.0
			for _, m := range barRe.FindAllStringSubmatch(c.body, -1) {
				attrs := map[string]string{}
				for _, a := range attrRe.FindAllStringSubmatch(m[1], -1) {
					attrs[a[1]] = a[2]
				}
				w, err1 := strconv.ParseFloat(attrs["width"], 64)
				v, err2 := strconv.ParseFloat(attrs["data-value"], 64)
				require.NoError(t, errors.Join(err1, err2), "%s: bar %v", name, attrs)
				if w <= 0.5 || v <= 0 {
					continue // too short to measure
				}
				if scale == 0 {
					scale = w / v
				}
				assert.InEpsilon(t, scale, w/v, 1e-6, "%s: bar of %v is %v long, not to the chart's scale", name, v, w)
			}
			require.NotZero(t, scale, "%s: no bar long enough to measure", name)
		}
		assert.Contains(t, charts["pages"].body, "×", "the pages chart labels no multiple, yet random and ordered keys differ many-fold")
	})
}

var barRe = regexp.MustCompile(`<rect ([^>]*class="bar"[^>]*)>`)

type svgChart struct {
	attrs map[string]string
	body  string
}

var (
	svgOpen = regexp.MustCompile(`<svg ([^>]*data-chart="[^"]*"[^>]*)>`)
	attrRe  = regexp.MustCompile(`([a-z-]+)="([^"]*)"`)
)

// svgCharts finds the chart svg elements of a serialized DOM, with their
// attributes and inner markup.
func svgCharts(t *testing.T, dom string) map[string]svgChart {
	t.Helper()
	charts := map[string]svgChart{}
	for _, m := range svgOpen.FindAllStringSubmatchIndex(dom, -1) {
		attrs := map[string]string{}
		for _, a := range attrRe.FindAllStringSubmatch(dom[m[2]:m[3]], -1) {
			attrs[a[1]] = a[2]
		}
		end := strings.Index(dom[m[1]:], "</svg>")
		require.GreaterOrEqual(t, end, 0, "unclosed svg")
		charts[attrs["data-chart"]] = svgChart{attrs: attrs, body: dom[m[1] : m[1]+end]}
	}
	return charts
}
