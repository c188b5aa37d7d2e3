package compare

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"
)

// pgIndex is one index of a table as the catalog describes it.
type pgIndex struct {
	oid              uint32
	def              string // pg_get_indexdef
	primary, unique  bool
	btree            bool
	columns          []string // attribute names; "" for an expression
	hasExpr, partial bool
}

// prepareLike reads the user's table through the catalog, copies a sample
// of its rows into the run's schema, and makes the loads copy its shape.
// It only reads the table: SELECT on it and on the catalog, and the
// statistics functions, which read.
func (e *postgresEngine) prepareLike(ctx context.Context, name LikeName, sample int) (LikeTable, error) {
	schema, table := name.Schema.postgres(), name.Table.postgres()
	qualified := pgx.Identifier{schema, table}.Sanitize()
	t := LikeTable{Engine: EnginePostgres, Name: name.String()}
	fail := func(format string, args ...any) (LikeTable, error) {
		return t, fmt.Errorf("%w %s: postgres: %s", ErrLike, name, fmt.Sprintf(format, args...))
	}
	var oid uint32
	var kind string
	var reltuples float64
	var options []string
	err := e.conn.QueryRow(ctx, `SELECT c.oid, c.relkind, c.reltuples, coalesce(c.reloptions, '{}')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`, schema, table).Scan(&oid, &kind, &reltuples, &options)
	if errors.Is(err, pgx.ErrNoRows) {
		return fail("no table %s", qualified)
	}
	if err != nil {
		return fail("read the catalog: %v", err)
	}
	if kind != "r" {
		return fail("%s is not a plain table (relkind %q)", qualified, kind)
	}
	t.Rows = int64(max(reltuples, 0))
	indexes, err := e.indexes(ctx, oid)
	if err != nil {
		return fail("read the indexes: %v", err)
	}
	var pk *pgIndex
	for i := range indexes {
		if indexes[i].primary {
			pk = &indexes[i]
		}
	}
	switch {
	case pk == nil:
		return fail("%s has no primary key; --like needs a single-column primary key to replace", qualified)
	case len(pk.columns) != 1 || pk.hasExpr:
		return fail("%s has a composite primary key (%s); --like needs a single-column primary key to replace", qualified, strings.Join(pk.columns, ", "))
	}
	t.Key = pk.columns[0]

	// The columns: the key, and those the loads fill from the sample.
	rows, err := e.conn.Query(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attgenerated <> '', t.typcategory, t.typname
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
	if err != nil {
		return fail("read the columns: %v", err)
	}
	type column struct{ name, typ, category, typname string }
	var cols []column
	for rows.Next() {
		var c column
		var generated bool
		if err := rows.Scan(&c.name, &c.typ, &generated, &c.category, &c.typname); err != nil {
			rows.Close()
			return fail("read the columns: %v", err)
		}
		if c.name == t.Key {
			t.KeyType = c.typ
			continue
		}
		if !generated {
			cols = append(cols, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail("read the columns: %v", err)
	}
	unique := map[string]bool{}
	for _, ix := range indexes {
		if !ix.unique || ix.primary {
			continue
		}
		if ix.hasExpr {
			return fail("unique index %q is on an expression: --like cannot make its values unique", ix.def)
		}
		for _, c := range ix.columns {
			unique[c] = true
		}
	}

	// The table's figures today.
	if err := e.conn.QueryRow(ctx, "SELECT pg_relation_size($1)", oid).Scan(&t.TableBytes); err != nil {
		return fail("table size: %v", err)
	}
	for _, ix := range indexes {
		f, err := e.indexFigures(ctx, ix)
		if err != nil {
			return fail("index %q: %v", ix.def, err)
		}
		t.Indexes = append(t.Indexes, f)
	}
	var corr *float64
	err = e.conn.QueryRow(ctx, "SELECT correlation FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = $3",
		schema, table, t.Key).Scan(&corr)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fail("pg_stats: %v", err)
	}
	t.KeyCorrelation = corr
	if corr == nil {
		t.Notes = append(t.Notes, "the key's physical order is unknown: the table has no statistics (ANALYZE it for pg_stats.correlation)")
	}

	// The sample: at most sample rows, picked by TABLESAMPLE SYSTEM from
	// the estimated row count (the first rows if there is no estimate).
	shape := &likeShape{name: name, key: pgx.Identifier{t.Key}.Sanitize()}
	var list []string
	for _, c := range cols {
		list = append(list, pgx.Identifier{c.name}.Sanitize())
	}
	from := "ONLY " + qualified
	if reltuples > 0 {
		pct := min(100, max(0.0001, 200*float64(sample)/reltuples))
		from += fmt.Sprintf(" TABLESAMPLE SYSTEM (%g)", pct)
	}
	sampleTable := e.schema + ".like_sample"
	selectList := "1"
	if len(list) > 0 {
		selectList = strings.Join(list, ", ")
	}
	stmt := fmt.Sprintf("CREATE TABLE %s AS SELECT row_number() OVER () AS idkit_row, s.* FROM (SELECT %s FROM %s LIMIT %d) s",
		sampleTable, selectList, from, sample)
	if _, err := e.conn.Exec(ctx, stmt); err != nil {
		return fail("copy a sample: %v", err)
	}
	if err := e.conn.QueryRow(ctx, "SELECT count(*) FROM "+sampleTable).Scan(&shape.sample); err != nil {
		return fail("count the sample: %v", err)
	}
	if shape.sample == 0 && reltuples > 0 { // the sampled blocks held no rows: take the first ones
		if _, err := e.conn.Exec(ctx, fmt.Sprintf("INSERT INTO %s SELECT row_number() OVER (), s.* FROM (SELECT %s FROM ONLY %s LIMIT %d) s",
			sampleTable, selectList, qualified, sample)); err != nil {
			return fail("copy a sample: %v", err)
		}
		if err := e.conn.QueryRow(ctx, "SELECT count(*) FROM "+sampleTable).Scan(&shape.sample); err != nil {
			return fail("count the sample: %v", err)
		}
	}
	if shape.sample == 0 {
		return fail("%s is empty: --like copies the other columns from its rows", qualified)
	}
	if _, err := e.conn.Exec(ctx, "CREATE UNIQUE INDEX ON "+sampleTable+" (idkit_row)"); err != nil {
		return fail("index the sample: %v", err)
	}
	t.Sampled = shape.sample

	// Each column's value: the sampled row's, or for a column of a unique
	// index a value made unique by the row number n.r.
	for _, c := range cols {
		q := pgx.Identifier{c.name}.Sanitize()
		v := "s." + q
		if unique[c.name] {
			if v, err = pgUniqueValue(q, c.typ, c.category, c.typname); err != nil {
				return fail("%v", err)
			}
			t.Notes = append(t.Notes, fmt.Sprintf("column %s is in a unique index: each row gets a value of its own made from its row number", c.name))
		}
		shape.columns = append(shape.columns, q)
		shape.values = append(shape.values, v)
	}
	for _, o := range options {
		if strings.HasPrefix(o, "fillfactor=") {
			shape.options = ", " + o
		}
	}
	t.Notes = append(t.Notes, likeNotes...)
	e.like = shape
	return t, nil
}

// pgUniqueValue returns an expression of column type typ that is unique
// per row number n.r: the number in front of the sampled text, the number
// itself, a time that many microseconds on, or a UUID made from it.
func pgUniqueValue(col, typ, category, typname string) (string, error) {
	switch {
	case category == "S":
		return fmt.Sprintf("(n.r::text || '-' || coalesce(s.%s::text, ''))::%s", col, typ), nil
	case category == "N":
		return fmt.Sprintf("n.r::%s", typ), nil
	case category == "D":
		return fmt.Sprintf("('2000-01-01'::timestamptz + n.r * interval '1 microsecond')::%s", typ), nil
	case typname == "uuid":
		return "md5(n.r::text)::uuid", nil
	}
	return "", fmt.Errorf("column %s of type %s is in a unique index: --like can make text, numbers, times and UUIDs unique, not %s", col, typ, typ)
}

// indexes returns the indexes of the table oid.
func (e *postgresEngine) indexes(ctx context.Context, oid uint32) ([]pgIndex, error) {
	rows, err := e.conn.Query(ctx, `SELECT i.indexrelid, pg_get_indexdef(i.indexrelid), i.indisprimary, i.indisunique,
		  am.amname = 'btree', i.indexprs IS NOT NULL, i.indpred IS NOT NULL,
		  array(SELECT coalesce(a.attname, '') FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
		        LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.ord)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
		WHERE i.indrelid = $1 ORDER BY NOT i.indisprimary, c.relname`, oid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []pgIndex
	for rows.Next() {
		var ix pgIndex
		if err := rows.Scan(&ix.oid, &ix.def, &ix.primary, &ix.unique, &ix.btree, &ix.hasExpr, &ix.partial, &ix.columns); err != nil {
			return nil, err
		}
		out = append(out, ix)
	}
	return out, rows.Err()
}

// indexFigures reads an index's size and, for a B-tree, pgstatindex's leaf
// figures.
func (e *postgresEngine) indexFigures(ctx context.Context, ix pgIndex) (IndexFigures, error) {
	f := IndexFigures{Name: pgIndexName(ix)}
	if err := e.conn.QueryRow(ctx, "SELECT pg_relation_size($1)", ix.oid).Scan(&f.Bytes); err != nil {
		return f, err
	}
	if !ix.btree {
		return f, nil
	}
	var density, frag float64
	if err := e.conn.QueryRow(ctx, "SELECT leaf_pages, avg_leaf_density, leaf_fragmentation FROM pgstatindex($1::regclass)", ix.oid).
		Scan(&f.LeafPages, &density, &frag); err != nil {
		return f, err
	}
	if !math.IsNaN(density) {
		f.LeafDensity = density / 100
	}
	if !math.IsNaN(frag) {
		frag /= 100
		f.Fragmentation = &frag
	}
	return f, nil
}

// pgIndexName says what an index is on, the same for the user's table and
// its copies: "primary key (id)", "unique (email)", "(created_at)", with
// the index's method and predicate when they are not the plain ones.
func pgIndexName(ix pgIndex) string {
	var b strings.Builder
	switch {
	case ix.primary:
		b.WriteString("primary key ")
	case ix.unique:
		b.WriteString("unique ")
	}
	// The definition ends with "USING method (columns)" and perhaps a
	// WHERE clause: keep that part.
	def := ix.def
	if i := strings.Index(def, " USING "); i >= 0 {
		def = def[i+len(" USING "):]
	}
	def = strings.TrimPrefix(def, "btree ")
	b.WriteString(def)
	return b.String()
}

// loadLike loads l's keys into a copy of the user's table in the run's
// schema: the table's columns and indexes, the key column's type set to
// the scheme's, each row filled from the sample.
func (e *postgresEngine) loadLike(ctx context.Context, l dbLoad) (EngineLoad, error) {
	shape := e.like
	colType, array := postgresColumn(l)
	out := EngineLoad{Engine: EnginePostgres, ColumnType: colType, Metrics: map[string]float64{}}
	table := e.schema + "." + l.table
	user := pgx.Identifier{shape.name.Schema.postgres(), shape.name.Table.postgres()}.Sanitize()
	fail := func(what string, err error) (EngineLoad, error) {
		return out, fmt.Errorf("compare: postgres: %s %s (like %s): %w", what, table, shape.name, err)
	}
	if _, err := e.conn.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (LIKE %s INCLUDING INDEXES INCLUDING STORAGE) WITH (autovacuum_enabled = false%s)",
		table, user, shape.options)); err != nil {
		return fail("copy the table", err)
	}
	defer e.conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	if _, err := e.conn.Exec(ctx, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s USING NULL", table, shape.key, colType)); err != nil {
		return fail("set the key column's type", err)
	}
	var oid uint32
	if err := e.conn.QueryRow(ctx, "SELECT $1::regclass::oid", table).Scan(&oid); err != nil {
		return fail("find the copy", err)
	}

	cols := append([]string{shape.key}, shape.columns...)
	vals := append([]string{"u.k"}, shape.values...)
	// n.r numbers the rows of the whole load from 0: $2 is the batch's
	// first.
	stmt := fmt.Sprintf(`EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) INSERT INTO %s (%s)
		SELECT %s FROM unnest($1::%s) WITH ORDINALITY AS u(k, i)
		CROSS JOIN LATERAL (SELECT $2::bigint + u.i - 1 AS r) n
		JOIN %s.like_sample s ON s.idkit_row = n.r %% $3 + 1`,
		table, strings.Join(cols, ", "), strings.Join(vals, ", "), array, e.schema)
	x, err := e.explainLoad(ctx, l, stmt, func(lo, hi int) []any { return []any{pgKeys(l, colType, lo, hi), lo, shape.sample} })
	if err != nil {
		return fail("load", err)
	}
	var heapBytes int64
	if err := e.conn.QueryRow(ctx, "SELECT pg_relation_size($1)", oid).Scan(&heapBytes); err != nil {
		return fail("table size", err)
	}
	indexes, err := e.indexes(ctx, oid)
	if err != nil {
		return fail("read the indexes", err)
	}
	n := l.keys.N()
	m := out.Metrics
	var secondary float64
	for _, ix := range indexes {
		f, err := e.indexFigures(ctx, ix)
		if err != nil {
			return fail("index figures", err)
		}
		out.Indexes = append(out.Indexes, f)
		if ix.primary {
			m["index_bytes"] = float64(f.Bytes)
			m["leaf_pages"] = float64(f.LeafPages)
			m["leaf_density"] = f.LeafDensity
			if f.Fragmentation != nil {
				m["leaf_fragmentation"] = *f.Fragmentation
			}
		} else {
			secondary += float64(f.Bytes)
		}
	}
	x.metrics(m, n)
	m["index_bytes_per_key"] = perKey(m["index_bytes"], n)
	m["secondary_index_bytes"] = secondary
	m["heap_bytes"] = float64(heapBytes)
	return out, nil
}

// pgKeys returns keys lo..hi-1 of l as the array the column type takes.
func pgKeys(l dbLoad, colType string, lo, hi int) any {
	switch colType {
	case "bigint":
		ks := make([]int64, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ks = append(ks, l.int64At(i))
		}
		return ks
	case "uuid":
		ks := make([][16]byte, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ks = append(ks, [16]byte(l.keys.At(i)))
		}
		return ks
	default:
		ks := make([][]byte, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ks = append(ks, l.keys.At(i))
		}
		return ks
	}
}
