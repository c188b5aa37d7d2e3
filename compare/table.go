package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("compare: write JSON: %w", err)
	}
	return nil
}

// WriteTable writes r as plain-text tables: the design claims (computed
// from the layouts), then generation, order and size, then insert
// locality (both measured).
func (r *Report) WriteTable(w io.Writer) error {
	ew := &errWriter{w: w}
	r.writeHeader(ew)

	fmt.Fprintln(ew, "\nDESIGN — computed from each scheme's layout, not measured")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scheme\tkind\tbits\tint63\tJS-safe\ttime order\tlifetime\tIDs/s/node")
	for _, s := range r.Schemes {
		d := s.Design
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Kind, d.Bits, yesNo(d.Int63), yesNo(d.JSSafe),
			s.DesignText.TimeOrder, s.DesignText.Lifetime, s.DesignText.Rate)
	}
	tw.Flush()

	fmt.Fprintf(ew, "\nGENERATION, ORDER, SIZE — measured in this run (%s keys generated back to back)\n", thousands(int64(r.Config.N)))
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"scheme", "ns/ID", fmt.Sprintf("ns/ID x%d", r.goroutines()), "allocs/ID"}
	for _, wc := range r.writerCounts() {
		head = append(head, fmt.Sprintf("append %s", writersLabel(wc)), fmt.Sprintf("inversions %s", writersLabel(wc)))
	}
	head = append(head, "B/key", "B/ID packed", "max bits", "dups")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, s := range r.Schemes {
		mark := ""
		if s.Speed.AtCap {
			mark = "*"
		}
		row := []string{s.Name, num(s.Speed.NsPerID) + mark, num(s.Speed.ParallelNsPerID) + mark, fmt.Sprintf("%.2g", s.Speed.AllocsPerID)}
		dups, maxBits := 0, 0
		for _, run := range s.Runs {
			row = append(row, pct(run.Order.Appends), fmt.Sprintf("%.3f", run.Order.InversionFraction))
			dups += run.Order.Duplicates
			maxBits = max(maxBits, run.Size.MaxBits)
		}
		packed := "-"
		if len(s.Runs) > 0 {
			packed = fmt.Sprintf("%.2f", s.Runs[len(s.Runs)-1].Size.PackedBytesPerID)
		}
		row = append(row, fmt.Sprint(s.Runs[0].Size.KeyBytes), packed, fmt.Sprint(maxBits), fmt.Sprint(dups))
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintf(ew, "  *: at the layout's IDs/s/node limit: the figure is the limit, not the cost of an ID\n")
	fmt.Fprintf(ew, "  append: inserts greater than every earlier key; inversions: fraction of out-of-order pairs (0 sorted, 0.5 random);\n")
	fmt.Fprintf(ew, "  B/ID packed: sorted, delta, varint, over the %s key set; max bits: of the largest ID issued (<= 53 fits a JavaScript number)\n",
		writersLabel(r.writerCounts()[len(r.writerCounts())-1]))

	fmt.Fprintf(ew, "\nINSERT LOCALITY IN BBOLT — measured in this run (%s keys in generation order, %d-byte values, %s per tx, %d-byte pages, fsync %s)\n",
		thousands(int64(r.Config.N)), r.Config.ValueSize, thousands(int64(r.Config.BatchSize)), r.Config.PageSize, onOff(r.Config.Sync))
	fmt.Fprintln(ew, "  headline: pages written per 1,000 inserts (x: times the counter's)")
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	head = []string{"scheme", "writers"}
	for _, f := range r.Config.Fills {
		head = append(head, fmt.Sprintf("pages/1k @%g", f), "x")
	}
	for _, f := range r.Config.Fills {
		head = append(head, fmt.Sprintf("splits/1k @%g", f))
	}
	for _, f := range r.Config.Fills {
		head = append(head, fmt.Sprintf("leaf fill @%g", f))
	}
	for _, f := range r.Config.Fills {
		head = append(head, fmt.Sprintf("inserts/s @%g", f))
	}
	for _, f := range r.Config.Fills {
		head = append(head, fmt.Sprintf("B/key @%g", f))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	base := r.baseline()
	for _, s := range r.Schemes {
		for ri, run := range s.Runs {
			row := []string{s.Name, fmt.Sprint(run.Writers)}
			for li, l := range run.Loads {
				ratio := "-"
				if b, ok := base.load(ri, li); ok && b.PagesPer1000 > 0 {
					ratio = fmt.Sprintf("%.1f", l.PagesPer1000/b.PagesPer1000)
				}
				row = append(row, fmt.Sprintf("%.0f", l.PagesPer1000), ratio)
			}
			for _, l := range run.Loads {
				row = append(row, fmt.Sprintf("%.1f", l.SplitsPer1000))
			}
			for _, l := range run.Loads {
				row = append(row, pct(l.LeafFill))
			}
			for _, l := range run.Loads {
				row = append(row, thousands(int64(l.InsertsPerSecond)))
			}
			for _, l := range run.Loads {
				row = append(row, fmt.Sprintf("%.0f", l.BytesPerKey))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	tw.Flush()
	fmt.Fprintln(ew, "  pages written: pages the commits allocated and wrote (bbolt TxStats.PageCount) plus one meta page per commit;")
	fmt.Fprintln(ew, "  splits alone mislead: an append-only load splits its last page every time it fills, yet writes few pages;")
	fmt.Fprintln(ew, "  inserts/s is wall-clock time and the noisiest figure; pages, splits and fill do not depend on the machine")
	for _, s := range r.Schemes {
		if s.KeysNote != "" {
			fmt.Fprintf(ew, "  %s: %s\n", s.Name, s.KeysNote)
		}
	}
	fmt.Fprintf(ew, "\ncompleted in %.1fs\n", r.Seconds)
	return ew.err
}

func (r *Report) writeHeader(w io.Writer) {
	m := r.Machine
	cpu := m.CPU
	if cpu == "" {
		cpu = "unknown CPU"
	}
	fmt.Fprintf(w, "%s — %s UTC\n", r.Tool, r.Started.Format("2006-01-02 15:04:05"))
	fmt.Fprintf(w, "machine: %s/%s, %s, %d CPUs (GOMAXPROCS %d), %s\n", m.OS, m.Arch, cpu, m.CPUs, m.GOMAXPROCS, m.GoVersion)
	fmt.Fprintf(w, "run: N = %s keys per load, 1 and %d interleaved writers, fill %s\n",
		thousands(int64(r.Config.N)), r.Config.Writers, joinFloats(r.Config.Fills))
}

// baselineResult finds the load a scheme's load is compared with.
type baselineResult struct{ res *Result }

func (b baselineResult) load(run, fill int) (Load, bool) {
	if b.res == nil || run >= len(b.res.Runs) || fill >= len(b.res.Runs[run].Loads) {
		return Load{}, false
	}
	return b.res.Runs[run].Loads[fill], true
}

func (r *Report) baseline() baselineResult {
	for i := range r.Schemes {
		if r.Schemes[i].Kind == Baseline {
			return baselineResult{&r.Schemes[i]}
		}
	}
	return baselineResult{}
}

func (r *Report) writerCounts() []int {
	counts := []int{1}
	if r.Config.Writers > 1 {
		counts = append(counts, r.Config.Writers)
	}
	return counts
}

func (r *Report) goroutines() int {
	for _, s := range r.Schemes {
		return s.Speed.Goroutines
	}
	return 0
}

func writersLabel(n int) string {
	if n == 1 {
		return "1w"
	}
	return fmt.Sprintf("%dw", n)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

// num formats a time in nanoseconds with sensible precision.
func num(f float64) string {
	switch {
	case f >= 1000:
		return thousands(int64(f + 0.5))
	case f >= 10:
		return fmt.Sprintf("%.0f", f)
	default:
		return fmt.Sprintf("%.1f", f)
	}
}

func joinFloats(fs []float64) string {
	var s []string
	for _, f := range fs {
		s = append(s, fmt.Sprint(f))
	}
	return strings.Join(s, " and ")
}

// errWriter remembers the first write error so that the table code can
// write freely and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
