package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/idkit/idkit/compare/internal/engine"

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
// columns, the indexes' definitions and the sampled rows as JSON objects,
// in the order of the table's inserts.
type pgLike struct {
	key     string
	columns []pgColumn // every column, the key and generated ones included
	indexes []pgIndex
	options string // ", fillfactor=N" when the table sets it
	rows    []string
	order   engine.LikeOrder
}

// prepareLike reads the user's table on the source server
// (readPostgresLike) and writes its sample into the run's schema
// (writeLike).
func (e *Engine) prepareLike(ctx context.Context, name engine.LikeName, sample, n int) (engine.LikeTable, error) {
	src, err := ReadLike(ctx, e.sourceDSN, name, sample, n)
	if err != nil {
		return engine.LikeTable{}, err
	}
	err = e.WriteLike(ctx, src, n)
	return src.Table, err
}

// WriteLike writes the sample, in the order of the table's inserts, into
// the run's schema, and makes every later Load of n keys a load into a
// copy of the table. It first makes a trial copy for every key type a
// scheme can need, with one row numbered as the loads' last, so that a
// column or index the copies cannot have fails here, before any load.
func (e *Engine) WriteLike(ctx context.Context, ls *engine.Source, n int) error {
	src, t := ls.Def.(*pgLike), &ls.Table
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w %s: postgres: %s", engine.ErrLike, ls.Name, fmt.Sprintf(format, args...))
	}
	sampleTable := e.schema + ".like_sample"
	var defs, names []string
	for _, c := range src.columns {
		if c.name != src.key && c.generated == "" {
			q := pgx.Identifier{c.name}.Sanitize()
			defs, names = append(defs, q+" "+c.typ), append(names, q)
		}
	}
	defs = append(defs, "idkit_row bigint")
	if _, err := e.conn.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", sampleTable, strings.Join(defs, ", "))); err != nil {
		return fail("create the sample table on the scratch server (every column's type must exist there): %v", err)
	}
	if err := e.writeSample(ctx, sampleTable, names, src.rows); err != nil {
		return fail("write the sample: %v", err)
	}
	if _, err := e.conn.Exec(ctx, "CREATE UNIQUE INDEX ON "+sampleTable+" (idkit_row)"); err != nil {
		return fail("number the sample: %v", err)
	}

	shape := &engine.Shape[*pgLike]{Name: ls.Name, Key: pgx.Identifier{src.key}.Sanitize(), Sample: len(src.rows), N: n, Def: src}
	frac := fmt.Sprintf("((n.r * %d) %% %d)::float8 / %d", shape.Sample, n, n)
	for _, c := range src.columns {
		if c.name == src.key || c.generated != "" {
			continue
		}
		q := pgx.Identifier{c.name}.Sanitize()
		v := "s." + q
		switch {
		case c.unique:
			var err error
			if v, err = pgUniqueValue(q, c.typ, c.category, c.typname); err != nil {
				return fail("%v", err)
			}
			t.Notes = append(t.Notes, fmt.Sprintf("column %s is in a unique index: each row gets a value of its own made from its row number", c.name))
		case c.name == src.order.Time && shape.Sample < n:
			// A sampled row fills several rows in a row: the time column
			// goes on towards the next sampled row's.
			if _, err := e.conn.Exec(ctx, fmt.Sprintf(`ALTER TABLE %[1]s ADD COLUMN idkit_next %[2]s;
				UPDATE %[1]s s SET idkit_next = coalesce(x.next, s.%[3]s)
				FROM (SELECT idkit_row, lead(%[3]s) OVER (ORDER BY idkit_row) AS next FROM %[1]s) x WHERE x.idkit_row = s.idkit_row`,
				sampleTable, c.typ, q)); err != nil {
				return fail("the sample's next %s: %v", c.name, err)
			}
			if c.typname == "date" {
				v = fmt.Sprintf("coalesce(s.%[1]s + floor((s.idkit_next - s.%[1]s) * %[2]s)::integer, s.%[1]s)", q, frac)
			} else {
				v = fmt.Sprintf("coalesce(s.%[1]s + (s.idkit_next - s.%[1]s) * %[2]s, s.%[1]s)", q, frac)
			}
		}
		shape.Columns = append(shape.Columns, q)
		shape.Values = append(shape.Values, v)
	}
	// A VACUUM sets the sample's hint bits: the first load to read its
	// rows would dirty every page of it otherwise, and count them against
	// its scheme.
	if _, err := e.conn.Exec(ctx, "VACUUM ANALYZE "+sampleTable); err != nil {
		return fail("vacuum the sample: %v", err)
	}
	e.like = shape
	for _, keyType := range []string{"bigint", "uuid", "bytea"} {
		if err := e.trialCopy(ctx, keyType, n); err != nil {
			e.like = nil
			return fail("a copy with a %s key (the key type of some schemes) fails: %v", keyType, err)
		}
	}
	t.Notes = append(t.Notes, engine.ReuseNote(shape.Sample, n, src.order.Time))
	t.Notes = append(t.Notes, engine.LikeNotes...)
	t.OnSource = e.polite
	if e.polite && !e.pageinspect {
		t.Unmeasured = map[string]string{"pages": "pages left out: without --scratch the run forces no checkpoint on the source and counts the pages each interval changes from their LSNs with pageinspect, which is not there or not for this user (CREATE EXTENSION pageinspect, and a superuser); --scratch measures the pages dirtied"}
	}
	return nil
}

