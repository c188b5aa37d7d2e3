package compare

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"
)

// Bounds of a growth run's sizes.
const (
	MinGrowN     = 10_000
	DefaultGrowN = 10_000_000
)

// GrowSizes returns the sizes of a growth run up to maxN: 10,000, 100,000
// and each further power of ten up to maxN, and maxN itself when it is
// not one of them.
func GrowSizes(maxN int) ([]int, error) {
	if maxN < MinGrowN || maxN > MaxN {
		return nil, fmt.Errorf("%w: the largest size of a growth run is %d, want %d..=%d", ErrOptions, maxN, MinGrowN, MaxN)
	}
	var sizes []int
	for n := MinGrowN; n <= maxN; n *= 10 {
		sizes = append(sizes, n)
	}
	if sizes[len(sizes)-1] != maxN {
		sizes = append(sizes, maxN)
	}
	return sizes, nil
}

// Growth is the same measurement at growing sizes: how each scheme's
// figures change as its table grows, and whether the verdict's ranking
// does. Each size is a run of its own, its tables loaded from empty to
// that size, so a figure per 1,000 inserts is the average over the whole
// load to that size.
type Growth struct {
	Sizes   []int     `json:"sizes"`
	Reports []*Report `json:"reports"`
	// RankingChanges says whether the verdict ranked the schemes in a
	// different order at some size.
	RankingChanges bool `json:"ranking_changes"`
}

// GrowContext runs opts at each of sizes (opts.N is not used), the
// smallest first, and returns the runs. Progress, if set, gets a line per
// size with the time the rest needs, estimated from the sizes so far as
// linear in the keys.
func GrowContext(ctx context.Context, opts Options, sizes []int) (*Growth, error) {
	if len(sizes) == 0 || !slices.IsSorted(sizes) {
		return nil, fmt.Errorf("%w: growth sizes %v, want one or more in increasing order", ErrOptions, sizes)
	}
	largest := opts
	largest.N = sizes[len(sizes)-1]
	if _, err := largest.withDefaults(); err != nil {
		return nil, err
	}
	if opts.Progress != nil {
		disk, err := EstimateDisk(largest)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(opts.Progress, "grow: %d sizes up to %s keys; the largest run takes %s\n", len(sizes), engine.Thousands(int64(largest.N)), disk)
	}
	g := &Growth{Sizes: sizes}
	total := 0
	for _, n := range sizes {
		total += n
	}
	done := 0
	start := time.Now()
	for i, n := range sizes {
		if opts.Progress != nil {
			line := fmt.Sprintf("grow: N = %s (%d of %d)", engine.Thousands(int64(n)), i+1, len(sizes))
			if done > 0 {
				left := time.Duration(float64(time.Since(start)) * float64(total-done) / float64(done))
				line += fmt.Sprintf("; the rest needs about %v at the pace so far", left.Round(time.Second))
			}
			fmt.Fprintln(opts.Progress, line)
		}
		o := opts
		o.N = n
		r, err := RunContext(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("compare: grow: N = %d: %w", n, err)
		}
		g.Reports = append(g.Reports, r)
		done += n
	}
	first := rankedNames(g.Reports[0].Verdict)
	for _, r := range g.Reports[1:] {
		g.RankingChanges = g.RankingChanges || !slices.Equal(first, rankedNames(r.Verdict))
	}
	return g, nil
}

func rankedNames(v *Verdict) []string {
	if v == nil {
		return nil
	}
	var out []string
	for _, p := range v.Ranked {
		out = append(out, p.Scheme)
	}
	return out
}

// growFigure is one figure a growth table follows.
type growFigure struct {
	key, name string
	format    func(float64) string
}

// growTitles name the growth tables' figures with their units.
var growTitles = map[string]string{
	"pages_written_per_1000": "pages written per 1,000 inserts",
	"wal_frames_per_1000":    "WAL frames per 1,000 inserts",
	"pages_dirtied_per_1000": "pages dirtied per 1,000 inserts",
	"wal_bytes_per_insert":   "WAL bytes per insert",
	"redo_bytes_per_insert":  "redo bytes per insert",
	"bytes_per_key":          "bytes per key",
	"index_bytes_per_key":    "index bytes per key",
	"inserts_per_second":     "inserts per second",
	"lifetime_write_amp":     "write amplification over a row's life (insert to expiry)",
	"write_amp":              "write amplification of the load (table bytes per byte logged)",
	"expiry_bytes_per_row":   "bytes written per expired row",
	"lookup_blocks":          "blocks per point lookup",
}

// growExtra are the figures an engine's growth tables follow beyond the
// verdict's and the insert rate.
var growExtra = map[string][]string{
	engine.Pebble:  {"write_amp", "expiry_bytes_per_row", "lookup_blocks"},
	engine.MyRocks: {"write_amp", "expiry_bytes_per_row", "lookup_blocks"},
}

// growFigures are, per engine, the figures of the growth tables: the
// verdict's figures and the insert rate.
func growFigures(eng string) []growFigure {
	var out []growFigure
	add := func(key, name string) {
		format := fmtInt
		switch {
		case strings.HasSuffix(key, "_amp") || strings.HasSuffix(key, "_blocks"):
			format = engine.FmtTwo
		case strings.HasSuffix(key, "_per_key") || strings.HasSuffix(key, "_per_insert") || strings.HasSuffix(key, "_per_row"):
			format = fmtOne
		}
		out = append(out, growFigure{key, cmp.Or(growTitles[key], name), format})
	}
	for _, f := range verdictFigures[eng] {
		add(f.key, f.name)
	}
	for _, key := range growExtra[eng] {
		add(key, key)
	}
	add("inserts_per_second", "")
	return out
}

