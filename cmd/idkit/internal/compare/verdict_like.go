package compare

import (
	"fmt"
	"strings"
)

// TableKey is the key of the user's table today, as a --like run's
// verdict weighs it: a local sequence is kept unless a need rules it out.
type TableKey struct {
	Column string `json:"column"`
	Type   string `json:"type"`
	// Sequence is how the server makes the key's values when they come
	// from a local integer sequence ("identity", "serial",
	// "AUTO_INCREMENT"); empty otherwise.
	Sequence string `json:"sequence,omitempty"`
	// Keep says the verdict keeps the key rather than any scheme.
	Keep bool `json:"keep"`
	// RuledOut says, for each need the sequence fails, why.
	RuledOut []string `json:"ruled_out,omitempty"`
	// Line is what the reports print first in the verdict.
	Line string `json:"line"`
}

// KeyChange is what replacing the user's key with a scheme's costs the
// schema: the column's type and the foreign keys that point at it.
type KeyChange struct {
	Scheme   string `json:"scheme"`
	Column   string `json:"column"`
	FromType string `json:"from_type"`
	// ToType is the column type of the scheme's copy; empty when the run
	// has no load of the scheme on the engine.
	ToType string `json:"to_type,omitempty"`
	// ReferencedBy are the foreign keys that point at the key, as
	// "schema.table(column)".
	ReferencedBy []string `json:"referenced_by,omitempty"`
	// Line says the change in words, as the reports print it.
	Line string `json:"line"`
}

// likeFigures returns the figures a --like run's verdict compares on
// engine, and a note for each figure it leaves out. They are figures of
// the copies of the user's table, so that another session's writes on the
// server cannot change the ranking: on InnoDB the size of every index and
// the primary key's leaf pages, never the server-wide counters; on
// PostgreSQL the size of every index, and the pages dirtied and WAL when
// every candidate's load has them (they are kept only when measured
// undisturbed).
func likeFigures(engine string, candidates []*Result, ri int) ([]verdictFigure, []string) {
	size := verdictFigure{"all_index_bytes_per_key", "every index's size"}
	switch engine {
	case EngineMySQL:
		return []verdictFigure{size, {"leaf_pages_per_1000", "primary-key leaf pages"}},
			[]string{"pages written and redo left out: server-wide counters, which other sessions' writes move"}
	case EnginePostgres:
		figs := []verdictFigure{size}
		var missing []string
		for _, f := range []verdictFigure{{"pages_dirtied_per_1000", "pages dirtied"}, {"wal_bytes_per_insert", "WAL"}} {
			all := true
			for _, s := range candidates {
				if _, ok := figure(s, engine, ri, f.key); !ok {
					all = false
					break
				}
			}
			if all {
				figs = append(figs, f)
			} else {
				missing = append(missing, f.name)
			}
		}
		if len(missing) == 0 {
			return figs, nil
		}
		return figs, []string{strings.Join(missing, " and ") + " left out: not measured undisturbed in every scheme's load"}
	}
	return verdictFigures[engine], nil
}

// perIDSequence returns what s calls for each ID when every ID is the
// next value of one sequence shared by all its writers, or "" when each
// machine makes its IDs itself. Design.Dense marks the schemes whose IDs
// come from one sequence, but the segment allocators among them reserve
// a block of IDs per call and hand them out locally; the schemes that
// call per ID are the baseline, Redis INCR, the "-fetch" rows (one block
// reservation per ID) and the public numbers of a shared counter.
func perIDSequence(s *Result) string {
	switch {
	case s.Kind == Baseline && s.Design.Dense:
		return "one central sequence, a round trip per ID"
	case s.Name == "redis-incr":
		return "one Redis counter, a round trip per ID"
	case s.Design.Dense && strings.HasSuffix(s.Name, "-fetch"):
		return "one block reservation in a shared store per ID"
	case s.Name == "publicid-53":
		return "one shared counter per ID"
	}
	return ""
}

// fleetMiss returns why s fails need.Fleet, or "".
func fleetMiss(s *Result, need Need) string {
	if !need.Fleet {
		return ""
	}
	if what := perIDSequence(s); what != "" {
		return "needs " + what + ", need fleet (IDs made on many machines with no central sequence)"
	}
	return ""
}

// fleetCaveat is the ranking line's note on a dense scheme under
// need.Fleet: its machines share a block store.
func fleetCaveat(s *Result, need Need) string {
	if !need.Fleet || !s.Design.Dense {
		return ""
	}
	return "; fleet: blocks from one store every machine reaches, a round trip per block"
}

// localSequenceWords say what a local sequence is, in the verdict's line
// on a kept key and on the counter baseline alike.
const localSequenceWords = "a local sequence, integers the server numbers in insert order, as the counter the figures are measured against"

