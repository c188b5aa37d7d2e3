package innodb

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/idkit/idkit/compare/internal/engine"
)

// Ident quotes an identifier for MariaDB/MySQL.
func Ident(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// Index is one index of a table as information_schema describes it.
type Index struct {
	Name    string
	unique  bool
	btree   bool // a B-tree (InnoDB) or LSM tree (MyRocks) index, not full-text or spatial
	columns []string
}

// DisplayName says what the index is on, as pgIndexName does.
func (ix Index) DisplayName() string {
	on := "(" + strings.Join(ix.columns, ", ") + ")"
	switch {
	case ix.Name == "PRIMARY":
		return "primary key " + on
	case ix.unique:
		return "unique " + on
	case !ix.btree:
		return "fulltext or spatial " + on
	}
	return on
}

// myColumn is a column of the user's table that the loads fill from the
// sample.
type myColumn struct {
	name, typ, dataType string // COLUMN_TYPE and DATA_TYPE
	charset, collation  string
	maxLen              int64
	unique              bool // in a unique index other than the primary key
}

// Like is what a run keeps of the user's table for its copies: its
// definition as SHOW CREATE TABLE gives it, its indexes, the columns the
// loads fill and the sampled rows, in the order of the table's inserts.
type Like struct {
	key     string
	create  string
	indexes []Index
	columns []myColumn
	rows    [][]any
	order   engine.LikeOrder
}

// prepareLike reads the user's table on the source server (readMySQLLike)
// and writes its sample into the run's database (writeLike).
func (e *Engine) prepareLike(ctx context.Context, name engine.LikeName, sample, n int) (engine.LikeTable, error) {
	src, err := ReadLike(ctx, e.sourceDSN, name, sample, n)
	if err != nil {
		return engine.LikeTable{}, err
	}
	err = e.WriteLike(ctx, src, n)
	return src.Table, err
}

// WriteLike writes the sample into the run's database and makes every
// later Load of n keys a load into a copy of the table (writeMySQLLike).
func (e *Engine) WriteLike(ctx context.Context, ls *engine.Source, n int) error {
	shape, err := WriteLike(ctx, e.conn, e.database, ls, n, func(table, keyType string) (string, error) {
		return ls.Def.(*Like).CopyStatement(table, keyType, "")
	})
	if err != nil {
		return err
	}
	e.like = shape
	t := &ls.Table
	t.OnSource = e.polite
	if e.polite {
		t.Unmeasured = map[string]string{
			"pages": "pages changed per flush interval left out: without --scratch the run flushes nothing on the source and scans no buffer pool there (INNODB_BUFFER_PAGE, which on a large pool stalls the server); --scratch counts them",
			"log":   "redo left out: without --scratch the run reads no server-wide counter on the source, where every other session's writes move it; --scratch measures it, again while another session writes",
		}
	}
	return nil
}

// WriteLike writes the sample, in the order of the table's inserts,
// into the InnoDB table like_sample of database on conn, and returns the
// shape of the loads into copies of the table, after a trial copy (made
// by copyStatement) for each key type with one row numbered as the
// loads' last.
func WriteLike(ctx context.Context, conn *sql.Conn, database string, ls *engine.Source, n int, copyStatement func(table, keyType string) (string, error)) (*engine.Shape[*Like], error) {
	src, t := ls.Def.(*Like), &ls.Table
	fail := func(format string, args ...any) (*engine.Shape[*Like], error) {
		return nil, fmt.Errorf("%w %s: mysql: %s", engine.ErrLike, ls.Name, fmt.Sprintf(format, args...))
	}
	defs := []string{"idkit_row BIGINT NOT NULL PRIMARY KEY"}
	for _, c := range src.columns {
		defs = append(defs, c.definition(Ident(c.name)))
	}
	sampleTable := database + ".like_sample"
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("CREATE TABLE %s (%s) ENGINE=InnoDB", sampleTable, strings.Join(defs, ", "))); err != nil {
		return fail("create the sample table: %v", err)
	}
	if err := writeMySQLSample(ctx, conn, sampleTable, src.rows); err != nil {
		return fail("write the sample: %v", err)
	}
	shape := &engine.Shape[*Like]{Name: ls.Name, Key: Ident(src.key), Sample: len(src.rows), N: n, Def: src}
	frac := fmt.Sprintf("((j.r * %d) MOD %d) / %d", shape.Sample, n, n)
	for _, c := range src.columns {
		q := Ident(c.name)
		v := "s." + q
		switch {
		case c.unique:
			var err error
			if v, err = mysqlUniqueValue(q, c.typ, c.dataType, c.maxLen); err != nil {
				return fail("%v", err)
			}
			t.Notes = append(t.Notes, fmt.Sprintf("column %s is in a unique index: each row gets a value of its own made from its row number", c.name))
		case c.name == src.order.Time && shape.Sample < n:
			// A sampled row fills several rows in a row: the time column
			// goes on towards the next sampled row's.
			for _, stmt := range []string{
				fmt.Sprintf("ALTER TABLE %s ADD COLUMN idkit_next %s", sampleTable, c.definition("")),
				fmt.Sprintf("UPDATE %[1]s s JOIN %[1]s x ON x.idkit_row = s.idkit_row + 1 SET s.idkit_next = x.%[2]s", sampleTable, q),
				fmt.Sprintf("UPDATE %[1]s SET idkit_next = %[2]s WHERE idkit_next IS NULL", sampleTable, q),
			} {
				if _, err := conn.ExecContext(ctx, stmt); err != nil {
					return fail("the sample's next %s: %v", c.name, err)
				}
			}
			if c.dataType == "date" {
				v = fmt.Sprintf("COALESCE(DATE_ADD(s.%[1]s, INTERVAL FLOOR(DATEDIFF(s.idkit_next, s.%[1]s) * %[2]s) DAY), s.%[1]s)", q, frac)
			} else {
				v = fmt.Sprintf("COALESCE(TIMESTAMPADD(MICROSECOND, FLOOR(TIMESTAMPDIFF(MICROSECOND, s.%[1]s, s.idkit_next) * %[2]s), s.%[1]s), s.%[1]s)", q, frac)
			}
		}
		shape.Columns = append(shape.Columns, q)
		shape.Values = append(shape.Values, v)
	}
	src.rows = nil // in the sample table now
	for _, keyType := range []string{"BIGINT", "BINARY(16)"} {
		if err := trialCopy(ctx, conn, database, shape, copyStatement, keyType, n); err != nil {
			return fail("a copy with a %s key (the key type of some schemes) fails: %v", keyType, err)
		}
	}
	t.Notes = append(t.Notes, engine.ReuseNote(shape.Sample, n, src.order.Time))
	t.Notes = append(t.Notes, engine.LikeNotes...)
	return shape, nil
}