// ReadLike reads the table's definition, its figures today and a
// uniform sample of its rows from the source server, in one transaction
// that is REPEATABLE READ and READ ONLY: one snapshot, no write, and no
// lock but the ACCESS SHARE lock of any read, waited for at most
// LockTimeout. It needs SELECT on the table and USAGE on its schema;
// pgstatindex's leaf figures are read where the source lets the user run
// it, and left out otherwise. The sample comes back in the order of the
// table's inserts (orderSample).
func ReadLike(ctx context.Context, dsn string, name engine.LikeName, sample, n int) (*engine.Source, error) {
	ls := &engine.Source{Name: name, Table: engine.LikeTable{Engine: engine.Postgres, Name: name.String()}}
	fail := func(format string, args ...any) (*engine.Source, error) {
		return nil, fmt.Errorf("%w %s: postgres: %s", engine.ErrLike, name, fmt.Sprintf(format, args...))
	}
	conn, err := Connect(ctx, dsn)
	if err != nil {
		return fail("connect to the source: %v", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fail("begin a read-only snapshot: %v", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	for _, step := range []func(context.Context, pgx.Tx, *engine.Source) error{pgReadDefinition, pgReadFigures, pgReadKeyRange} {
		if err := step(ctx, tx, ls); err != nil {
			return nil, err
		}
	}
	if err := pgReadSample(ctx, tx, ls, sample, n); err != nil {
		return nil, err
	}
	return ls, nil
}

// pgFail is the error of a step of readPostgresLike: what failed, and a
// word on a lock that the read waited for too long.
func pgFail(ls *engine.Source, what string, err error) error {
	msg := fmt.Sprintf("%s: %v", what, err)
	if note := engine.LockWaitNote(err); note != "" {
		msg += "; " + note
	}
	return fmt.Errorf("%w %s: postgres: %s", engine.ErrLike, ls.Name, msg)
}

// pgRefuse is the error of a table a --like run cannot copy.
func pgRefuse(ls *engine.Source, format string, args ...any) error {
	return fmt.Errorf("%w %s: postgres: %s", engine.ErrLike, ls.Name, fmt.Sprintf(format, args...))
}

// pgReadDefinition reads the table's kind, columns, indexes, key and the
// foreign keys that point at it, and refuses a table the copies cannot
// be made of.
func pgReadDefinition(ctx context.Context, tx pgx.Tx, ls *engine.Source) error {
	schema, table := ls.Name.Schema.Postgres(), ls.Name.Table.Postgres()
	qualified := pgx.Identifier{schema, table}.Sanitize()
	t := &ls.Table
	var kind string
	var options []string
	err := tx.QueryRow(ctx, `SELECT c.oid, c.relkind, c.reltuples, coalesce(c.reloptions, '{}')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2`, schema, table).Scan(&ls.OID, &kind, &ls.RelTuples, &options)
	if errors.Is(err, pgx.ErrNoRows) {
		return pgRefuse(ls, "no table %s", qualified)
	}
	if err != nil {
		return pgFail(ls, "read the catalog", err)
	}
	switch kind {
	case "r":
	case "p":
		return pgRefuse(ls, "%s is a partitioned table: its rows are in its partitions, each a table of its own with its own indexes; name one partition", qualified)
	case "v", "m":
		return pgRefuse(ls, "%s is a view; --like copies a table", qualified)
	default:
		return pgRefuse(ls, "%s is not a plain table (relkind %q); --like copies a table", qualified, kind)
	}
	indexes, err := pgIndexes(ctx, tx, ls.OID)
	if err != nil {
		return pgFail(ls, "read the indexes", err)
	}
	var pk *pgIndex
	for i := range indexes {
		if indexes[i].primary {
			pk = &indexes[i]
		}
	}
	switch {
	case pk == nil:
		return pgRefuse(ls, "%s has no primary key; --like needs a single-column primary key to replace", qualified)
	case len(pk.columns) != 1 || pk.hasExpr:
		return pgRefuse(ls, "%s has a composite primary key (%s); --like needs a single-column primary key to replace", qualified, strings.Join(pk.columns, ", "))
	}
	src := &pgLike{key: pk.columns[0], indexes: indexes}
	ls.Def = src
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
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, ls.OID)
	if err != nil {
		return pgFail(ls, "read the columns", err)
	}
	src.columns, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (pgColumn, error) {
		var c pgColumn
		err := row.Scan(&c.name, &c.typ, &c.category, &c.typname, &c.notNull, &c.generated, &c.keyDefault, &c.ident)
		return c, err
	})
	if err != nil {
		return pgFail(ls, "read the columns", err)
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
			return pgRefuse(ls, "unique index %q is on an expression: --like cannot make its values unique", ix.def)
		}
		for i := range src.columns {
			if src.columns[i].name != src.key && slices.Contains(ix.columns, src.columns[i].name) {
				src.columns[i].unique = true
			}
		}
	}
	if err := pgReferences(ctx, tx, ls.OID, t); err != nil {
		return pgFail(ls, "read the foreign keys that point at the table", err)
	}
	return nil
}

