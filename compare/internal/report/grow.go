package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/idkit/idkit/compare/internal/engine"
)

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

func RankedNames(v *Verdict) []string {
	if v == nil {
		return nil
	}
	var out []string
	for _, p := range v.Ranked {
		out = append(out, p.Scheme)
	}
	return out
}

// GrowFigure is one figure a growth table follows.
type GrowFigure struct {
	key, name string
	format    func(float64) string
}

// GrowFigures are, per engine, the figures of the growth tables: the
// verdict's figures and the insert rate.
func GrowFigures(eng string) []GrowFigure {
	var out []GrowFigure
	add := func(key, name string) {
		format := FmtInt
		switch {
		case strings.HasSuffix(key, "_amp") || strings.HasSuffix(key, "_blocks"):
			format = engine.FmtTwo
		case strings.HasSuffix(key, "_per_key") || strings.HasSuffix(key, "_per_insert") || strings.HasSuffix(key, "_per_row"):
			format = FmtOne
		}
		out = append(out, GrowFigure{key, cmp.Or(growTitles[key], name), format})
	}
	for _, f := range VerdictFigures[eng] {
		add(f.key, f.name)
	}
	for _, key := range growExtra[eng] {
		add(key, key)
	}
	add("inserts_per_second", "")
	return out
}

// GrowValue returns scheme si's figure key on engine in report r's run
// with the most writers.
func GrowValue(r *Report, si int, eng, key string) (float64, bool) {
	if si >= len(r.Schemes) {
		return 0, false
	}
	s := &r.Schemes[si]
	ri := len(s.Runs) - 1
	if eng == engine.Bbolt && key == "inserts_per_second" && ri >= 0 && len(s.Runs[ri].Loads) > 0 {
		return s.Runs[ri].Loads[0].InsertsPerSecond, true
	}
	return Figure(s, eng, ri, key)
}

// WriteTable writes g as text: for each engine and figure a table of the
// schemes against the sizes, then the verdict's ranking at each size.
func (g *Growth) WriteTable(w io.Writer) error {
	if len(g.Reports) == 0 {
		return fmt.Errorf("compare: write growth: %w", ErrEmptyReport)
	}
	ew := &ErrWriter{W: w}
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
		strings.Join(sizes, ", "), writerText, JoinFloats(last.Config.Fills))
	fmt.Fprintf(ew, "engines: %s\n", strings.Join(last.Measured(), ", "))
	for _, eng := range last.Measured() {
		for _, f := range GrowFigures(eng) {
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
	return ew.Err
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
func (g *Growth) figure(eng string, f GrowFigure) (lines []LineSeries, rows [][]string) {
	for si, s := range g.Reports[len(g.Reports)-1].Schemes {
		line, row := LineSeries{name: s.Name}, []string{s.Name}
		for _, r := range g.Reports {
			v, ok := GrowValue(r, si, eng, f.key)
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
			names := RankedNames(FamilyVerdict(r, v.Family))
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

// FamilyVerdict returns r's verdict on family, or nil.
func FamilyVerdict(r *Report, family string) *Verdict {
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
