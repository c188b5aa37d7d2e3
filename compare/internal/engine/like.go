package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

// ErrLike reports a --like table that a run cannot copy: a name that is
// not schema.table, a missing table, or one without a single-column
// primary key.
var ErrLike = errkind.New(idkit.ErrInvalid, "compare: --like")

// MaxSample bounds the rows a --like run reads from the user's table, and
// MaxSampleBytes the memory they take on their way through the tool: by
// default (Options.Sample 0) a run reads enough rows that no row fills
// more than two rows of a copy, within both bounds.
const (
	MaxSample      = 1_000_000
	MaxSampleBytes = 256 << 20
)

// SampleSize returns how many rows to sample for loads of n rows from a
// table of about rows rows in tableBytes bytes, when the user asked for
// requested (0: the default), and a note that says how many times each
// sampled row is used.
func SampleSize(requested, n int, rows, tableBytes int64) (int, string) {
	size := requested
	why := "as asked"
	if size == 0 {
		size = (n + 1) / 2
		why = "enough that no row fills more than two rows of a copy"
		if rows > 0 && tableBytes > 0 {
			rowBytes := max(1, tableBytes/rows)
			if limit := MaxSampleBytes / rowBytes; int64(size) > limit {
				size = int(limit)
				why = fmt.Sprintf("as many as %s of memory holds, at about %d bytes a row", MiB(MaxSampleBytes), rowBytes)
			}
		}
		size = min(size, MaxSample)
	}
	size = max(1, min(size, n))
	if rows > 0 && int64(size) > rows {
		size = int(rows)
		why = "the whole table"
	}
	return size, fmt.Sprintf("sample: up to %s rows (%s); the loads' %s rows use each sampled row up to %d times",
		Thousands(int64(size)), why, Thousands(int64(n)), (n+size-1)/size)
}

// LikeName is the user's table a run copies the shape of: schema.table on
// PostgreSQL, database.table on MariaDB/MySQL.
type LikeName struct {
	Schema, Table identifier
}

// identifier is one part of a LikeName as written: a plain identifier, or
// a quoted one taken as is.
type identifier struct {
	Name   string
	Quoted bool
}

// ParseLike parses schema.table. Each part is a plain identifier (letters,
// digits, _ and $, not starting with a digit), which PostgreSQL folds to
// lower case, or an identifier in double quotes or backquotes, taken as is,
// with the quote doubled inside it: "my schema"."odd ""table""".
func ParseLike(s string) (LikeName, error) {
	bad := func(why string) (LikeName, error) {
		return LikeName{}, fmt.Errorf("%w %q: %s; want schema.table, each part a plain identifier or one in double quotes", ErrLike, s, why)
	}
	schema, rest, err := parseIdentifier(s)
	if err != nil {
		return bad(err.Error())
	}
	if !strings.HasPrefix(rest, ".") {
		return bad("no dot after the schema")
	}
	table, rest, err := parseIdentifier(rest[1:])
	if err != nil {
		return bad(err.Error())
	}
	if rest != "" {
		return bad(fmt.Sprintf("%q after the table name", rest))
	}
	return LikeName{Schema: schema, Table: table}, nil
}

// parseIdentifier reads one identifier from the start of s and returns it
// with the rest of s.
func parseIdentifier(s string) (identifier, string, error) {
	if s == "" {
		return identifier{}, "", errors.New("an empty name")
	}
	if q := s[0]; q == '"' || q == '`' {
		var b strings.Builder
		for i := 1; i < len(s); i++ {
			if s[i] != q {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == q {
				b.WriteByte(q)
				i++
				continue
			}
			if b.Len() == 0 {
				return identifier{}, "", errors.New("an empty quoted name")
			}
			return identifier{Name: b.String(), Quoted: true}, s[i+1:], nil
		}
		return identifier{}, "", errors.New("an unclosed quote")
	}
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] == '$' || 'a' <= s[i]|0x20 && s[i]|0x20 <= 'z' || i > 0 && '0' <= s[i] && s[i] <= '9') {
		i++
	}
	if i == 0 {
		return identifier{}, "", fmt.Errorf("%q is no identifier", s)
	}
	return identifier{Name: s[:i]}, s[i:], nil
}

