package engine

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// A --like run fills its copies as the application fills the table: each
// copy's rows take the scheme's keys in the order the scheme makes them,
// and the sampled rows' other columns in the order the application
// inserted them, so that every secondary index grows as the table's own
// did. The insert order is read from the table: the key's, when the key
// is a local sequence; else a time column's (created_at); else the
// rows' physical order. A load of N rows from a sample of S rows gives
// sampled row floor(i*S/N) to row i, so that it passes through the sample
// once, in that order; and where a row fills more than one row of a copy,
// the time column takes values between the row's own and the next sampled
// row's, so that it stays ascending and distinct.

// SampledRow is one row of a --like sample with the values that order it:
// its key (an integer key only), its time column's value in seconds, and
// its place in the table's physical order. A value the row does not have
// is NaN.
type SampledRow[R any] struct {
	Row               R
	Key, At, Physical float64
}

// LikeOrder is how a --like run orders the sample as the application
// inserted its rows.
type LikeOrder struct {
	// By is "key", "time" or "physical".
	By string
	// Time is the time column the rows are ordered by, or whose values a
	// reused row interpolates; "" when the table has none.
	Time string
	// Note says how the order was chosen, for the report.
	Note string
}

// timeColumnNames rank time columns by name: a column whose name says
// the row was made then comes first; one that says it changes later
// (updated_at) or is a date of something else is never the insert order.
var (
	madeAtName  = regexp.MustCompile(`(?i)creat|insert|(^|_)(added|made|logged|recorded|received|placed|issued)`)
	laterAtName = regexp.MustCompile(`(?i)updat|modif|(^|_)(chang|delet|expir|birth|due|until|deadline|valid|end|start|sched|sent|paid|ship|deliver|cancel|seen|login|visit)`)
)

// TimeCandidate is a column of a time type (a date or a timestamp, not
// a time of day) and whether a secondary index leads with it.
type TimeCandidate struct {
	Name    string
	Indexed bool
}

// ChooseTimeColumn returns the time column whose order is most likely the
// order of inserts, and why, or "" when no column is one: a name that
// says the row was made then (created_at), else a column an index leads
// with, else the first; never one whose name says it is set later.
func ChooseTimeColumn(cands []TimeCandidate) (string, string) {
	best, score := -1, 0
	for i, c := range cands {
		s := 1
		switch {
		case madeAtName.MatchString(c.Name):
			s = 4
		case laterAtName.MatchString(c.Name):
			continue
		}
		if c.Indexed {
			s++
		}
		if s > score {
			best, score = i, s
		}
	}
	if best < 0 {
		return "", ""
	}
	c := cands[best]
	var why []string
	if madeAtName.MatchString(c.Name) {
		why = append(why, "its name says when the row was made")
	}
	if c.Indexed {
		why = append(why, "an index leads with it")
	}
	if len(why) == 0 {
		why = append(why, "the table's first date or timestamp column")
	}
	return c.Name, JoinAnd(why)
}

func JoinAnd(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, x := range s[1 : len(s)-1] {
		out += ", " + x
	}
	return out + " and " + s[len(s)-1]
}

// InOrder is the correlation of an integer key with the order of inserts
// (PostgreSQL's pg_stats correlation with the rows' physical order, or
// the rank correlation with the time column over the sample) from which
// the verdict takes the key for a local sequence.
const InOrder = 0.99

// DenseSpan is how many key values per row a dense integer key spans at
// most: its greatest value less its least, plus one, over the rows.
const DenseSpan = 2.0

// Dense says whether an integer key from min to max is dense over about
// rows rows: an application's numbering, with gaps where rows went.
func Dense(min, max int64, rows int64) bool {
	if rows <= 0 || max < min {
		return false
	}
	return float64(max)-float64(min)+1 <= DenseSpan*float64(rows)
}

// OrderSample sorts rows in the order the application inserted them and
// returns how it chose it: by the key where sequence says the key is a
// local sequence, else by the time column, else physically. physicalIsKey
// says the engine keeps rows in key order (InnoDB), so that the physical
// order says nothing of the order of inserts.
func OrderSample[R any](rows []SampledRow[R], key string, sequence bool, time, timeWhy string, physicalIsKey bool) LikeOrder {
	byPhysical := func(a, b SampledRow[R]) int { return cmp.Compare(a.Physical, b.Physical) }
	by := func(f func(SampledRow[R]) float64) func(a, b SampledRow[R]) int {
		return func(a, b SampledRow[R]) int {
			// NaN (a NULL) first, as both engines sort NULLs with ORDER BY
			// ... NULLS FIRST; ties in physical order.
			if c := cmp.Compare(f(a), f(b)); c != 0 {
				return c
			}
			return byPhysical(a, b)
		}
	}
	switch {
	case sequence:
		slices.SortStableFunc(rows, by(func(r SampledRow[R]) float64 { return r.Key }))
		return LikeOrder{By: "key", Time: time, Note: fmt.Sprintf("insert order: the sampled rows go in the order of the key %s, a local sequence", key)}
	case time != "":
		slices.SortStableFunc(rows, by(func(r SampledRow[R]) float64 { return r.At }))
		return LikeOrder{By: "time", Time: time, Note: fmt.Sprintf("insert order: the sampled rows go in the order of %s (%s), as the application inserted them", time, timeWhy)}
	case physicalIsKey:
		slices.SortStableFunc(rows, byPhysical)
		return LikeOrder{By: "physical", Note: fmt.Sprintf("insert order: not known (the key %s is no local sequence and the table has no created-at time column); the sampled rows go in the table's physical order, which on InnoDB is the key's", key)}
	}
	slices.SortStableFunc(rows, byPhysical)
	return LikeOrder{By: "physical", Note: fmt.Sprintf("insert order: the sampled rows go in the table's physical order (the key %s is no local sequence and the table has no created-at time column), which inserts alone leave in insert order", key)}
}