// definition declares the column in the sample table, as name (or with
// no name), NULL allowed.
func (c myColumn) definition(name string) string {
	def := strings.TrimSpace(name + " " + c.typ)
	if c.charset != "" {
		def += " CHARACTER SET " + c.charset + " COLLATE " + c.collation
	}
	return def + " NULL"
}

// ReadLike reads the table's definition, its figures today and a
// uniform sample of its rows from the source server, on one connection in
// one consistent, read-only snapshot: a nonlocking read, which takes no
// row lock and waits for none, whatever locks the application holds, and
// waits for a metadata lock at most LockTimeout. It needs SELECT on the
// table; the per-index sizes of the persistent statistics are read where
// the user may read mysql.innodb_index_stats. The sample comes back in
// the order of the table's inserts (orderSample).
func ReadLike(ctx context.Context, dsn string, name engine.LikeName, sample, n int) (*engine.Source, error) {
	ls := &engine.Source{Name: name, Table: engine.LikeTable{Engine: engine.MySQL, Name: name.String()}}
	db, conn, err := Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("%w %s: mysql: the source: %v", engine.ErrLike, name, err)
	}
	defer db.Close()
	defer conn.Close()
	for _, q := range []string{"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, myFail(ls, "begin a read-only snapshot", err)
		}
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "COMMIT")
	for _, step := range []func(context.Context, *sql.Conn, *engine.Source) error{myReadDefinition, myReadFigures, myReadKeyRange} {
		if err := step(ctx, conn, ls); err != nil {
			return nil, err
		}
	}
	if err := myReadSample(ctx, conn, ls, sample, n); err != nil {
		return nil, err
	}
	return ls, nil
}

// myFail is the error of a step of readMySQLLike: what failed, and a word
// on a lock that the read waited for too long.
func myFail(ls *engine.Source, what string, err error) error {
	msg := fmt.Sprintf("%s: %v", what, err)
	if note := engine.LockWaitNote(err); note != "" {
		msg += "; " + note
	}
	return fmt.Errorf("%w %s: mysql: %s", engine.ErrLike, ls.Name, msg)
}

// myRefuse is the error of a table a --like run cannot copy.
func myRefuse(ls *engine.Source, format string, args ...any) error {
	return fmt.Errorf("%w %s: mysql: %s", engine.ErrLike, ls.Name, fmt.Sprintf(format, args...))
}

