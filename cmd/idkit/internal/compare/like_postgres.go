package compare

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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

// pgColumn is one column of the user's table, as its copies declare it.
type pgColumn struct {
	name, typ         string // typ as format_type writes it
	category, typname string // pg_type's typcategory and typname
	notNull           bool
	generated         string // a stored generated column's expression, or ""
	unique            bool   // in a unique index other than the primary key
	keyDefault, ident string // the key's default expression and attidentity
}

// pgLike is what a run keeps of the user's table for its copies: the
// columns, the indexes' definitions and the sampled rows as JSON objects.
type pgLike struct {
	key     string
	columns []pgColumn // every column, the key and generated ones included
	indexes []pgIndex
	options string // ", fillfactor=N" when the table sets it
	rows    []string
}

// prepareLike reads the user's table on the source server in one
// read-only snapshot (readPostgresLike), writes the sample into the run's
// schema, and makes every later Load a load into a copy of the table. It
// first makes a trial copy for every key type a scheme can need, with one
// row numbered as the loads' last, so that a column or index the copies
// cannot have fails here, before any load.
func (e *postgresEngine) prepareLike(ctx context.Context, name LikeName, sample, n int) (LikeTable, error) {
	t, src, err := readPostgresLike(ctx, e.sourceDSN, name, sample, n)
	if err != nil {
		return t, err
	}
	fail := func(format string, args ...any) (LikeTable, error) {
		return t, fmt.Errorf("%w %s: postgres: %s", ErrLike, name, fmt.Sprintf(format, args...))
	}
	sampleTable := e.schema + ".like_sample"
	var defs []string
	for _, c := range src.columns {
		if c.name != src.key && c.generated == "" {
			defs = append(defs, pgx.Identifier{c.name}.Sanitize()+" "+c.typ)
		}
	}
	if _, err := e.conn.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", sampleTable, strings.Join(defs, ", "))); err != nil {
		return fail("create the sample table on the scratch server (every column's type must exist there): %v", err)
	}
	if err := e.writeSample(ctx, sampleTable, src.rows); err != nil {
		return fail("write the sample: %v", err)
	}
	for _, q := range []string{"ALTER TABLE " + sampleTable + " ADD COLUMN idkit_row bigserial", "CREATE UNIQUE INDEX ON " + sampleTable + " (idkit_row)"} {
		if _, err := e.conn.Exec(ctx, q); err != nil {
			return fail("number the sample: %v", err)
		}
	}

	shape := &likeShape{name: name, key: pgx.Identifier{src.key}.Sanitize(), sample: len(src.rows), pg: src}
	for _, c := range src.columns {
		if c.name == src.key || c.generated != "" {
			continue
		}
		q := pgx.Identifier{c.name}.Sanitize()
		v := "s." + q
		if c.unique {
			if v, err = pgUniqueValue(q, c.typ, c.category, c.typname); err != nil {
				return fail("%v", err)
			}
			t.Notes = append(t.Notes, fmt.Sprintf("column %s is in a unique index: each row gets a value of its own made from its row number", c.name))
		}
		shape.columns = append(shape.columns, q)
		shape.values = append(shape.values, v)
	}
	e.like = shape
	for _, keyType := range []string{"bigint", "uuid", "bytea"} {
		if err := e.trialCopy(ctx, keyType, n); err != nil {
			e.like = nil
			return fail("a copy with a %s key (the key type of some schemes) fails: %v", keyType, err)
		}
	}
	t.Notes = append(t.Notes, likeNotes...)
	return t, nil
}