// growValue returns scheme si's figure key on engine in report r's run
// with the most writers.
func growValue(r *Report, si int, eng, key string) (float64, bool) {
	if si >= len(r.Schemes) {
		return 0, false
	}
	s := &r.Schemes[si]
	ri := len(s.Runs) - 1
	if eng == engine.Bbolt && key == "inserts_per_second" && ri >= 0 && len(s.Runs[ri].Loads) > 0 {
		return s.Runs[ri].Loads[0].InsertsPerSecond, true
	}
	return figure(s, eng, ri, key)
}

// WriteTable writes g as text: for each engine and figure a table of the
// schemes against the sizes, then the verdict's ranking at each size.
func (g *Growth) WriteTable(w io.Writer) error {
	if len(g.Reports) == 0 {
		return fmt.Errorf("compare: write growth: %w", ErrEmptyReport)
	}
	ew := &errWriter{w: w}
	first, last := g.Reports[0], g.Reports[len(g.Reports)-1]
	m := first.Machine
	fmt.Fprintf(ew, "%s --grow — %s UTC\n", first.Tool, first.Started.Format("2006-01-02 15:04:05"))
	fmt.Fprintf(ew, "machine: %s/%s, %s, %d CPUs (GOMAXPROCS %d), %s\n", m.OS, m.Arch, cmp.Or(m.CPU, "unknown CPU"), m.CPUs, m.GOMAXPROCS, m.GoVersion)
	sizes := g.sizeLabels()
	writerText := "1 writer"
	if w := last.Config.Writers; w > 1 {
		writerText = fmt.Sprintf("1 and %d interleaved writers", w)
	}
	fmt.Fprintf(ew, "run: N = %s keys, a run of its own at each, %s, fill %s\n",
		strings.Join(sizes, ", "), writerText, joinFloats(last.Config.Fills))
	fmt.Fprintf(ew, "engines: %s\n", strings.Join(last.measured(), ", "))
	for _, eng := range last.measured() {
		for _, f := range growFigures(eng) {
			fmt.Fprintf(ew, "\nGROWTH IN %s — %s, %d writer(s), at each N (each N loaded from an empty table)\n", strings.ToUpper(eng), f.name, last.Config.Writers)
			tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "scheme\t"+strings.Join(sizes, "\t")+"\t")
			_, rows := g.figure(eng, f)
			for _, row := range rows {
				fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
			}
			tw.Flush()
		}
	}
	if v := last.Verdict; v != nil {
		fmt.Fprintf(ew, "\nVERDICT AT EACH N — need %s, engine %s, %d writer(s)\n", v.Need, v.Engine, v.Writers)
		for _, line := range g.verdictLines() {
			fmt.Fprintf(ew, "  %s\n", line)
		}
	}
	seconds := 0.0
	for _, r := range g.Reports {
		seconds += r.Seconds
	}
	fmt.Fprintf(ew, "\ncompleted in %.1fs\n", seconds)
	return ew.err
}

// sizeLabels returns g's sizes as the reports print them.
func (g *Growth) sizeLabels() []string {
	var out []string
	for _, n := range g.Sizes {
		out = append(out, engine.Thousands(int64(n)))
	}
	return out
}

// figure returns engine's figure f for each scheme at each size: as a
// line of values (NaN where a size has none) and as a table row of the
// scheme's name and the formatted values ("-" where none).
func (g *Growth) figure(eng string, f growFigure) (lines []lineSeries, rows [][]string) {
	for si, s := range g.Reports[len(g.Reports)-1].Schemes {
		line, row := lineSeries{name: s.Name}, []string{s.Name}
		for _, r := range g.Reports {
			v, ok := growValue(r, si, eng, f.key)
			if !ok {
				line.values, row = append(line.values, math.NaN()), append(row, "-")
				continue
			}
			line.values, row = append(line.values, v), append(row, f.format(v))
		}
		lines, rows = append(lines, line), append(rows, row)
	}
	return lines, rows
}

// verdictLines are the verdict's ranking at each size and whether it
// changes, then the other engine family's.
func (g *Growth) verdictLines() []string {
	var out []string
	for _, v := range g.Reports[len(g.Reports)-1].verdicts() {
		changes := false
		var first []string
		for i, r := range g.Reports {
			names := rankedNames(familyVerdict(r, v.Family))
			if i == 0 {
				first = names
			}
			changes = changes || !slices.Equal(first, names)
			if len(names) == 0 {
				names = []string{"no scheme meets the need"}
			}
			out = append(out, fmt.Sprintf("%s (%s), %s: %s", v.Family, v.Engine, engine.Thousands(int64(g.Sizes[i])), strings.Join(names, ", ")))
		}
		if changes {
			out = append(out, fmt.Sprintf("the ranking on the %s changes with N: decide at the size your table will have", v.Family))
		} else {
			out = append(out, fmt.Sprintf("the ranking on the %s is the same at every N", v.Family))
		}
	}
	return out
}

// familyVerdict returns r's verdict on family, or nil.
func familyVerdict(r *Report, family string) *Verdict {
	for _, v := range r.verdicts() {
		if v.Family == family {
			return v
		}
	}
	return nil
}

// WriteJSON writes g as indented JSON: the sizes and each size's report.
func (g *Growth) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		return fmt.Errorf("compare: write growth JSON: %w", err)
	}
	return nil
}