// myQualified is the table's name, quoted for MariaDB/MySQL.
func myQualified(ls *engine.Source) string {
	return Ident(ls.Name.Schema.Name) + "." + Ident(ls.Name.Table.Name)
}

// myReadDefinition reads the table's kind, indexes, key, definition,
// columns and the foreign keys that point at it, and refuses a table the
// copies cannot be made of.
func myReadDefinition(ctx context.Context, conn *sql.Conn, ls *engine.Source) error {
	schema, table := ls.Name.Schema.Name, ls.Name.Table.Name
	qualified := myQualified(ls)
	t := &ls.Table
	var tableEngine, kind string
	var avgRow int64
	err := conn.QueryRowContext(ctx, `SELECT coalesce(ENGINE, ''), TABLE_TYPE, coalesce(TABLE_ROWS, 0), coalesce(DATA_LENGTH, 0), coalesce(AVG_ROW_LENGTH, 0)
		FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, schema, table).Scan(&tableEngine, &kind, &t.Rows, &t.TableBytes, &avgRow)
	if errors.Is(err, sql.ErrNoRows) {
		return myRefuse(ls, "no table %s (or no right to see it)", qualified)
	}
	if err != nil {
		return myFail(ls, "read information_schema", err)
	}
	switch {
	case kind == "VIEW":
		return myRefuse(ls, "%s is a view; --like measures InnoDB and MyRocks tables", qualified)
	case kind != "BASE TABLE":
		return myRefuse(ls, "%s is a %s, not a table; --like measures InnoDB and MyRocks tables", qualified, strings.ToLower(kind))
	case strings.EqualFold(tableEngine, "ROCKSDB"):
		t.Engine = engine.MyRocks // the copies go to MyRocks
	case !strings.EqualFold(tableEngine, "InnoDB"):
		return myRefuse(ls, "%s is a table of engine %s; --like measures InnoDB and MyRocks (ROCKSDB) tables", qualified, tableEngine)
	}
	var partitions int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.PARTITIONS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND PARTITION_NAME IS NOT NULL`, schema, table).Scan(&partitions); err != nil {
		return myFail(ls, "read information_schema", err)
	}
	if partitions > 0 {
		return myRefuse(ls, "%s is partitioned (%d partitions): the engine keeps each index per partition, which a copy of one table does not measure; --like measures unpartitioned tables", qualified, partitions)
	}
	indexes, err := Indexes(ctx, conn, schema, table)
	if err != nil {
		return myFail(ls, "read the indexes", err)
	}
	if len(indexes) == 0 || indexes[0].Name != "PRIMARY" {
		return myRefuse(ls, "%s has no primary key; --like needs a single-column primary key to replace", qualified)
	}
	if pk := indexes[0]; len(pk.columns) != 1 {
		return myRefuse(ls, "%s has a composite primary key (%s); --like needs a single-column primary key to replace", qualified, strings.Join(pk.columns, ", "))
	}
	src := &Like{key: indexes[0].columns[0], indexes: indexes}
	ls.Def = src
	t.Key = src.key
	var ignored string
	if err := conn.QueryRowContext(ctx, "SHOW CREATE TABLE "+qualified).Scan(&ignored, &src.create); err != nil {
		return myFail(ls, "read the table's definition", err)
	}

	rows, err := conn.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, coalesce(CHARACTER_MAXIMUM_LENGTH, 0),
		  coalesce(CHARACTER_SET_NAME, ''), coalesce(COLLATION_NAME, ''), EXTRA
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, schema, table)
	if err != nil {
		return myFail(ls, "read the columns", err)
	}
	for rows.Next() {
		var c myColumn
		var extra string
		if err := rows.Scan(&c.name, &c.typ, &c.dataType, &c.maxLen, &c.charset, &c.collation, &extra); err != nil {
			rows.Close()
			return myFail(ls, "read the columns", err)
		}
		extra = strings.ToUpper(extra)
		switch {
		case c.name == t.Key:
			t.KeyType = c.typ
			if strings.Contains(extra, "AUTO_INCREMENT") && strings.HasSuffix(c.dataType, "int") {
				t.KeySequence = "AUTO_INCREMENT"
			}
		case !strings.Contains(extra, "GENERATED"): // the copies compute generated columns themselves
			src.columns = append(src.columns, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return myFail(ls, "read the columns", err)
	}
	for _, ix := range indexes[1:] {
		for i := range src.columns {
			if ix.unique && slices.Contains(ix.columns, src.columns[i].name) {
				src.columns[i].unique = true
			}
		}
	}
	refs, err := conn.QueryContext(ctx, `SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME, '(', GROUP_CONCAT(COLUMN_NAME ORDER BY ORDINAL_POSITION SEPARATOR ', '), ')')
		FROM information_schema.KEY_COLUMN_USAGE WHERE REFERENCED_TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME = ?
		GROUP BY CONSTRAINT_SCHEMA, TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME ORDER BY 1`, schema, table)
	if err != nil {
		return myFail(ls, "read the foreign keys that point at the table", err)
	}
	defer refs.Close()
	for refs.Next() {
		var r string
		if err := refs.Scan(&r); err != nil {
			return myFail(ls, "read the foreign keys that point at the table", err)
		}
		t.ReferencedBy = append(t.ReferencedBy, r)
	}
	return refs.Err()
}

// myReadFigures reads the table's figures today, from the persistent
// statistics as they stand (the run does not ANALYZE the user's table),
// where the user may read them; otherwise only the clustered index's
// size.
func myReadFigures(ctx context.Context, conn *sql.Conn, ls *engine.Source) error {
	t, indexes := &ls.Table, ls.Def.(*Like).indexes
	if t.Engine == engine.MyRocks {
		return myReadRocksFigures(ctx, conn, ls)
	}
	var pageSize int64
	if err := conn.QueryRowContext(ctx, "SELECT @@innodb_page_size").Scan(&pageSize); err != nil {
		return myFail(ls, "read the page size", err)
	}
	for _, ix := range indexes {
		f := engine.IndexFigures{Name: ix.DisplayName()}
		var size, leaves int64
		err := conn.QueryRowContext(ctx, `SELECT
			  coalesce(sum(CASE stat_name WHEN 'size' THEN stat_value END), 0),
			  coalesce(sum(CASE stat_name WHEN 'n_leaf_pages' THEN stat_value END), 0)
			FROM mysql.innodb_index_stats WHERE database_name = ? AND table_name = ? AND index_name = ?`,
			ls.Name.Schema.Name, ls.Name.Table.Name, ix.Name).Scan(&size, &leaves)
		if IsDenied(err) {
			t.Indexes = []engine.IndexFigures{{Name: indexes[0].DisplayName(), Bytes: t.TableBytes}}
			t.Notes = append(t.Notes, "the secondary indexes' sizes today are left out: this user may not read mysql.innodb_index_stats on the source")
			break
		}
		if err != nil {
			return myFail(ls, "index statistics", err)
		}
		f.Bytes, f.LeafPages = size*pageSize, leaves
		t.Indexes = append(t.Indexes, f)
	}
	t.Notes = append(t.Notes, "InnoDB keeps the rows in the primary key's order: the table is its clustered index; index sizes are InnoDB's persistent statistics as they stand")
	return nil
}

// myReadRocksFigures reads a MyRocks table's figures today: each index's
// bytes in the tables (SST files) of its column family, where the user
// may read them (ROCKSDB_INDEX_FILE_MAP needs PROCESS); otherwise the
// table's size alone. Rows still in a memtable are not in them.
func myReadRocksFigures(ctx context.Context, conn *sql.Conn, ls *engine.Source) error {
	t := &ls.Table
	sizes, err := RocksIndexBytes(ctx, conn, ls.Name.Schema.Name, ls.Name.Table.Name)
	if err != nil {
		return myFail(ls, "read the indexes' sizes", err)
	}
	for _, ix := range ls.Def.(*Like).indexes {
		t.Indexes = append(t.Indexes, engine.IndexFigures{Name: ix.DisplayName(), Bytes: sizes[ix.Name]})
	}
	if len(sizes) == 0 {
		t.Indexes = []engine.IndexFigures{{Name: ls.Def.(*Like).indexes[0].DisplayName(), Bytes: t.TableBytes}}
		t.Notes = append(t.Notes, "the indexes' sizes today are left out: this user may not read information_schema.ROCKSDB_INDEX_FILE_MAP on the source (it needs PROCESS), or the table's rows are all in memtables")
	}
	t.Notes = append(t.Notes, "MyRocks keeps the rows in the primary key's order in an LSM tree; index sizes are the bytes of each index's keys and values in the column family's tables before compression (ROCKSDB_INDEX_FILE_MAP's DATA_SIZE), rows in memtables not counted: the copies' are counted so too, so that a compressed table and the copies' uncompressed column family compare like for like; the table's own size is its files' on disk, after compression (information_schema.TABLES)")
	return nil
}

// RocksIndexBytes returns the bytes of the keys and values of each index
// of a MyRocks table in its column family's tables, by index name; none
// when the user may not read them.
func RocksIndexBytes(ctx context.Context, conn *sql.Conn, schema, table string) (map[string]int64, error) {
	rows, err := conn.QueryContext(ctx, `SELECT d.INDEX_NAME, sum(f.DATA_SIZE)
		FROM information_schema.ROCKSDB_DDL d JOIN information_schema.ROCKSDB_INDEX_FILE_MAP f
		  ON f.COLUMN_FAMILY = d.COLUMN_FAMILY AND f.INDEX_NUMBER = d.INDEX_NUMBER
		WHERE d.TABLE_SCHEMA = ? AND d.TABLE_NAME = ? GROUP BY d.INDEX_NAME`, schema, table)
	if IsDenied(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var size int64
		if err := rows.Scan(&name, &size); err != nil {
			return nil, err
		}
		out[name] = size
	}
	return out, rows.Err()
}

// myReadKeyRange reads an integer key's least and greatest values, two
// lookups through the primary key.
func myReadKeyRange(ctx context.Context, conn *sql.Conn, ls *engine.Source) error {
	if bits, _ := engine.IntBits(ls.Table.KeyType); bits == 0 {
		return nil
	}
	key := Ident(ls.Def.(*Like).key)
	var lo, hi sql.NullInt64
	if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT CAST(min(%[1]s) AS SIGNED), CAST(max(%[1]s) AS SIGNED) FROM %[2]s", key, myQualified(ls))).
		Scan(&lo, &hi); err != nil {
		return myFail(ls, "the key's range", err)
	}
	if lo.Valid && hi.Valid {
		ls.Table.KeyMin, ls.Table.KeyMax = &lo.Int64, &hi.Int64
	}
	return nil
}

// myReadSample reads a uniform sample of the table's rows with their key
// and time column, and puts it in the order of the table's inserts.
func myReadSample(ctx context.Context, conn *sql.Conn, ls *engine.Source, sample, n int) error {
	src, t := ls.Def.(*Like), &ls.Table
	qualified := myQualified(ls)
	var list []string
	var times []engine.TimeCandidate
	for _, c := range src.columns {
		list = append(list, Ident(c.name))
		if c.dataType == "date" || c.dataType == "datetime" || c.dataType == "timestamp" {
			indexed := slices.ContainsFunc(src.indexes[1:], func(ix Index) bool { return len(ix.columns) > 0 && ix.columns[0] == c.name })
			times = append(times, engine.Candidate(c.name, indexed))
		}
	}
	timeCol, timeWhy := engine.ChooseTimeColumn(times)
	keyExpr, timeExpr := "NULL", "NULL"
	if bits, _ := engine.IntBits(t.KeyType); bits > 0 {
		keyExpr = "CAST(" + Ident(src.key) + " AS DOUBLE)"
	}
	if timeCol != "" {
		q := Ident(timeCol)
		timeExpr = fmt.Sprintf("TO_SECONDS(%[1]s) + MICROSECOND(%[1]s) / 1e6", q)
	}
	size, note := engine.SampleSize(sample, n, t.Rows, t.TableBytes)
	t.Notes = append(t.Notes, note)
	selectList := "1"
	if len(list) > 0 {
		selectList = strings.Join(list, ", ")
	}
	p := 1.0
	if t.Rows > 0 {
		p = min(1, 2*float64(size)/float64(t.Rows))
	}
	rows, err := readMySQLSample(ctx, conn, qualified, keyExpr, timeExpr, selectList, p, size)
	if err == nil && len(rows) < size && p < 1 {
		rows, err = readMySQLSample(ctx, conn, qualified, keyExpr, timeExpr, selectList, 1, size) // the estimate was far off
	}
	if err != nil {
		return myFail(ls, "read a sample", err)
	}
	if len(rows) == 0 {
		return myRefuse(ls, "%s is empty: --like copies the other columns from its rows", qualified)
	}
	t.Sampled = len(rows)
	t.Reuse = (n + t.Sampled - 1) / t.Sampled
	t.KeyTimeCorrelation = engine.KeyTimeCorrelation(rows)
	_, sequence := t.LocalSequence()
	src.order = engine.OrderSample(rows, t.Key, sequence, timeCol, timeWhy, true)
	t.InsertOrder = src.order.Note
	src.rows = make([][]any, len(rows))
	for i, r := range rows {
		if len(list) == 0 {
			r.Row = nil
		}
		src.rows[i] = r.Row
	}
	return nil
}

// mysqlServerMetrics are the figures of a load read from server-wide
// counters.
var mysqlServerMetrics = []string{"pages_written", "pages_written_per_1000", "page_splits", "page_splits_per_1000", "redo_bytes", "redo_bytes_per_insert"}

// readMySQLSample reads a uniform sample of at most n rows of the columns
// selectList of table on conn, in the transaction the caller began, each
// with the values keyExpr and timeExpr that order it and its place in
// the scan. The server passes each row with probability p; the tool keeps
// a uniform n of those (reservoir sampling), so that the sample spans the
// whole table, not its first rows.
func readMySQLSample(ctx context.Context, conn *sql.Conn, table, keyExpr, timeExpr, selectList string, p float64, n int) ([]engine.SampledRow[[]any], error) {
	where := ""
	if p < 1 {
		where = fmt.Sprintf(" WHERE RAND() < %g", p)
	}
	rows, err := conn.QueryContext(ctx, "SELECT "+keyExpr+", "+timeExpr+", "+selectList+" FROM "+table+where)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	types = types[2:]
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	var sample []engine.SampledRow[[]any]
	for seen := 0; rows.Next(); seen++ {
		row := make([]any, len(types))
		var key, at sql.NullFloat64
		dst := []any{&key, &at}
		for i := range row {
			dst = append(dst, &row[i])
		}
		if err := rows.Scan(dst...); err != nil { // copies each value
			return nil, err
		}
		// Text goes back as text, which the server converts to the
		// column's character set; bytes stay bytes.
		for i, v := range row {
			if b, ok := v.([]byte); ok && !mysqlBinaryTypes[types[i].DatabaseTypeName()] {
				row[i] = string(b)
			}
		}
		r := engine.SampledRow[[]any]{Row: row, Key: math.NaN(), At: math.NaN(), Physical: float64(seen)}
		if key.Valid {
			r.Key = key.Float64
		}
		if at.Valid {
			r.At = at.Float64
		}
		if len(sample) < n {
			sample = append(sample, r)
		} else if j := rng.IntN(seen + 1); j < n {
			sample[j] = r
		}
	}
	return sample, rows.Err()
}

// mysqlBinaryTypes are the column types, as the driver names them, whose
// values are bytes rather than text.
var mysqlBinaryTypes = map[string]bool{
	"BINARY": true, "VARBINARY": true, "BLOB": true, "TINYBLOB": true, "MEDIUMBLOB": true, "LONGBLOB": true,
	"BIT": true, "GEOMETRY": true,
}

// writeMySQLSample inserts rows into the sample table, numbering them
// from 0, in statements of at most 4 MiB of values and 65,535
// placeholders.
func writeMySQLSample(ctx context.Context, conn *sql.Conn, table string, rows [][]any) error {
	const maxBytes, maxArgs = 4 << 20, 65_535
	width := len(rows[0]) + 1
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", width), ", ") + ")"
	var args []any
	size := 0
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		k := len(args) / width
		_, err := conn.ExecContext(ctx, "INSERT INTO "+table+" VALUES "+strings.TrimSuffix(strings.Repeat(one+", ", k), ", "), args...)
		args, size = args[:0], 0
		return err
	}
	for i, row := range rows {
		if len(args)+width > maxArgs || size > maxBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		args = append(args, i)
		for _, v := range row {
			switch v := v.(type) {
			case []byte:
				size += len(v)
			case string:
				size += len(v)
			}
			args = append(args, v)
		}
	}
	return flush()
}