// RankCorrelation returns Spearman's rank correlation of the pairs (x[i],
// y[i]) that have both values, and false when fewer than three do.
func RankCorrelation(x, y []float64) (float64, bool) {
	var xs, ys []float64
	for i := range x {
		if !math.IsNaN(x[i]) && !math.IsNaN(y[i]) {
			xs, ys = append(xs, x[i]), append(ys, y[i])
		}
	}
	if len(xs) < 3 {
		return 0, false
	}
	rx, ry := ranks(xs), ranks(ys)
	var mx, my float64
	for i := range rx {
		mx, my = mx+rx[i], my+ry[i]
	}
	mx, my = mx/float64(len(rx)), my/float64(len(ry))
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy, sxx, syy = sxy+dx*dy, sxx+dx*dx, syy+dy*dy
	}
	if sxx == 0 || syy == 0 {
		return 0, false
	}
	return sxy / math.Sqrt(sxx*syy), true
}

// ranks returns the rank of each value, ties given their mean rank.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	out := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			out[idx[k]] = float64(i+j) / 2
		}
		i = j + 1
	}
	return out
}

// ReuseNote says how the loads use the sample in order, for the report.
func ReuseNote(sample, n int, time string) string {
	reuse := (n + sample - 1) / sample
	if reuse <= 1 {
		return fmt.Sprintf("each of the loads' %s rows takes a sampled row of its own, in that order", Thousands(int64(n)))
	}
	s := fmt.Sprintf("the loads' %s rows pass through the sample once, in that order, each sampled row filling up to %d rows in a row", Thousands(int64(n)), reuse)
	if time != "" {
		s += fmt.Sprintf("; %s takes values between the row's own and the next sampled row's, so that it stays ascending and distinct as the application's does", time)
	}
	return s
}

// KeyTimeCorrelation returns the rank correlation of the sampled rows'
// keys with their time column, or nil when the rows have not both.
func KeyTimeCorrelation[R any](rows []SampledRow[R]) *float64 {
	keys, times := make([]float64, len(rows)), make([]float64, len(rows))
	for i, r := range rows {
		keys[i], times[i] = r.Key, r.At
	}
	c, ok := RankCorrelation(keys, times)
	if !ok {
		return nil
	}
	return &c
}

// LocalSequence says whether the table's key is a local sequence, and
// from what evidence, by one rule on every engine: an integer key that
// the server numbers itself (an identity or serial column,
// AUTO_INCREMENT), or whose values are dense (DenseSpan) and, where the
// table tells it, in insert order: a rank correlation of at least
// InOrder with the created-at time column over the sample, or else with
// the rows' physical order (PostgreSQL's pg_stats). InnoDB keeps rows in
// key order, so there a dense key without a time column is taken as the
// application's numbering.
func (t *LikeTable) LocalSequence() (how string, ok bool) {
	if bits, _ := IntBits(t.KeyType); bits == 0 {
		return "", false
	}
	if t.KeySequence != "" {
		return t.KeySequence, true
	}
	if t.KeyMin == nil || t.KeyMax == nil || !Dense(*t.KeyMin, *t.KeyMax, t.Rows) {
		return "", false
	}
	how = fmt.Sprintf("dense: %s..%s for about %s rows", Thousands(*t.KeyMin), Thousands(*t.KeyMax), Thousands(t.Rows))
	switch {
	case t.KeyTimeCorrelation != nil:
		if *t.KeyTimeCorrelation < InOrder {
			return "", false
		}
		return how + fmt.Sprintf(", in insert order: rank correlation %.2f with the created-at column", *t.KeyTimeCorrelation), true
	case t.KeyCorrelation != nil && t.Engine == Postgres:
		if *t.KeyCorrelation < InOrder {
			return "", false
		}
		return how + fmt.Sprintf(", in insert order: correlation %.2f with the rows' physical order", *t.KeyCorrelation), true
	}
	return how, true
}

// IntBits returns the width of an integer column type, as PostgreSQL or
// MariaDB/MySQL write it ("bigint", "int8", "bigint(20) unsigned"), and
// whether it is unsigned; 0 for any other type.
func IntBits(typ string) (bits int, unsigned bool) {
	f := strings.Fields(strings.ToLower(typ))
	if len(f) == 0 {
		return 0, false
	}
	base, _, _ := strings.Cut(f[0], "(")
	switch base {
	case "bigint", "int8", "bigserial", "serial8":
		bits = 64
	case "integer", "int", "int4", "serial", "serial4":
		bits = 32
	case "mediumint":
		bits = 24
	case "smallint", "int2", "smallserial", "serial2":
		bits = 16
	case "tinyint":
		bits = 8
	default:
		return 0, false
	}
	for _, w := range f[1:] {
		unsigned = unsigned || w == "unsigned"
	}
	return bits, unsigned
}

// Candidate is the column name, of a time type, as a candidate for the
// time the rows were inserted at; indexed says an index leads with it.
func Candidate(name string, indexed bool) TimeCandidate {
	return TimeCandidate{Name: name, Indexed: indexed}
}