// tableKey judges the table's key under need: a local sequence (by the
// one rule of localSequence) is kept unless a need rules it out; any
// other key is described, and the schemes rank to replace it.
func (t *LikeTable) tableKey(need Need) *TableKey {
	k := &TableKey{Column: t.Key, Type: t.KeyType}
	how, ok := t.localSequence()
	if !ok {
		k.Line = fmt.Sprintf("your key %s (%s) is not a local sequence", t.Key, t.KeyType)
		var why []string
		if bits, _ := intBits(t.KeyType); bits > 0 && t.KeyMin != nil && t.KeyMax != nil && !dense(*t.KeyMin, *t.KeyMax, t.Rows) {
			why = append(why, fmt.Sprintf("its values span %s..%s for about %s rows", thousands(*t.KeyMin), thousands(*t.KeyMax), thousands(t.Rows)))
		}
		if c := t.KeyTimeCorrelation; c != nil {
			why = append(why, fmt.Sprintf("its order against the created-at column's: rank correlation %.2f (1 in order, 0 unrelated)", *c))
		} else if c := t.KeyCorrelation; c != nil {
			why = append(why, fmt.Sprintf("its order against the rows' physical order: correlation %.2f (1 in order, 0 unrelated)", *c))
		}
		if len(why) > 0 {
			k.Line += "; " + strings.Join(why, "; ")
		}
		k.Line += "; the schemes below rank to replace it"
		return k
	}
	k.Sequence = how
	what := fmt.Sprintf("%s (%s, %s)", t.Key, t.KeyType, how)
	bits, unsigned := intBits(t.KeyType)
	d := Design{Bits: bits, Ordered: true, Dense: true, MaxBits: bits - 1}
	if unsigned {
		d.MaxBits = bits
	}
	d = fromMaxBits(d)
	if need.Bits64 && !d.Int63 {
		k.RuledOut = append(k.RuledOut, fmt.Sprintf("values up to %d bits, need 64bit (a BIGINT column)", d.MaxBits))
	}
	caveat, why := denseJSSafe(&Result{Design: d}, need)
	if why != "" {
		k.RuledOut = append(k.RuledOut, why)
	}
	if need.Sortable {
		k.RuledOut = append(k.RuledOut, "a sequence does not lead with time, need sortable")
	}
	if need.Fleet {
		k.RuledOut = append(k.RuledOut, "every value comes from one sequence on the server, need fleet")
	}
	if need.Unguessable {
		k.RuledOut = append(k.RuledOut, "each value is the last plus one, need unguessable (or keep it as the key and show public IDs: package publicid)")
	}
	if len(k.RuledOut) > 0 {
		k.Line = fmt.Sprintf("your key %s is ruled out: %s; the schemes below rank to replace it", what, strings.Join(k.RuledOut, "; "))
		return k
	}
	k.Keep = true
	k.Line = fmt.Sprintf("keep your key %s: %s, %d bytes; change it only for a need it fails (fleet, unguessable, sortable), for which the schemes below rank%s",
		what, localSequenceWords, bits/8, caveat)
	return k
}

// keyChange says what replacing the table's key with scheme's, as loaded
// in run ri, costs the schema.
func (r *Report) keyChange(t *LikeTable, scheme string, ri int) *KeyChange {
	c := &KeyChange{Scheme: scheme, Column: t.Key, FromType: t.KeyType, ReferencedBy: t.ReferencedBy}
	for _, s := range r.Schemes {
		if s.Name == scheme && ri < len(s.Runs) {
			if l, ok := s.Runs[ri].engineLoad(t.Engine); ok {
				c.ToType = l.ColumnType
			}
		}
	}
	same := c.ToType == "" || sameColumnType(c.FromType, c.ToType)
	var parts []string
	switch {
	case c.ToType == "":
		parts = append(parts, fmt.Sprintf("%s from %s to the type %s needs", t.Key, t.KeyType, scheme))
	case same:
		parts = append(parts, fmt.Sprintf("%s stays %s", t.Key, t.KeyType))
	default:
		parts = append(parts, fmt.Sprintf("%s from %s to %s", t.Key, t.KeyType, c.ToType))
	}
	if t.KeySequence != "" {
		parts = append(parts, fmt.Sprintf("without its %s: the application sets the values", t.KeySequence))
	}
	fks := strings.Join(t.ReferencedBy, ", ")
	switch n := len(t.ReferencedBy); {
	case n == 0:
		parts = append(parts, "no foreign key points at it")
	case n == 1 && same:
		parts = append(parts, "the foreign key that points at it keeps its type: "+fks)
	case n == 1:
		parts = append(parts, "the foreign key that points at it changes type with it: "+fks)
	case same:
		parts = append(parts, fmt.Sprintf("the %d foreign keys that point at it keep their type: %s", n, fks))
	default:
		parts = append(parts, fmt.Sprintf("the %d foreign keys that point at it change type with it: %s", n, fks))
	}
	c.Line = fmt.Sprintf("key change to %s: %s", scheme, strings.Join(parts, "; "))
	return c
}

// intBits returns the width of an integer column type, as PostgreSQL or
// MariaDB/MySQL write it ("bigint", "int8", "bigint(20) unsigned"), and
// whether it is unsigned; 0 for any other type.
func intBits(typ string) (bits int, unsigned bool) {
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

// sameColumnType says whether two column types are one: case, spacing
// and an integer's display width aside.
func sameColumnType(a, b string) bool {
	ab, au := intBits(a)
	bb, bu := intBits(b)
	if ab > 0 || bb > 0 {
		return ab == bb && au == bu
	}
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	return norm(a) == norm(b)
}