// mysqlUniqueValue returns an expression of column type typ that is
// unique per row number j.r.
func mysqlUniqueValue(col, typ, dataType string, maxLen int64) (string, error) {
	switch dataType {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext":
		v := fmt.Sprintf("CONCAT(j.r, '-', COALESCE(s.%s, ''))", col)
		if maxLen > 0 && maxLen < 1<<24 {
			v = fmt.Sprintf("LEFT(%s, %d)", v, maxLen)
		}
		return v, nil
	case "tinyint", "smallint", "mediumint", "int", "bigint", "decimal":
		return "j.r", nil
	case "binary", "varbinary":
		return fmt.Sprintf("UNHEX(LPAD(HEX(j.r), %d, '0'))", 2*maxLen), nil
	case "datetime", "timestamp":
		return "TIMESTAMPADD(SECOND, j.r, '2000-01-01 00:00:00')", nil
	case "date":
		return "DATE_ADD('2000-01-01', INTERVAL j.r DAY)", nil
	}
	return "", fmt.Errorf("column %s of type %s is in a unique index: --like can make text, numbers, binary strings, dates and times unique, not %s", col, typ, typ)
}

// Indexes returns the indexes of a table, the primary key first.
func Indexes(ctx context.Context, conn *sql.Conn, schema, table string) ([]Index, error) {
	rows, err := conn.QueryContext(ctx, `SELECT INDEX_NAME, NON_UNIQUE, INDEX_TYPE, coalesce(COLUMN_NAME, '')
		FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
		ORDER BY INDEX_NAME <> 'PRIMARY', INDEX_NAME, SEQ_IN_INDEX`, schema, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Index
	for rows.Next() {
		var name, typ, col string
		var nonUnique int
		if err := rows.Scan(&name, &nonUnique, &typ, &col); err != nil {
			return nil, err
		}
		if n := len(out); n == 0 || out[n-1].Name != name {
			out = append(out, Index{Name: name, unique: nonUnique == 0, btree: typ != "FULLTEXT" && typ != "SPATIAL"})
		}
		ix := &out[len(out)-1]
		ix.columns = append(ix.columns, col)
	}
	return out, rows.Err()
}

// autoIncrement matches the AUTO_INCREMENT table option, which a copy
// starts without.
var autoIncrement = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// CopyStatement returns the statement that creates a copy of the user's
// table, table (qualified), with a key column of type keyType: the table's
// definition as SHOW CREATE TABLE gives it, generated columns and every
// index included, but without its foreign keys and check constraints.
// With a column family cf (a MyRocks copy), every index keeps its rows
// there, in place of the column family its comment named.
func (src *Like) CopyStatement(table, keyType, cf string) (string, error) {
	lines := strings.Split(src.create, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "CREATE TABLE ") || !strings.HasSuffix(lines[0], " (") {
		return "", fmt.Errorf("unexpected SHOW CREATE TABLE output %.200q", src.create)
	}
	keyLine := "  " + Ident(src.key) + " "
	var body []string
	end := len(lines) - 1
	for _, line := range lines[1:end] {
		item := strings.TrimSuffix(line, ",")
		switch trimmed := strings.TrimSpace(item); {
		case strings.HasPrefix(trimmed, "CONSTRAINT "), strings.HasPrefix(trimmed, "FOREIGN KEY "), strings.HasPrefix(trimmed, "CHECK "):
			continue
		case strings.HasPrefix(item, keyLine):
			item = keyLine + keyType + " NOT NULL"
		case cf != "" && isIndexLine(trimmed):
			item = indexComment.ReplaceAllString(item, "") + " COMMENT 'cfname=" + cf + "'"
		}
		body = append(body, item)
	}
	tail := autoIncrement.ReplaceAllString(strings.Join(lines[end:], "\n"), "")
	if !strings.HasPrefix(tail, ")") {
		return "", fmt.Errorf("unexpected SHOW CREATE TABLE output %.200q", src.create)
	}
	return "CREATE TABLE " + table + " (\n" + strings.Join(body, ",\n") + "\n" + tail, nil
}

// isIndexLine says whether a line of SHOW CREATE TABLE declares an index.
func isIndexLine(trimmed string) bool {
	for _, p := range []string{"PRIMARY KEY ", "UNIQUE KEY ", "KEY ", "FULLTEXT KEY ", "SPATIAL KEY "} {
		if strings.HasPrefix(trimmed, p) {
			return true
		}
	}
	return false
}

// indexComment is the comment at the end of an index's line.
var indexComment = regexp.MustCompile(` COMMENT '(?:[^'\\]|\\.|'')*'$`)

// trialCopy creates a copy with a keyType key by copyStatement, inserts
// one row numbered as the loads' last (n-1), and drops it.
func trialCopy(ctx context.Context, conn *sql.Conn, database string, shape *engine.Shape[*Like], copyStatement func(table, keyType string) (string, error), keyType string, n int) error {
	table := database + ".like_trial"
	defer conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	create, err := copyStatement(table, keyType)
	if err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, create); err != nil {
		return err
	}
	bigint := keyType == "BIGINT"
	key := "1"
	if !bigint {
		key = hex.EncodeToString(make([]byte, 16))
	}
	doc, _ := json.Marshal([][2]any{{key, n - 1}})
	_, err = conn.ExecContext(ctx, LikeInsert(shape, database, table, bigint), string(doc))
	return err
}