// Postgres returns the name as PostgreSQL's catalog holds it.
func (id identifier) Postgres() string {
	if id.Quoted {
		return id.Name
	}
	return strings.ToLower(id.Name)
}

// String returns n as it was written, quoting where it was quoted.
func (n LikeName) String() string {
	part := func(id identifier) string {
		if !id.Quoted {
			return id.Name
		}
		return `"` + strings.ReplaceAll(id.Name, `"`, `""`) + `"`
	}
	return part(n.Schema) + "." + part(n.Table)
}

// LikeTable is the user's table that a --like run copied, as it is on one
// engine: its key, size, indexes and the physical order of its key. Every
// figure is read from the server's catalog and statistics; the run never
// writes to the table or its schema.
type LikeTable struct {
	Engine string `json:"engine"`
	Name   string `json:"name"`
	// Key is the primary key's column and KeyType its type.
	Key     string `json:"key"`
	KeyType string `json:"key_type"`
	// Rows is the server's estimate of the rows.
	Rows int64 `json:"rows"`
	// TableBytes is the heap (PostgreSQL), the clustered index with the
	// rows (InnoDB), or the table's share of the tables' files (MyRocks).
	TableBytes int64          `json:"table_bytes"`
	Indexes    []IndexFigures `json:"indexes"`
	// KeyCorrelation is PostgreSQL's correlation of the key's order with
	// the rows' physical order (pg_stats), from -1 to 1; absent when the
	// table was never analyzed, and on InnoDB, whose rows are in key order.
	KeyCorrelation *float64 `json:"key_correlation,omitempty"`
	// KeySequence says how the server makes the key's values today when
	// it is a local integer sequence: "identity", "serial" (a nextval
	// default) or "AUTO_INCREMENT"; empty when it is anything else.
	KeySequence string `json:"key_sequence,omitempty"`
	// ReferencedBy are the foreign keys that point at the key, each as
	// "schema.table(column)": a change of the key's type changes them too.
	ReferencedBy []string `json:"referenced_by,omitempty"`
	// ToastBytes are PostgreSQL's out-of-line (TOAST) bytes of the table,
	// its index included.
	ToastBytes int64 `json:"toast_bytes,omitempty"`
	// KeyMin and KeyMax are an integer key's least and greatest values.
	KeyMin *int64 `json:"key_min,omitempty"`
	KeyMax *int64 `json:"key_max,omitempty"`
	// KeyTimeCorrelation is an integer key's rank correlation, over the
	// sample, with the table's created-at time column (see InsertOrder);
	// absent without one.
	KeyTimeCorrelation *float64 `json:"key_time_correlation,omitempty"`
	// InsertOrder says how the run put the sampled rows in the order the
	// application inserted them: by the key, a time column or the rows'
	// physical order.
	InsertOrder string `json:"insert_order"`
	// OnSource says the copies were built on the source server, where
	// the run forces no checkpoint or flush (no --scratch).
	OnSource bool `json:"copies_on_source,omitempty"`
	// SourceLogBytes is the WAL (PostgreSQL) or redo (InnoDB) the source
	// server wrote during a run with the copies on it: the run's and any
	// other session's.
	SourceLogBytes int64 `json:"source_log_bytes,omitempty"`
	// Unmeasured says, for a write figure of the verdict ("pages" or
	// "log") that the run's path cannot measure cleanly, why it is left
	// out.
	Unmeasured map[string]string `json:"unmeasured,omitempty"`
	// Sampled is the number of rows copied to the scratch schema, which
	// each load passes through once, in the order of InsertOrder, and
	// Reuse the most rows of a copy one sampled row fills.
	Sampled int      `json:"sampled_rows"`
	Reuse   int      `json:"sample_reuse"`
	Notes   []string `json:"notes,omitempty"`
}