// readPostgresLike reads the table's definition, its figures today and a
// uniform sample of its rows from the source server, in one transaction
// that is REPEATABLE READ and READ ONLY: one snapshot, no write, and no
// lock but the ACCESS SHARE lock of any read. It needs SELECT on the
// table and USAGE on its schema; pgstatindex's leaf figures are read
// where the source lets the user run it, and left out otherwise.
func readPostgresLike(ctx context.Context, dsn string, name LikeName, sample, n int) (LikeTable, *pgLike, error) {
	schema, table := name.Schema.postgres(), name.Table.postgres()
	qualified := pgx.Identifier{schema, table}.Sanitize()
	t := LikeTable{Engine: EnginePostgres, Name: name.String()}
	fail := func(format string, args ...any) (LikeTable, *pgLike, error) {
		return t, nil, fmt.Errorf("%w %s: postgres: %s", ErrLike, name, fmt.Sprintf(format, args...))
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fail("connect to the source: %v", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fail("begin a read-only snapshot: %v", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))

	var oid uint32
	var kind string
	var reltuples float64
	var options []string
	err = tx.QueryRow(ctx, `SELECT c.oid, c.relkind, c.reltuples, coalesce(c.reloptions, '{}')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`, schema, table).Scan(&oid, &kind, &reltuples, &options)
	if errors.Is(err, pgx.ErrNoRows) {
		return fail("no table %s", qualified)
	}
	if err != nil {
		return fail("read the catalog: %v", err)
	}
	switch kind {
	case "r":
	case "p":
		return fail("%s is a partitioned table: its rows are in its partitions, each a table of its own with its own indexes; name one partition", qualified)
	default:
		return fail("%s is not a plain table (relkind %q)", qualified, kind)
	}
	indexes, err := pgIndexes(ctx, tx, oid)
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
	src := &pgLike{key: pk.columns[0], indexes: indexes}
	t.Key = src.key
	for _, o := range options {
		if strings.HasPrefix(o, "fillfactor=") {
			src.options = ", " + o
		}
	}

	rows, err := tx.Query(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod), t.typcategory, t.typname, a.attnotnull,
		  CASE WHEN a.attgenerated = 's' THEN pg_get_expr(d.adbin, d.adrelid) ELSE '' END,
		  CASE WHEN a.attgenerated = '' THEN coalesce(pg_get_expr(d.adbin, d.adrelid), '') ELSE '' END, a.attidentity::text
		FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, oid)
	if err != nil {
		return fail("read the columns: %v", err)
	}
	for rows.Next() {
		var c pgColumn
		if err := rows.Scan(&c.name, &c.typ, &c.category, &c.typname, &c.notNull, &c.generated, &c.keyDefault, &c.ident); err != nil {
			rows.Close()
			return fail("read the columns: %v", err)
		}
		src.columns = append(src.columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail("read the columns: %v", err)
	}
	for i, c := range src.columns {
		if c.name != src.key {
			continue
		}
		t.KeyType = c.typ
		if c.category == "N" && strings.HasPrefix(c.typname, "int") {
			switch {
			case c.ident != "":
				t.KeySequence = "identity"
			case strings.HasPrefix(c.keyDefault, "nextval("):
				t.KeySequence = "serial"
			}
		}
		src.columns[i].keyDefault = ""
	}
	for _, ix := range indexes {
		if !ix.unique || ix.primary {
			continue
		}
		if ix.hasExpr {
			return fail("unique index %q is on an expression: --like cannot make its values unique", ix.def)
		}
		for i := range src.columns {
			if src.columns[i].name != src.key && slices.Contains(ix.columns, src.columns[i].name) {
				src.columns[i].unique = true
			}
		}
	}
	if err := pgReferences(ctx, tx, oid, &t); err != nil {
		return fail("read the foreign keys that point at the table: %v", err)
	}

	// The table's figures today: sizes from the catalog, which anyone may
	// read, and the leaf figures of pgstatindex where the user may run it
	// (it reads each index once, through a small ring of buffers).
	if err := tx.QueryRow(ctx, `SELECT pg_relation_size(c.oid),
		  coalesce((SELECT pg_total_relation_size(c.reltoastrelid) WHERE c.reltoastrelid <> 0), 0)
		FROM pg_class c WHERE c.oid = $1`, oid).Scan(&t.TableBytes, &t.ToastBytes); err != nil {
		return fail("table size: %v", err)
	}
	var statindex bool
	if err := tx.QueryRow(ctx, `SELECT coalesce(has_function_privilege(to_regprocedure('pgstatindex(regclass)'), 'EXECUTE'), false)`).Scan(&statindex); err != nil {
		return fail("look for pgstatindex: %v", err)
	}
	for _, ix := range indexes {
		f, err := pgIndexFigures(ctx, tx, ix, statindex)
		if err != nil {
			return fail("index %q: %v", ix.def, err)
		}
		t.Indexes = append(t.Indexes, f)
	}
	if !statindex {
		t.Notes = append(t.Notes, "leaf pages, density and fragmentation of the table's indexes are left out: pgstatindex (extension pgstattuple, role pg_stat_scan_tables) is not available to this user on the source")
	}
	var corr *float64
	err = tx.QueryRow(ctx, "SELECT correlation FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = $3",
		schema, table, t.Key).Scan(&corr)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fail("pg_stats: %v", err)
	}
	t.KeyCorrelation = corr
	if corr == nil {
		t.Notes = append(t.Notes, "the key's physical order is unknown: the table has no statistics (ANALYZE it for pg_stats.correlation)")
	}
	t.Rows = int64(max(reltuples, 0))

	// The sample: TABLESAMPLE SYSTEM reads about twice the rows wanted,
	// from blocks picked at random over the whole table, and the tool
	// keeps a uniform choice of them (reservoir sampling). Each row passes
	// through the tool as JSON; nothing is copied by the server itself.
	estimate := reltuples
	if estimate <= 0 {
		estimate = float64(t.TableBytes) / 100 // never analyzed: assume short rows
	}
	size, note := likeSampleSize(sample, n, int64(estimate), t.TableBytes)
	t.Notes = append(t.Notes, note)
	var list []string
	for _, c := range src.columns {
		if c.name != src.key && c.generated == "" {
			list = append(list, pgx.Identifier{c.name}.Sanitize())
		}
	}
	from := "ONLY " + qualified
	if estimate > 0 && 2*float64(size) < estimate {
		from += fmt.Sprintf(" TABLESAMPLE SYSTEM (%g)", max(0.0001, 200*float64(size)/estimate))
	}
	read := func(from string) error {
		rows, err := tx.Query(ctx, fmt.Sprintf("SELECT row_to_json(s)::text FROM (SELECT %s FROM %s) s", strings.Join(list, ", "), from))
		if err != nil {
			return err
		}
		defer rows.Close()
		rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		src.rows = src.rows[:0]
		for seen := 0; rows.Next(); seen++ {
			var row string
			if err := rows.Scan(&row); err != nil {
				return err
			}
			if len(src.rows) < size {
				src.rows = append(src.rows, row)
			} else if j := rng.IntN(seen + 1); j < size {
				src.rows[j] = row
			}
		}
		return rows.Err()
	}
	if err := read(from); err != nil {
		return fail("read a sample: %v", err)
	}
	if len(src.rows) == 0 && from != "ONLY "+qualified { // the sampled blocks held no rows
		if err := read("ONLY " + qualified); err != nil {
			return fail("read a sample: %v", err)
		}
	}
	if len(src.rows) == 0 {
		return fail("%s is empty: --like copies the other columns from its rows", qualified)
	}
	t.Sampled = len(src.rows)
	t.Reuse = (n + t.Sampled - 1) / t.Sampled
	return t, src, nil
}

