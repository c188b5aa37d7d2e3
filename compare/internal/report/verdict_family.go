package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"
)

// The engine families. A B-tree keeps its rows in pages it updates in
// place, so a key's order decides how many pages each insert dirties; an
// LSM tree appends sorted tables and merges them down its levels, so a
// key's order decides how often a row is rewritten, and whether old rows
// go by a range deletion or row by row.
const (
	FamilyBTree = "B-tree"
	FamilyLSM   = "LSM tree"
)

// FamilyNames lists the families in report order.
var FamilyNames = []string{FamilyBTree, FamilyLSM}

// engineFamily is the family of each engine.
var engineFamily = map[string]string{
	engine.Bbolt: FamilyBTree, engine.SQLite: FamilyBTree, engine.Postgres: FamilyBTree, engine.MySQL: FamilyBTree,
	engine.Pebble: FamilyLSM, engine.MyRocks: FamilyLSM,
	engine.SpiderRange: FamilyBTree, engine.SpiderHash: FamilyBTree,
}

// FamilyEngines are each family's engines, the most server-like first:
// a family's verdict reads the first one the run measured.
var FamilyEngines = map[string][]string{
	FamilyBTree: {engine.Postgres, engine.MySQL, engine.SQLite, engine.Bbolt},
	FamilyLSM:   {engine.MyRocks, engine.Pebble},
}

// Families is a verdict on each engine family the run measured, under
// the same constraints, and what changes from one family to the other,
// said from the run's figures.
type Families struct {
	// Verdicts has one verdict per family, in FamilyNames' order.
	Verdicts []*Verdict `json:"verdicts"`
	// Changes are sentences on what differs between the families'
	// rankings and figures.
	Changes []string `json:"changes"`
}

// DecideFamilies returns the verdict on each family measured under need
// (primary, when it is on an engine of a family, stands for that family),
// or nil when the run measured one family only.
func (r *Report) DecideFamilies(need Need, primary *Verdict) (*Families, error) {
	measured := r.Measured()
	f := &Families{}
	for _, family := range FamilyNames {
		eng := ""
		if primary != nil && engineFamily[primary.Engine] == family {
			f.Verdicts = append(f.Verdicts, primary)
			continue
		}
		for _, e := range FamilyEngines[family] {
			if slices.Contains(measured, e) {
				eng = e
				break
			}
		}
		if eng == "" {
			continue
		}
		v, err := r.Decide(need, eng)
		if err != nil {
			return nil, err
		}
		f.Verdicts = append(f.Verdicts, v)
	}
	if len(f.Verdicts) < 2 {
		return nil, nil
	}
	f.Changes = r.familyChanges(f.Verdicts[0], f.Verdicts[1])
	return f, nil
}

// familyChanges says, from the figures of the run, what changes between
// the B-tree verdict bt and the LSM verdict lsm: the first choice of each,
// the schemes one ranks and the other rejects, what the keys the B-tree
// likes least cost the LSM tree, and what expiring the oldest rows costs
// by a range deletion and row by row.
func (r *Report) familyChanges(bt, lsm *Verdict) []string {
	var out []string
	name := func(v *Verdict) string { return fmt.Sprintf("the %s (%s)", v.Family, v.Engine) }
	switch {
	case len(bt.Ranked) == 0 || len(lsm.Ranked) == 0:
	case bt.Ranked[0].Scheme == lsm.Ranked[0].Scheme:
		out = append(out, fmt.Sprintf("%s ranks first on both families", bt.Ranked[0].Scheme))
	default:
		out = append(out, fmt.Sprintf("%s ranks first on %s, %s on %s", bt.Ranked[0].Scheme, name(bt), lsm.Ranked[0].Scheme, name(lsm)))
	}
	standing := func(v *Verdict, scheme string) (rank int, reason string) {
		if i := slices.IndexFunc(v.Ranked, func(p Pick) bool { return p.Scheme == scheme }); i >= 0 {
			return i + 1, ""
		}
		if i := slices.IndexFunc(v.Rejected, func(x Rejection) bool { return x.Scheme == scheme }); i >= 0 {
			return 0, v.Rejected[i].Reason
		}
		return 0, ""
	}
	for _, s := range r.Schemes {
		b, bWhy := standing(bt, s.Name)
		l, lWhy := standing(lsm, s.Name)
		switch {
		case b > 0 && l == 0 && lWhy != "":
			out = append(out, fmt.Sprintf("%s: ranked %s on %s, rejected on %s: %s", s.Name, ordinal(b), name(bt), name(lsm), lWhy))
		case l > 0 && b == 0 && bWhy != "":
			out = append(out, fmt.Sprintf("%s: rejected on %s (%s), ranked %s on %s", s.Name, name(bt), bWhy, ordinal(l), name(lsm)))
		}
	}
	if line := r.randomKeysLine(bt, lsm); line != "" {
		out = append(out, line)
	}
	if line := r.expiryLine(lsm); line != "" {
		out = append(out, line)
	}
	return out
}