// IndexFigures are one index's size and fill: of the user's table today,
// or of a scheme's scratch copy after its load.
type IndexFigures struct {
	// Name says what the index is on: "primary key (id)", "unique
	// (email)", "(created_at)".
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	// LeafPages and LeafDensity (used bytes over page bytes) where the
	// engine tells them; Fragmentation is PostgreSQL's leaf pages out of
	// physical order.
	LeafPages     int64    `json:"leaf_pages,omitempty"`
	LeafDensity   float64  `json:"leaf_density,omitempty"`
	Fragmentation *float64 `json:"leaf_fragmentation,omitempty"`
	// Pages are an InnoDB index's pages that hold records, counted in the
	// buffer pool after the index was read whole (a copy on a scratch
	// server): its size without the extents InnoDB allocates ahead, and
	// without the persistent statistics' n_leaf_pages, which MariaDB
	// gives as 1 for a secondary index.
	Pages int64 `json:"pages,omitempty"`
}

// Source is the user's table as a --like run read it on the source
// server: the figures of the report and, in Def, what the copies are made
// of, in the terms of the engine that read it (its own type).
type Source struct {
	Name  LikeName
	Table LikeTable
	Def   any
	// OID and RelTuples are the PostgreSQL table's, while it is read.
	OID       uint32
	RelTuples float64
}

// Shape is what an engine keeps of the user's table for its loads: the
// columns besides the key, how to fill each, the sample, and the table's
// definition in the engine's own terms (D).
type Shape[D any] struct {
	Name    LikeName
	Key     string   // the key column
	Columns []string // the other columns the loads fill, quoted for the engine
	Values  []string // per column, the expression that fills it from the sample row s and the row number
	Sample  int      // rows in the sample table
	N       int      // rows in each load
	Def     D        // the engine's definition of the table
}

// LikeNotes are said of every --like run.
var LikeNotes = []string{
	"the copies have the table's columns and indexes, with the key column's type set to what each scheme needs; foreign keys, triggers and check constraints are not copied",
	"each row takes the scheme's key, in the order the scheme makes them, and the other columns of a sampled row",
}

// Describe says in words what the reports say of the table besides its
// indexes.
func (t LikeTable) Describe() []string {
	out := []string{fmt.Sprintf("key %s (%s), about %s rows, %s sampled", t.Key, t.KeyType, Thousands(t.Rows), Thousands(int64(t.Sampled)))}
	if c := t.KeyCorrelation; c != nil {
		out = append(out, fmt.Sprintf("the key's order against the rows' physical order: correlation %.2f (1 in order, 0 unrelated)", *c))
	}
	if t.ToastBytes > 0 {
		out = append(out, fmt.Sprintf("TOAST (values stored out of line, with its index): %s beside the table's %s", MiB(float64(t.ToastBytes)), MiB(float64(t.TableBytes))))
	}
	if len(t.ReferencedBy) > 0 {
		out = append(out, "foreign keys that point at the key: "+strings.Join(t.ReferencedBy, ", "))
	}
	if t.InsertOrder != "" {
		out = append(out, t.InsertOrder)
	}
	return append(out, t.Notes...)
}

// Cells formats an index's figures as a row of the table of the user's
// table.
func (f IndexFigures) Cells() []string {
	row := []string{f.Name, MiB(float64(f.Bytes)), "-", "-", "-"}
	if f.LeafPages > 0 {
		row[2] = Thousands(f.LeafPages)
	}
	if f.LeafDensity > 0 {
		row[3] = Pct(f.LeafDensity)
	}
	if f.Fragmentation != nil {
		row[4] = Pct(*f.Fragmentation)
	}
	return row
}

// LikeTries is how many times a --like load runs at most to measure its
// figures undisturbed: a checkpoint of the server's in the middle of a
// load without one forced (PostgreSQL), another session's writes during
// the load's server-wide counters (InnoDB). Each try is a load of its own
// into a fresh copy.
const LikeTries = 2