// pgReadFigures reads the table's figures today: sizes from the catalog,
// which anyone may read, the leaf figures of pgstatindex where the user
// may run it (it reads each index once, through a small ring of buffers),
// and the key's correlation with the rows' physical order.
func pgReadFigures(ctx context.Context, tx pgx.Tx, ls *engine.Source) error {
	t := &ls.Table
	if err := tx.QueryRow(ctx, `SELECT pg_relation_size(c.oid),
		  coalesce((SELECT pg_total_relation_size(c.reltoastrelid) WHERE c.reltoastrelid <> 0), 0)
		FROM pg_class c WHERE c.oid = $1`, ls.OID).Scan(&t.TableBytes, &t.ToastBytes); err != nil {
		return pgFail(ls, "table size", err)
	}
	var statindex bool
	if err := tx.QueryRow(ctx, `SELECT coalesce(has_function_privilege(to_regprocedure('pgstatindex(regclass)'), 'EXECUTE'), false)`).Scan(&statindex); err != nil {
		return pgFail(ls, "look for pgstatindex", err)
	}
	for _, ix := range ls.Def.(*pgLike).indexes {
		f, err := pgIndexFigures(ctx, tx, ix, statindex)
		if err != nil {
			return pgFail(ls, fmt.Sprintf("index %q", ix.def), err)
		}
		t.Indexes = append(t.Indexes, f)
	}
	if !statindex {
		t.Notes = append(t.Notes, "leaf pages, density and fragmentation of the table's indexes are left out: pgstatindex (extension pgstattuple, role pg_stat_scan_tables) is not available to this user on the source")
	}
	var corr *float64
	err := tx.QueryRow(ctx, "SELECT correlation FROM pg_stats WHERE schemaname = $1 AND tablename = $2 AND attname = $3",
		ls.Name.Schema.Postgres(), ls.Name.Table.Postgres(), t.Key).Scan(&corr)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return pgFail(ls, "pg_stats", err)
	}
	t.KeyCorrelation = corr
	if corr == nil {
		t.Notes = append(t.Notes, "the key's physical order is unknown: the table has no statistics (ANALYZE it for pg_stats.correlation)")
	}
	t.Rows = int64(max(ls.RelTuples, 0))
	if ls.RelTuples < 0 { // never analyzed: assume short rows
		t.Rows = t.TableBytes / 100
	}
	return nil
}