// randomKeysLine compares, for the scheme whose first verdict figure on
// the B-tree is the highest over the baseline's (the keys a B-tree likes
// least), that ratio with its write amplification over the baseline's on
// the LSM tree.
func (r *Report) randomKeysLine(bt, lsm *Verdict) string {
	base := r.baselineResult()
	if base == nil || len(bt.Figures) == 0 {
		return ""
	}
	ri := slices.Index(r.WriterCounts(), bt.Writers)
	bKey := bt.Figures[0]
	lKey := "write_amp"
	worst, worstRatio := "", 0.0
	var lsmRatio float64
	for si := range r.Schemes {
		s := &r.Schemes[si]
		if s.Kind == scheme.Baseline {
			continue
		}
		b, ok1 := ratioOver(s, base, bt.Engine, ri, bKey.Key)
		l, ok2 := ratioOver(s, base, lsm.Engine, ri, lKey)
		if ok1 && ok2 && b > worstRatio {
			worst, worstRatio, lsmRatio = s.Name, b, l
		}
	}
	if worst == "" || worstRatio <= MaxRatio {
		return ""
	}
	verdict := "random keys cost an LSM tree less than a B-tree: it sorts them in memory and rewrites them in merges instead of writing a page per insert"
	if lsmRatio >= worstRatio {
		verdict = "random keys cost an LSM tree as much as a B-tree, or more"
	}
	return fmt.Sprintf("%s, the costliest on %s (%s %.1fx the %s's), writes %.1fx the %s's bytes to tables on %s: %s",
		worst, bt.Engine, bKey.Name, worstRatio, base.Name, lsmRatio, base.Name, lsm.Engine, verdict)
}

// ratioOver returns s's figure key on engine in run ri over base's.
func ratioOver(s, base *Result, eng string, ri int, key string) (float64, bool) {
	x, ok1 := Figure(s, eng, ri, key)
	b, ok2 := Figure(base, eng, ri, key)
	if !ok1 || !ok2 || b <= 0 {
		return 0, false
	}
	return x / b, true
}

// expiryLine says what expiring the oldest tenth of the rows wrote per
// row on the LSM tree by a range deletion and row by row, and whether
// only the keys that sort rows by age expire cheaply.
func (r *Report) expiryLine(lsm *Verdict) string {
	ri := slices.Index(r.WriterCounts(), lsm.Writers)
	type cost struct {
		scheme string
		bytes  float64
	}
	var ranged, rows []cost
	for si := range r.Schemes {
		s := &r.Schemes[si]
		how, ok1 := Figure(s, lsm.Engine, ri, "expiry_range")
		b, ok2 := Figure(s, lsm.Engine, ri, "expiry_bytes_per_row")
		if !ok1 || !ok2 {
			continue
		}
		if how == 1 {
			ranged = append(ranged, cost{s.Name, b})
		} else {
			rows = append(rows, cost{s.Name, b})
		}
	}
	if len(ranged) == 0 || len(rows) == 0 {
		return ""
	}
	byBytes := func(a, b cost) int { return cmpFloat(a.bytes, b.bytes) }
	slices.SortFunc(ranged, byBytes)
	slices.SortFunc(rows, byBytes)
	hiRange, loRows, hiRows := ranged[len(ranged)-1], rows[0], rows[len(rows)-1]
	line := fmt.Sprintf("expiring the oldest tenth on %s: by a range deletion (%d schemes whose keys sort rows by age) %s to %s bytes written per row (%s to %s), row by row (%d schemes) %s to %s (%s to %s)",
		lsm.Engine, len(ranged), FmtOne(ranged[0].bytes), FmtOne(hiRange.bytes), ranged[0].scheme, hiRange.scheme,
		len(rows), FmtOne(loRows.bytes), FmtOne(hiRows.bytes), loRows.scheme, hiRows.scheme)
	if hiRange.bytes < loRows.bytes {
		return line + ": only keys that sort rows by age expire cheaply"
	}
	var cheap []string
	for _, c := range rows {
		if c.bytes <= hiRange.bytes {
			cheap = append(cheap, c.scheme)
		}
	}
	return line + fmt.Sprintf(": %s expired row by row for no more than a range deletion cost %s, as Pebble compacts a key range dense with tombstones by itself", strings.Join(cheap, ", "), hiRange.scheme)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b || (math.IsNaN(a) && !math.IsNaN(b)):
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ordinal writes n as 1st, 2nd, 3rd, 4th...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprint(n) + suffix
}