// writeSample inserts the sampled rows, JSON objects, into the sample
// table in statements of at most 4 MiB.
func (e *postgresEngine) writeSample(ctx context.Context, table string, rows []string) error {
	stmt := fmt.Sprintf("INSERT INTO %s SELECT * FROM json_populate_recordset(NULL::%s, $1::json)", table, table)
	var b strings.Builder
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		b.WriteByte(']')
		_, err := e.conn.Exec(ctx, stmt, b.String())
		b.Reset()
		return err
	}
	for _, row := range rows {
		if b.Len() > 4<<20 {
			if err := flush(); err != nil {
				return err
			}
		}
		if b.Len() == 0 {
			b.WriteByte('[')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	return flush()
}

// pgReferences reads the foreign keys that point at the table oid.
func pgReferences(ctx context.Context, q pgQuerier, oid uint32, t *LikeTable) error {
	rows, err := q.Query(ctx, `SELECT format('%s(%s)', c.conrelid::regclass,
		  (SELECT string_agg(a.attname, ', ' ORDER BY k.ord) FROM unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
		   JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum))
		FROM pg_constraint c WHERE c.contype = 'f' AND c.confrelid = $1 ORDER BY 1`, oid)
	if err != nil {
		return err
	}
	refs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	t.ReferencedBy = refs
	return err
}

// copyStatements returns the statements that create a copy of the user's
// table, schema.table, with a key column of type keyType: its columns,
// generated ones computed as the server computes them, and its indexes,
// expression and partial ones included. Foreign keys, triggers, check
// constraints and the columns' defaults are not copied.
func (src *pgLike) copyStatements(schema, table, keyType string) []string {
	qualified := schema + "." + pgx.Identifier{table}.Sanitize()
	var cols []string
	for _, c := range src.columns {
		def := pgx.Identifier{c.name}.Sanitize() + " "
		switch {
		case c.name == src.key:
			def += keyType + " NOT NULL"
		case c.generated != "":
			def += c.typ + " GENERATED ALWAYS AS (" + c.generated + ") STORED"
		default:
			def += c.typ
			if c.notNull {
				def += " NOT NULL"
			}
		}
		cols = append(cols, def)
	}
	out := []string{fmt.Sprintf("CREATE TABLE %s (%s) WITH (autovacuum_enabled = false%s)", qualified, strings.Join(cols, ", "), src.options)}
	for i, ix := range src.indexes {
		name := pgx.Identifier{fmt.Sprintf("%s_%d", table, i)}.Sanitize()
		unique := ""
		if ix.unique {
			unique = "UNIQUE "
		}
		out = append(out, fmt.Sprintf("CREATE %sINDEX %s ON %s USING %s", unique, name, qualified, indexMethodAndKeys(ix.def)))
		if ix.primary {
			out = append(out, fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY USING INDEX %s", qualified, name))
		}
	}
	return out
}

// indexMethodAndKeys returns what follows " USING " in an index's
// definition: its method, keys, options and predicate.
func indexMethodAndKeys(def string) string {
	if i := strings.Index(def, " USING "); i >= 0 {
		return def[i+len(" USING "):]
	}
	return def
}

// trialCopy creates a copy with a keyType key, inserts one row numbered as
// the loads' last (n-1), and drops it.
func (e *postgresEngine) trialCopy(ctx context.Context, keyType string, n int) error {
	table := "like_trial"
	defer e.conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+e.schema+"."+table)
	for _, q := range e.like.pg.copyStatements(e.schema, table, keyType) {
		if _, err := e.conn.Exec(ctx, q); err != nil {
			return err
		}
	}
	var key any
	switch keyType {
	case "bigint":
		key = []int64{1}
	case "uuid":
		key = [][16]byte{{15: 1}}
	default:
		key = [][]byte{{1}}
	}
	var plan []byte
	return e.conn.QueryRow(ctx, e.likeInsert(e.schema+"."+table, keyType+"[]"), key, n-1, e.like.sample).Scan(&plan)
}

// likeInsert is the statement that inserts a batch of keys into the copy
// table: $1 the keys, $2 the row number of the first, $3 the sample's
// size; each row takes the other columns of sampled row $2+i mod $3.
func (e *postgresEngine) likeInsert(table, array string) string {
	shape := e.like
	cols := append([]string{shape.key}, shape.columns...)
	vals := append([]string{"u.k"}, shape.values...)
	return fmt.Sprintf(`EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) INSERT INTO %s (%s)
		SELECT %s FROM unnest($1::%s) WITH ORDINALITY AS u(k, i)
		CROSS JOIN LATERAL (SELECT $2::bigint + u.i - 1 AS r) n
		JOIN %s.like_sample s ON s.idkit_row = n.r %% $3 + 1`,
		table, strings.Join(cols, ", "), strings.Join(vals, ", "), array, e.schema)
}

// pgUniqueValue returns an expression of column type typ that is unique
// per row number n.r: the number in front of the sampled text, the number
// itself, a day or a microsecond per row, or a UUID or bytes made from it.
func pgUniqueValue(col, typ, category, typname string) (string, error) {
	switch {
	case category == "S":
		return fmt.Sprintf("(n.r::text || '-' || coalesce(s.%s::text, ''))::%s", col, typ), nil
	case category == "N":
		return fmt.Sprintf("n.r::%s", typ), nil
	case typname == "date":
		return "'2000-01-01'::date + n.r::integer", nil
	case category == "D":
		return fmt.Sprintf("('2000-01-01'::timestamptz + n.r * interval '1 microsecond')::%s", typ), nil
	case category == "T":
		return fmt.Sprintf("(n.r * interval '1 microsecond')::%s", typ), nil
	case typname == "uuid":
		return "md5(n.r::text)::uuid", nil
	case typname == "bytea":
		return "int8send(n.r)", nil
	}
	return "", fmt.Errorf("column %s of type %s is in a unique index: --like can make text, numbers, dates, times, intervals, UUIDs and bytes unique, not %s", col, typ, typ)
}

// pgQuerier is a connection or a transaction.
type pgQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// pgIndexes returns the indexes of the table oid.
func pgIndexes(ctx context.Context, q pgQuerier, oid uint32) ([]pgIndex, error) {
	rows, err := q.Query(ctx, `SELECT i.indexrelid, pg_get_indexdef(i.indexrelid), i.indisprimary, i.indisunique,
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

// pgIndexFigures reads an index's size and, for a B-tree when statindex
// says pgstatindex may be run, its leaf figures.
func pgIndexFigures(ctx context.Context, q pgQuerier, ix pgIndex, statindex bool) (IndexFigures, error) {
	f := IndexFigures{Name: pgIndexName(ix)}
	if err := q.QueryRow(ctx, "SELECT pg_relation_size($1)", ix.oid).Scan(&f.Bytes); err != nil {
		return f, err
	}
	if !ix.btree || !statindex {
		return f, nil
	}
	var density, frag float64
	if err := q.QueryRow(ctx, "SELECT leaf_pages, avg_leaf_density, leaf_fragmentation FROM pgstatindex($1::regclass)", ix.oid).
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
	b.WriteString(strings.TrimPrefix(indexMethodAndKeys(ix.def), "btree "))
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
	fail := func(what string, err error) (EngineLoad, error) {
		return out, fmt.Errorf("compare: postgres: %s %s (like %s): %w", what, table, shape.name, err)
	}
	defer e.conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	for _, q := range shape.pg.copyStatements(e.schema, l.table, colType) {
		if _, err := e.conn.Exec(ctx, q); err != nil {
			return fail("copy the table", err)
		}
	}
	var oid uint32
	if err := e.conn.QueryRow(ctx, "SELECT $1::regclass::oid", table).Scan(&oid); err != nil {
		return fail("find the copy", err)
	}
	x, err := e.explainLoad(ctx, l, e.likeInsert(table, array), func(lo, hi int) []any { return []any{pgKeys(l, colType, lo, hi), lo, shape.sample} })
	if err != nil {
		return fail("load", err)
	}
	var heapBytes, toastBytes int64
	if err := e.conn.QueryRow(ctx, `SELECT pg_relation_size(c.oid),
		  coalesce((SELECT pg_total_relation_size(c.reltoastrelid) WHERE c.reltoastrelid <> 0), 0)
		FROM pg_class c WHERE c.oid = $1`, oid).Scan(&heapBytes, &toastBytes); err != nil {
		return fail("table size", err)
	}
	indexes, err := pgIndexes(ctx, e.conn, oid)
	if err != nil {
		return fail("read the indexes", err)
	}
	n := l.keys.N()
	m := out.Metrics
	var secondary, all float64
	for _, ix := range indexes {
		f, err := pgIndexFigures(ctx, e.conn, ix, true)
		if err != nil {
			return fail("index figures", err)
		}
		out.Indexes = append(out.Indexes, f)
		all += float64(f.Bytes)
		if ix.primary {
			m["index_bytes"] = float64(f.Bytes)
			m["leaf_pages"] = float64(f.LeafPages)
			m["leaf_pages_per_1000"] = perThousand(float64(f.LeafPages), n)
			m["leaf_density"] = f.LeafDensity
			if f.Fragmentation != nil {
				m["leaf_fragmentation"] = *f.Fragmentation
			}
		} else {
			secondary += float64(f.Bytes)
		}
	}
	x.metrics(m, n, e.polite)
	m["index_bytes_per_key"] = perKey(m["index_bytes"], n)
	m["secondary_index_bytes"] = secondary
	m["all_index_bytes"] = all
	m["all_index_bytes_per_key"] = perKey(all, n)
	m["heap_bytes"] = float64(heapBytes)
	m["toast_bytes"] = float64(toastBytes)
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