// pgReadKeyRange reads an integer key's least and greatest values, two
// lookups through the primary key.
func pgReadKeyRange(ctx context.Context, tx pgx.Tx, ls *engine.Source) error {
	if bits, _ := engine.IntBits(ls.Table.KeyType); bits == 0 {
		return nil
	}
	key := pgx.Identifier{ls.Def.(*pgLike).key}.Sanitize()
	qualified := pgx.Identifier{ls.Name.Schema.Postgres(), ls.Name.Table.Postgres()}.Sanitize()
	if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT min(%[1]s)::bigint, max(%[1]s)::bigint FROM ONLY %[2]s", key, qualified)).
		Scan(&ls.Table.KeyMin, &ls.Table.KeyMax); err != nil {
		return pgFail(ls, "the key's range", err)
	}
	return nil
}

// pgReadSample reads a uniform sample of the table's rows, each as JSON
// with its key, time column and physical position, and puts it in the
// order of the table's inserts. TABLESAMPLE SYSTEM reads about twice the
// rows wanted, from blocks picked at random over the whole table, and the
// tool keeps a uniform choice of them (reservoir sampling). Each row
// passes through the tool; nothing is copied by the server itself.
func pgReadSample(ctx context.Context, tx pgx.Tx, ls *engine.Source, sample, n int) error {
	src, t := ls.Def.(*pgLike), &ls.Table
	qualified := pgx.Identifier{ls.Name.Schema.Postgres(), ls.Name.Table.Postgres()}.Sanitize()
	var list []string
	var times []engine.TimeCandidate
	for _, c := range src.columns {
		if c.name == src.key || c.generated != "" {
			continue
		}
		list = append(list, "idkit_t."+pgx.Identifier{c.name}.Sanitize())
		if c.category == "D" && (c.typname == "date" || c.typname == "timestamp" || c.typname == "timestamptz") {
			indexed := slices.ContainsFunc(src.indexes, func(ix pgIndex) bool { return !ix.primary && len(ix.columns) > 0 && ix.columns[0] == c.name })
			times = append(times, engine.Candidate(c.name, indexed))
		}
	}
	timeCol, timeWhy := engine.ChooseTimeColumn(times)
	keyExpr, timeExpr := "NULL::float8", "NULL::float8"
	if bits, _ := engine.IntBits(t.KeyType); bits > 0 {
		keyExpr = "idkit_t." + pgx.Identifier{src.key}.Sanitize() + "::float8"
	}
	if timeCol != "" {
		timeExpr = "extract(epoch FROM idkit_t." + pgx.Identifier{timeCol}.Sanitize() + ")::float8"
	}
	size, note := engine.SampleSize(sample, n, t.Rows, t.TableBytes)
	t.Notes = append(t.Notes, note)
	from := "ONLY " + qualified + " AS idkit_t"
	if t.Rows > 0 && 2*float64(size) < float64(t.Rows) {
		from += fmt.Sprintf(" TABLESAMPLE SYSTEM (%g)", max(0.0001, 200*float64(size)/float64(t.Rows)))
	}
	var rows []engine.SampledRow[string]
	read := func(from string) error {
		q := fmt.Sprintf(`SELECT row_to_json(s)::text, %s, %s,
			  ((idkit_t.ctid::text::point)[0] * 65536 + (idkit_t.ctid::text::point)[1])::float8
			FROM %s, LATERAL (SELECT %s) s`, keyExpr, timeExpr, from, strings.Join(list, ", "))
		res, err := tx.Query(ctx, q)
		if err != nil {
			return err
		}
		defer res.Close()
		rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
		rows = rows[:0]
		for seen := 0; res.Next(); seen++ {
			var r engine.SampledRow[string]
			var key, at *float64
			if err := res.Scan(&r.Row, &key, &at, &r.Physical); err != nil {
				return err
			}
			r.Key, r.At = orNaN(key), orNaN(at)
			if len(rows) < size {
				rows = append(rows, r)
			} else if j := rng.IntN(seen + 1); j < size {
				rows[j] = r
			}
		}
		return res.Err()
	}
	if err := read(from); err != nil {
		return pgFail(ls, "read a sample", err)
	}
	if len(rows) == 0 && strings.Contains(from, "TABLESAMPLE") { // the sampled blocks held no rows
		if err := read("ONLY " + qualified + " AS idkit_t"); err != nil {
			return pgFail(ls, "read a sample", err)
		}
	}
	if len(rows) == 0 {
		return pgRefuse(ls, "%s is empty: --like copies the other columns from its rows", qualified)
	}
	t.Sampled = len(rows)
	t.Reuse = (n + t.Sampled - 1) / t.Sampled
	t.KeyTimeCorrelation = engine.KeyTimeCorrelation(rows)
	_, sequence := t.LocalSequence()
	src.order = engine.OrderSample(rows, t.Key, sequence, timeCol, timeWhy, false)
	t.InsertOrder = src.order.Note
	src.rows = make([]string, len(rows))
	for i, r := range rows {
		src.rows[i] = r.Row
	}
	return nil
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// writeSample inserts the sampled rows, JSON objects of the columns
// names, into the sample table in statements of at most 4 MiB, numbering
// them from 0 in their order (idkit_row).
func (e *Engine) writeSample(ctx context.Context, table string, names []string, rows []string) error {
	var sel []string
	for _, q := range names {
		sel = append(sel, "x."+q)
	}
	alias := append(slices.Clone(names), "idkit_unused", "idkit_ord")
	stmt := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM json_populate_recordset(NULL::%s, $1::json) WITH ORDINALITY AS x(%s)",
		table, strings.Join(append(slices.Clone(names), "idkit_row"), ", "), strings.Join(append(sel, "$2::bigint + x.idkit_ord - 1"), ", "),
		table, strings.Join(alias, ", "))
	var b strings.Builder
	written, pending := 0, 0
	flush := func() error {
		if b.Len() == 0 {
			return nil
		}
		b.WriteByte(']')
		_, err := e.conn.Exec(ctx, stmt, b.String(), written)
		b.Reset()
		written += pending
		pending = 0
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
		pending++
	}
	return flush()
}

