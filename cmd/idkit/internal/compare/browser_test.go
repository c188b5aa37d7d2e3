package compare

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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

// TestHTMLInBrowser loads the HTML report in headless Chromium and checks
// from the DOM it dumps that the script drew every chart with one bar per
// scheme and series. Without Chromium it skips, unless
// IDKIT_REQUIRE_BROWSER=1 (as in CI), where it fails.
func TestHTMLInBrowser(t *testing.T) {
	t.Parallel()
	bin := chromium()
	if bin == "" {
		if os.Getenv("IDKIT_REQUIRE_BROWSER") == "1" || testenv.CI() {
			t.Fatal("IDKIT_REQUIRE_BROWSER=1 but no chromium on PATH (apt-get install -y chromium)")
		}
		t.Skip("no chromium on PATH; set IDKIT_REQUIRE_BROWSER=1 to make this a failure")
	}
	r := smallReport(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	require.NoError(t, err)
	require.NoError(t, r.WriteHTML(f))
	require.NoError(t, f.Close())

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+page)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "chromium: %s", stderr.String())
	dom := string(out)

	writerRuns, fills := len(r.writerCounts()), len(r.Config.Fills)
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
}

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
