package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"
)

// TableKey is the key of the user's table today, as a --like run's
// verdict weighs it: a local sequence is kept unless a need rules it out.
type TableKey struct {
	Column string `json:"column"`
	Type   string `json:"type"`
	// Sequence says why the key is a local sequence: how the server
	// numbers it ("identity", "serial", "AUTO_INCREMENT"), or that its
	// values are dense and in insert order, with the evidence (see
	// LikeTable.localSequence); empty when it is not one.
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

// likeWrite is a write figure of a --like verdict: the figures that may
// stand for it on an engine, best first, each measured on some path.
type likeWrite struct {
	group string // "pages" or "log", the key of LikeTable.Unmeasured
	alts  []verdictFigure
}

// likeWrites are, per engine, the write figures a --like verdict ranks
// on: on PostgreSQL the pages dirtied and WAL with a CHECKPOINT at each
// interval (a scratch server), else the pages changed in each interval
// counted from their LSNs and the statements' WAL without full-page
// images (the source server, where no checkpoint is forced); on InnoDB
// the copy's own pages changed in each flush interval and the redo of an
// undisturbed load (a scratch server); on MyRocks the bytes the copy's
// column family wrote and the log of an undisturbed load. The expiry is
// measured on the plain tables alone: deleting a copy's oldest tenth
// through its key costs a compaction of the whole column family whatever
// the keys' order (over a row's life 20.5 for the counter, 24.8 for
// UUIDv4 at 200,000 keys), where the load's own compactions tell them
// apart (2.5x).
var likeWrites = map[string][]likeWrite{
	engine.Postgres: {
		{"pages", []verdictFigure{{"pages_dirtied_per_1000", "pages dirtied"}, {"pages_changed_per_1000", "pages changed per interval (page LSNs, no checkpoint forced)"}}},
		{"log", []verdictFigure{{"wal_bytes_per_insert", "WAL"}, {"wal_bytes_no_fpi_per_insert", "WAL without full-page images (no checkpoint forced)"}}},
	},
	engine.MySQL: {
		{"pages", []verdictFigure{{"pages_changed_per_1000", "pages changed per flush interval"}}},
		{"log", []verdictFigure{{"redo_bytes_per_insert", "redo"}}},
	},
	engine.MyRocks: {
		{"tables", []verdictFigure{{"bytes_written_per_insert", "bytes flushed and compacted"}}},
		{"log", []verdictFigure{{"wal_bytes_per_insert", "log"}}},
	},
}

// likeSizes are, per engine, the size figures of a --like verdict, and
// the figure of the key's own index that every path measures where it
// can: on PostgreSQL its pages changed per interval (keyPagesFigure, with
// pageinspect), on InnoDB the page splits of the clustered index
// (splitFigure). Each is taken at the baseline's key width, so that it
// tells the key's order apart from its width.
var likeSizes = map[string][]verdictFigure{
	engine.Postgres: {{"all_index_bytes_per_key", "every index's size"}, keyPagesFigure},
	engine.MySQL:    {{"all_index_bytes_per_key", "every index's size"}, {"leaf_pages_per_1000", "primary-key leaf pages"}, splitFigure},
	engine.MyRocks:  {{"all_index_bytes_per_key", "every index's size"}},
}

// likeFigures returns the figures a --like run's verdict compares on
// engine, and a note for each write figure it leaves out. They are
// figures of the copies of the user's table alone, so that another
// session's work on the server cannot change the ranking: every index's
// size, and each write figure (likeWrites) that every candidate's load
// measured; one that was not measured at all on the run's path, or not
// undisturbed in every candidate's load, is left out, and the note says
// which and why.
func likeFigures(t *engine.LikeTable, candidates []*Result, value func(*Result, string) (float64, bool)) ([]verdictFigure, []string) {
	var figs []verdictFigure
	var notes []string
	for _, f := range likeSizes[t.Engine] {
		if judging[f.key] && slices.ContainsFunc(candidates, func(s *Result) bool { _, ok := value(s, f.key); return !ok }) {
			notes = append(notes, f.name+" left out: not measured, or no counter baseline in the run to set the width by")
			continue
		}
		figs = append(figs, f)
	}
	for _, w := range likeWrites[t.Engine] {
		var chosen *verdictFigure
		var lacking []string // the candidates without the best figure some have
		for i, f := range w.alts {
			var without []string
			some := false
			for _, s := range candidates {
				if _, ok := value(s, f.key); ok {
					some = true
				} else {
					without = append(without, s.Name)
				}
			}
			if some && len(without) == 0 {
				chosen = &w.alts[i]
				break
			}
			if some && lacking == nil {
				lacking = without
			}
		}
		switch {
		case chosen != nil:
			figs = append(figs, *chosen)
		case lacking != nil:
			notes = append(notes, fmt.Sprintf("%s left out: not measured undisturbed in the loads of %s", w.alts[0].name, strings.Join(lacking, ", ")))
		case t.Unmeasured[w.group] != "":
			notes = append(notes, t.Unmeasured[w.group])
		case len(candidates) > 0:
			notes = append(notes, w.alts[0].name+" left out: not measured in this run")
		}
	}
	return figs, notes
}

// PerIDSequence returns what s calls for each ID when every ID is the
// next value of one sequence shared by all its writers, or "" when each
// machine makes its IDs itself. Design.Dense marks the schemes whose IDs
// come from one sequence, but the segment allocators among them reserve
// a block of IDs per call and hand them out locally; the schemes that
// call per ID are the baseline, Redis INCR, the "-fetch" rows (one block
// reservation per ID) and the public numbers of a shared counter.
func PerIDSequence(s *Result) string {
	switch {
	case s.Kind == scheme.Baseline && s.Design.Dense:
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

// FleetMiss returns why s fails need.Fleet, or "".
func FleetMiss(s *Result, need Need) string {
	if !need.Fleet {
		return ""
	}
	if what := PerIDSequence(s); what != "" {
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
// on the table's key and on the counter baseline alike.
const localSequenceWords = "a local sequence (integers numbered in insert order on one server)"

// baselineLine is the verdict's reason for the counter baseline in a
// --like run: what it is, in the words of the line on the table's key.
func baselineLine(t *engine.LikeTable) string {
	s := "the baseline the figures are measured against: " + localSequenceWords
	if _, ok := t.LocalSequence(); ok {
		return s + ", as your key " + t.Key + " is"
	}
	return s + ", which your key " + t.Key + " is not"
}

// JudgeTableKey judges the table's key under need: a local sequence (by the
// one rule of localSequence) is kept unless a need rules it out; any
// other key is described, and the schemes rank to replace it, unless the
// verdict cannot judge them (cannot says why).
func JudgeTableKey(t *engine.LikeTable, need Need, cannot string) *TableKey {
	k := judgeKey(t, need)
	if cannot != "" && !k.Keep {
		k.Line = strings.TrimSuffix(k.Line, rankToReplace) + "; no scheme is ranked to replace it: " + cannot
	}
	return k
}

// rankToReplace ends the line on a key the verdict does not keep.
const rankToReplace = "; the schemes below rank to replace it"

// judgeKey is tableKey for a verdict that ranks the schemes.
func judgeKey(t *engine.LikeTable, need Need) *TableKey {
	k := &TableKey{Column: t.Key, Type: t.KeyType}
	how, ok := t.LocalSequence()
	if !ok {
		k.Line = fmt.Sprintf("your key %s (%s) is not a local sequence", t.Key, t.KeyType)
		var why []string
		if bits, _ := engine.IntBits(t.KeyType); bits > 0 && t.KeyMin != nil && t.KeyMax != nil && !engine.Dense(*t.KeyMin, *t.KeyMax, t.Rows) {
			why = append(why, fmt.Sprintf("its values span %s..%s for about %s rows", engine.Thousands(*t.KeyMin), engine.Thousands(*t.KeyMax), engine.Thousands(t.Rows)))
		}
		if c := t.KeyTimeCorrelation; c != nil {
			why = append(why, fmt.Sprintf("its order against the created-at column's: rank correlation %.2f (1 in order, 0 unrelated)", *c))
		} else if c := t.KeyCorrelation; c != nil {
			why = append(why, fmt.Sprintf("its order against the rows' physical order: correlation %.2f (1 in order, 0 unrelated)", *c))
		}
		if len(why) > 0 {
			k.Line += "; " + strings.Join(why, "; ")
		}
		k.Line += rankToReplace
		return k
	}
	k.Sequence = how
	what := fmt.Sprintf("%s (%s, %s)", t.Key, t.KeyType, how)
	bits, unsigned := engine.IntBits(t.KeyType)
	d := scheme.Design{Bits: bits, Ordered: true, Dense: true, MaxBits: bits - 1}
	if unsigned {
		d.MaxBits = bits
	}
	d = scheme.FromMaxBits(d)
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
		k.Line = fmt.Sprintf("your key %s is ruled out: %s", what, strings.Join(k.RuledOut, "; ")) + rankToReplace
		return k
	}
	k.Keep = true
	k.Line = fmt.Sprintf("keep your key %s: %s, as the counter the figures are measured against, in %d bytes; change it only for a need it fails (fleet, unguessable, sortable), for which the schemes below rank%s",
		what, localSequenceWords, bits/8, caveat)
	return k
}

// besideBaseline returns s's load on engine in run ri and the counter
// baseline's; false without either.
func (r *Report) besideBaseline(s *Result, ri int, eng string) (load, base engine.Figures, ok bool) {
	b := r.baselineResult()
	if b == nil || ri >= len(s.Runs) || ri >= len(b.Runs) {
		return load, base, false
	}
	load, ok = s.Runs[ri].EngineLoad(eng)
	base, bok := b.Runs[ri].EngineLoad(eng)
	return load, base, ok && bok
}

// widthAdjustedLeafPages returns s's primary-key leaf pages on InnoDB in
// run ri as if its key were as wide as the baseline's: its leaf pages
// times the bytes a row takes in the baseline's leaves over those bytes
// plus the difference of the keys' widths. Over the baseline's own leaf
// pages it is what the key's order costs the clustered index, its width
// aside: about 1 for keys in insert order, about 1.4 for random ones.
// False without a counter baseline or the figures.
func (r *Report) widthAdjustedLeafPages(s *Result, ri int) (float64, bool) {
	l, b, ok := r.besideBaseline(s, ri, engine.MySQL)
	if !ok {
		return 0, false
	}
	leaves, bLeaves := l.Metrics["leaf_pages_per_1000"], b.Metrics["leaf_pages_per_1000"]
	width, bWidth := mysqlKeyBytes(l.ColumnType), mysqlKeyBytes(b.ColumnType)
	if leaves <= 0 || bLeaves <= 0 || width == 0 || bWidth == 0 {
		return 0, false
	}
	rowBytes := bLeaves * innodbPageBytes / 1000 // in the baseline's leaves, their free space included
	return leaves * rowBytes / (rowBytes + float64(width-bWidth)), true
}

// widthAdjustedKeyPages returns the pages of s's primary-key index on
// PostgreSQL changed per interval in run ri as if its key were as wide
// as the baseline's: an index tuple in insert order adds pages in
// proportion to its bytes, so its pages times the baseline's tuple bytes
// over its own. Over the baseline's own it is what the key's order costs
// the index: about 1 for keys in insert order, tens for random ones,
// which change every leaf in every interval. False without a counter
// baseline or the figures.
func (r *Report) widthAdjustedKeyPages(s *Result, ri int) (float64, bool) {
	l, b, ok := r.besideBaseline(s, ri, engine.Postgres)
	if !ok {
		return 0, false
	}
	pages, pok := l.Metrics["key_pages_changed_per_1000"]
	width, bWidth := pgTupleBytes(l.ColumnType, s.Runs[ri].Size.KeyBytes), pgTupleBytes(b.ColumnType, r.baselineResult().Runs[ri].Size.KeyBytes)
	if !pok || width == 0 || bWidth == 0 {
		return 0, false
	}
	return pages * float64(bWidth) / float64(width), true
}

// pgTupleBytes is what a key of a copy's column type (postgresColumn)
// and keyBytes bytes takes in a B-tree leaf: the tuple's 8-byte header,
// the key aligned to 8 bytes, and its 4-byte line pointer; 0 for another
// type.
func pgTupleBytes(columnType string, keyBytes int) int {
	align := func(n int) int { return (n + 7) &^ 7 }
	switch columnType {
	case "bigint":
		return 8 + 8 + 4
	case "uuid":
		return 8 + 16 + 4
	case "bytea":
		return 8 + align(1+keyBytes) + 4 // a short varlena header
	}
	return 0
}

// innodbPageBytes is InnoDB's page size, the server's default.
const innodbPageBytes = 16 << 10

// mysqlKeyBytes is the width of a key column of a copy (mysqlColumn): 8
// for BIGINT, n for BINARY(n); 0 for any other.
func mysqlKeyBytes(columnType string) int {
	if strings.EqualFold(columnType, "BIGINT") {
		return 8
	}
	var n int
	if _, err := fmt.Sscanf(strings.ToUpper(columnType), "BINARY(%d)", &n); err != nil {
		return 0
	}
	return n
}

// keyChange says what replacing the table's key with scheme's, as loaded
// in run ri, costs the schema.
func (r *Report) keyChange(t *engine.LikeTable, scheme string, ri int) *KeyChange {
	c := &KeyChange{Scheme: scheme, Column: t.Key, FromType: t.KeyType, ReferencedBy: t.ReferencedBy}
	for _, s := range r.Schemes {
		if s.Name == scheme && ri < len(s.Runs) {
			if l, ok := s.Runs[ri].EngineLoad(t.Engine); ok {
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

// sameColumnType says whether two column types are one: case, spacing
// and an integer's display width aside.
func sameColumnType(a, b string) bool {
	ab, au := engine.IntBits(a)
	bb, bu := engine.IntBits(b)
	if ab > 0 || bb > 0 {
		return ab == bb && au == bu
	}
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	return norm(a) == norm(b)
}