// pgReferences reads the foreign keys that point at the table oid.
func pgReferences(ctx context.Context, q pgQuerier, oid uint32, t *engine.LikeTable) error {
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
func (e *Engine) trialCopy(ctx context.Context, keyType string, n int) error {
	table := "like_trial"
	defer e.conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+e.schema+"."+table)
	for _, q := range e.like.Def.copyStatements(e.schema, table, keyType) {
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
	return e.conn.QueryRow(ctx, e.likeInsert(e.schema+"."+table, keyType+"[]"), key, n-1).Scan(&plan)
}

// likeInsert is the statement that inserts a batch of keys into the copy
// table, in their order: $1 the keys, $2 the row number of the first;
// row r takes the other columns of sampled row floor(r*S/N), S the
// sample's rows and N the load's, so that a load passes through the
// sample once, in the order of the table's inserts.
func (e *Engine) likeInsert(table, array string) string {
	shape := e.like
	cols := append([]string{shape.Key}, shape.Columns...)
	vals := append([]string{"u.k"}, shape.Values...)
	return fmt.Sprintf(`EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) INSERT INTO %s (%s)
		SELECT %s FROM unnest($1::%s) WITH ORDINALITY AS u(k, i)
		CROSS JOIN LATERAL (SELECT $2::bigint + u.i - 1 AS r) n
		JOIN %s.like_sample s ON s.idkit_row = n.r * %d / %d
		ORDER BY u.i`,
		table, strings.Join(cols, ", "), strings.Join(vals, ", "), array, e.schema, shape.Sample, shape.N)
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
func pgIndexFigures(ctx context.Context, q pgQuerier, ix pgIndex, statindex bool) (engine.IndexFigures, error) {
	f := engine.IndexFigures{Name: pgIndexName(ix)}
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
// the scheme's, each row filled from the sample, and then reads the
// copy's every index and its reads through the key. A polite engine's
// load runs again, up to engine.LikeTries times, while a checkpoint of the
// server's falls in it, whose full-page images its WAL would count.
func (e *Engine) loadLike(ctx context.Context, l engine.Load) (engine.Figures, error) {
	shape := e.like
	colType, array := postgresColumn(l)
	out := engine.Figures{Engine: engine.Postgres, ColumnType: colType, Metrics: map[string]float64{}}
	table := e.schema + "." + l.Table
	fail := func(what string, err error) (engine.Figures, error) {
		return out, fmt.Errorf("compare: postgres: %s %s (like %s): %w", what, table, shape.Name, err)
	}
	defer e.conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	var x explained
	var oid uint32
	tries := 0
	for {
		tries++
		if _, err := e.conn.Exec(ctx, "DROP TABLE IF EXISTS "+table); err != nil {
			return fail("drop the last try's copy", err)
		}
		for _, q := range shape.Def.copyStatements(e.schema, l.Table, colType) {
			if _, err := e.conn.Exec(ctx, q); err != nil {
				return fail("copy the table", err)
			}
		}
		var rels []uint32
		var key uint32
		if err := e.conn.QueryRow(ctx, `SELECT $1::regclass::oid, array(
			  SELECT c.oid FROM pg_class c WHERE c.oid = $1::regclass
			  UNION ALL SELECT t.reltoastrelid FROM pg_class t WHERE t.oid = $1::regclass AND t.reltoastrelid <> 0
			  UNION ALL SELECT i.indexrelid FROM pg_index i WHERE i.indrelid = $1::regclass
			     OR i.indrelid = (SELECT t.reltoastrelid FROM pg_class t WHERE t.oid = $1::regclass)),
			  coalesce((SELECT i.indexrelid FROM pg_index i WHERE i.indrelid = $1::regclass AND i.indisprimary), 0)`, table).Scan(&oid, &rels, &key); err != nil {
			return fail("find the copy", err)
		}
		var err error
		x, err = e.explainLoad(ctx, l, e.likeInsert(table, array), func(lo, hi int) []any { return []any{pgKeys(l, colType, lo, hi), lo} }, rels, key)
		if err != nil {
			return fail("load", err)
		}
		if !e.polite || !x.checkpointed() || tries == engine.LikeTries {
			break
		}
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
	n := l.Keys.N()
	m := out.Metrics
	var secondary, all float64
	var primary string
	for _, ix := range indexes {
		f, err := pgIndexFigures(ctx, e.conn, ix, true)
		if err != nil {
			return fail("index figures", err)
		}
		out.Indexes = append(out.Indexes, f)
		all += float64(f.Bytes)
		if ix.primary {
			if err := e.conn.QueryRow(ctx, "SELECT $1::oid::regclass::text", ix.oid).Scan(&primary); err != nil {
				return fail("name the primary key", err)
			}
			m["index_bytes"] = float64(f.Bytes)
			m["leaf_pages"] = float64(f.LeafPages)
			m["leaf_pages_per_1000"] = engine.PerThousand(float64(f.LeafPages), n)
			m["leaf_density"] = f.LeafDensity
			if f.Fragmentation != nil {
				m["leaf_fragmentation"] = *f.Fragmentation
			}
		} else {
			secondary += float64(f.Bytes)
		}
	}
	x.metrics(m, n, e.polite)
	if e.polite {
		m["tries"] = float64(tries)
	}
	m["index_bytes_per_key"] = engine.PerKey(m["index_bytes"], n)
	m["secondary_index_bytes"] = secondary
	m["all_index_bytes"] = all
	m["all_index_bytes_per_key"] = engine.PerKey(all, n)
	m["heap_bytes"] = float64(heapBytes)
	m["toast_bytes"] = float64(toastBytes)
	column := shape.Key
	if len(shape.Columns) > 0 {
		column = shape.Columns[0]
	}
	if err := e.pgReads(ctx, l, colType, table, primary, shape.Key, column, m); err != nil {
		return fail("reads", err)
	}
	return out, nil
}

// pgKeys returns keys lo..hi-1 of l as the array the column type takes.
func pgKeys(l engine.Load, colType string, lo, hi int) any {
	switch colType {
	case "bigint":
		ks := make([]int64, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ks = append(ks, l.Int64At(i))
		}
		return ks
	case "uuid":
		ks := make([][16]byte, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ks = append(ks, [16]byte(l.Keys.At(i)))
		}
		return ks
	default:
		ks := make([][]byte, 0, hi-lo)
		for i := lo; i < hi; i++ {
			ks = append(ks, l.Keys.At(i))
		}
		return ks
	}
}