// InsertBatches is the statement that inserts a batch of keys into the copy
// table, in their order: a JSON array of [key, row number] pairs, keys as
// decimal text (bigint) or hex; row r takes the other columns of sampled
// row floor(r*S/N) of database's like_sample, S the sample's rows and N
// the load's, so that a load passes through the sample once, in the order
// of the table's inserts.
func LikeInsert(shape *engine.Shape[*Like], database, table string, bigint bool) string {
	key := "CAST(j.k AS SIGNED)"
	if !bigint {
		key = "UNHEX(j.k)"
	}
	cols := append([]string{shape.Key}, shape.Columns...)
	vals := append([]string{key}, shape.Values...)
	return fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s
		FROM JSON_TABLE(?, '$[*]' COLUMNS (i FOR ORDINALITY, k VARCHAR(128) PATH '$[0]', r BIGINT PATH '$[1]')) j
		JOIN %s.like_sample s ON s.idkit_row = (j.r * %d) DIV %d
		ORDER BY j.i`,
		table, strings.Join(cols, ", "), strings.Join(vals, ", "), database, shape.Sample, shape.N)
}

// LikeBatches returns the function that inserts the batch [lo, hi) of l's
// keys into a copy, by stmt (LikeInsert).
func LikeBatches(ctx context.Context, conn *sql.Conn, stmt string, l engine.Load) func(lo, hi int) error {
	return func(lo, hi int) error {
		batch := make([][2]any, 0, hi-lo)
		for i := lo; i < hi; i++ {
			k := hex.EncodeToString(l.Keys.At(i))
			if l.Bigint() {
				k = strconv.FormatInt(l.Int64At(i), 10)
			}
			batch = append(batch, [2]any{k, i})
		}
		doc, err := json.Marshal(batch)
		if err != nil {
			return err
		}
		_, err = conn.ExecContext(ctx, stmt, string(doc))
		return err
	}
}

// loadLike loads l's keys into a copy of the user's table in the run's
// database, the key column's type set to the scheme's, each row filled
// from the sample, and reads every index's figures after an ANALYZE of
// the copy, and its reads through the key. On a scratch server it counts
// the copy's own pages changed in each flush interval, and runs the load
// again, up to engine.LikeTries times, while another session writes during it,
// whose writes the server-wide counters (pages written, redo) would hold.
func (e *Engine) loadLike(ctx context.Context, l engine.Load) (engine.Figures, error) {
	shape := e.like
	colType := Column(l)
	out := engine.Figures{Engine: engine.MySQL, ColumnType: colType, Metrics: map[string]float64{}}
	table := e.database + "." + l.Table
	fail := func(what string, err error) (engine.Figures, error) {
		return out, fmt.Errorf("compare: mysql: %s %s (like %s): %w", what, table, shape.Name, err)
	}
	create, err := shape.Def.CopyStatement(table, colType, "")
	if err != nil {
		return fail("copy the table", err)
	}
	defer e.conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	insert := LikeBatches(ctx, e.conn, LikeInsert(shape, e.database, table, l.Bigint()), l)
	var x flushed
	tries := 0
	for {
		tries++
		for _, q := range []string{"DROP TABLE IF EXISTS " + table, create} {
			if _, err := e.conn.ExecContext(ctx, q); err != nil {
				return fail("copy the table", err)
			}
		}
		if x, err = e.flushedLoad(ctx, l, table, true, insert); err != nil {
			return fail("load", err)
		}
		if e.polite || !x.disturbed() || tries == engine.LikeTries {
			break
		}
	}
	if _, err := e.conn.ExecContext(ctx, "ANALYZE TABLE "+table); err != nil {
		return fail("analyze", err)
	}
	n := l.Keys.N()
	m := out.Metrics
	var secondary, all float64
	indexes, err := Indexes(ctx, e.conn, e.database, l.Table)
	if err != nil {
		return fail("read the indexes", err)
	}
	for _, ix := range indexes {
		f, err := e.indexFigures(ctx, l.Table, ix)
		if err != nil {
			return fail("index figures", err)
		}
		out.Indexes = append(out.Indexes, f)
		all += float64(f.Bytes)
		if ix.Name == "PRIMARY" {
			m["index_bytes"] = float64(f.Bytes)
			m["leaf_pages"] = float64(f.LeafPages)
			m["leaf_pages_per_1000"] = engine.PerThousand(float64(f.LeafPages), n)
			if f.LeafDensity > 0 {
				m["leaf_density"] = f.LeafDensity
			}
		} else {
			secondary += float64(f.Bytes)
		}
	}
	x.metrics(m, n)
	if x.counted {
		m["tries"] = float64(tries)
	}
	if m["disturbed"] == 1 { // the server's counters hold another session's writes
		for _, k := range mysqlServerMetrics {
			delete(m, k)
		}
	}
	m["index_bytes_per_key"] = engine.PerKey(m["index_bytes"], n)
	m["secondary_index_bytes"] = secondary
	m["all_index_bytes"] = all
	m["all_index_bytes_per_key"] = engine.PerKey(all, n)
	column := shape.Key
	if len(shape.Columns) > 0 {
		column = shape.Columns[0]
	}
	if err := e.myReads(ctx, l, table, shape.Key, column, m); err != nil {
		return fail("reads", err)
	}
	return out, nil
}
