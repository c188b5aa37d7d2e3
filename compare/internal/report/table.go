package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/idkit/idkit/compare/internal/engine"
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

// WriteTable writes r as plain-text tables, one per section of
// [Report.Columns]: the design claims (computed from the layouts), then
// generation, order and size, then insert locality in every engine that
// ran (all measured), and last the verdict.
func (r *Report) WriteTable(w io.Writer) error {
	ew := &ErrWriter{W: w}
	r.writeHeader(ew)
	for _, t := range r.Tables() {
		fmt.Fprintf(ew, "\n%s\n", t.Title)
		flags := tabwriter.AlignRight
		if t.ID == "design" {
			flags = 0
		}
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', flags)
		fmt.Fprintln(tw, strings.Join(t.Head, "\t")+"\t")
		for _, row := range t.Rows {
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		tw.Flush()
		for _, n := range t.Note {
			fmt.Fprintf(ew, "  %s\n", n)
		}
	}
	sep := "\n"
	for _, e := range r.Engines {
		if e.Skipped != "" {
			fmt.Fprintf(ew, "%s%s skipped: %s\n", sep, e.Name, e.Skipped)
			sep = ""
		}
	}
	for _, v := range r.verdicts() {
		fmt.Fprintf(ew, "\n%s\n", v.Title())
		if k := v.TableKey; k != nil {
			fmt.Fprintf(ew, "  %s\n", k.Line)
		}
		fmt.Fprintf(ew, "  basis: %s\n", v.Basis)
		for i, p := range v.Ranked {
			fmt.Fprintf(ew, "  %d. %s: %s\n", i+1, p.Scheme, p.Why)
		}
		if v.CannotJudge != "" {
			fmt.Fprintf(ew, "  %s\n", v.CannotJudge)
			for _, p := range v.Unjudged {
				fmt.Fprintf(ew, "  unranked %s: %s\n", p.Scheme, p.Why)
			}
		} else if len(v.Ranked) == 0 {
			fmt.Fprintf(ew, "  no scheme meets %s\n", v.Need)
		}
		for _, x := range v.Rejected {
			fmt.Fprintf(ew, "  rejected %s: %s\n", x.Scheme, x.Reason)
		}
		if c := v.KeyChange; c != nil {
			fmt.Fprintf(ew, "  %s\n", c.Line)
		}
	}
	if f := r.Families; f != nil && len(f.Changes) > 0 {
		fmt.Fprintf(ew, "\n%s\n", FamiliesTitle)
		for _, c := range f.Changes {
			fmt.Fprintf(ew, "  - %s\n", c)
		}
	}
	if t := r.Topologies; t != nil && len(t.Changes) > 0 {
		fmt.Fprintf(ew, "\n%s\n", TopologiesTitle)
		for _, c := range t.Changes {
			fmt.Fprintf(ew, "  - %s\n", c)
		}
	}
	fmt.Fprintf(ew, "\ncompleted in %.1fs\n", r.Seconds)
	return ew.Err
}

// Title heads the verdict in the reports.
func (v *Verdict) Title() string {
	return fmt.Sprintf("VERDICT — need %s, engine %s, %d writer(s), %s %s: ranked from the figures measured in this run", v.Need, v.Engine, v.Writers, article(v.Family), v.Family)
}

// article is the indefinite article of a family's name.
func article(family string) string {
	if family == FamilyLSM {
		return "an"
	}
	return "a"
}

// FamiliesTitle heads what changes between the engine families.
const FamiliesTitle = "B-TREE AGAINST LSM TREE — what changes between the engine families, from the figures of this run"

// verdicts returns the report's verdict and then the verdict on each
// other engine family.
func (r *Report) verdicts() []*Verdict {
	var out []*Verdict
	if r.Verdict != nil {
		out = append(out, r.Verdict)
	}
	if r.Families != nil {
		for _, v := range r.Families.Verdicts {
			if v != r.Verdict {
				out = append(out, v)
			}
		}
	}
	if r.Topologies != nil {
		for _, v := range r.Topologies.Verdicts {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
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
		engine.Thousands(int64(r.Config.N)), r.Config.Writers, JoinFloats(r.Config.Fills))
	var engines []string
	for _, e := range r.Engines {
		if e.Skipped == "" {
			engines = append(engines, e.Name)
		}
	}
	fmt.Fprintf(w, "engines: %s\n", strings.Join(engines, ", "))
	if r.Config.Like != "" {
		fmt.Fprintf(w, "like: the server loads went into copies of your table %s (its figures today and every index of every copy are at the end)\n", r.Config.Like)
	}
}

func (r *Report) WriterCounts() []int {
	counts := []int{1}
	if r.Config.Writers > 1 {
		counts = append(counts, r.Config.Writers)
	}
	return counts
}

func (r *Report) Goroutines() int {
	for _, s := range r.Schemes {
		return s.Speed.Goroutines
	}
	return 0
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// num formats a time in nanoseconds with sensible precision.
func num(f float64) string {
	switch {
	case f >= 1000:
		return engine.Thousands(int64(f + 0.5))
	case f >= 10:
		return fmt.Sprintf("%.0f", f)
	default:
		return fmt.Sprintf("%.1f", f)
	}
}

func JoinFloats(fs []float64) string {
	var s []string
	for _, f := range fs {
		s = append(s, fmt.Sprint(f))
	}
	return strings.Join(s, " and ")
}

// ErrWriter remembers the first write error so that the table code can
// write freely and check once.
type ErrWriter struct {
	W   io.Writer
	Err error
}

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	e.Err = err
	return n, err
}
