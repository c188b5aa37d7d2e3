package compare

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// mysqlIdent quotes an identifier for MariaDB/MySQL.
func mysqlIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// mysqlIndex is one index of a table as information_schema describes it.
type mysqlIndex struct {
	name    string
	unique  bool
	btree   bool
	columns []string
}

// displayName says what the index is on, as pgIndexName does.
func (ix mysqlIndex) displayName() string {
	on := "(" + strings.Join(ix.columns, ", ") + ")"
	switch {
	case ix.name == "PRIMARY":
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

// myLike is what a run keeps of the user's table for its copies: its
// definition as SHOW CREATE TABLE gives it, the columns the loads fill and
// the sampled rows.
type myLike struct {
	key     string
	create  string
	columns []myColumn
	rows    [][]any
}

// prepareLike reads the user's table on the source server in one
// read-only snapshot (readMySQLLike), writes the sample into the run's
// database, and makes every later Load a load into a copy of the table,
// after a trial copy for each key type with one row numbered as the
// loads' last.
func (e *mysqlEngine) prepareLike(ctx context.Context, name LikeName, sample, n int) (LikeTable, error) {
	t, src, err := readMySQLLike(ctx, e.sourceDSN, name, sample, n)
	if err != nil {
		return t, err
	}
	fail := func(format string, args ...any) (LikeTable, error) {
		return t, fmt.Errorf("%w %s: mysql: %s", ErrLike, name, fmt.Sprintf(format, args...))
	}
	defs := []string{"idkit_row BIGINT NOT NULL PRIMARY KEY"}
	for _, c := range src.columns {
		def := mysqlIdent(c.name) + " " + c.typ
		if c.charset != "" {
			def += " CHARACTER SET " + c.charset + " COLLATE " + c.collation
		}
		defs = append(defs, def+" NULL")
	}
	sampleTable := e.database + ".like_sample"
	if _, err := e.conn.ExecContext(ctx, fmt.Sprintf("CREATE TABLE %s (%s) ENGINE=InnoDB", sampleTable, strings.Join(defs, ", "))); err != nil {
		return fail("create the sample table: %v", err)
	}
	if err := e.writeSample(ctx, sampleTable, src.rows); err != nil {
		return fail("write the sample: %v", err)
	}
	shape := &likeShape{name: name, key: mysqlIdent(src.key), sample: len(src.rows), my: src}
	for _, c := range src.columns {
		q := mysqlIdent(c.name)
		v := "s." + q
		if c.unique {
			if v, err = mysqlUniqueValue(q, c.typ, c.dataType, c.maxLen); err != nil {
				return fail("%v", err)
			}
			t.Notes = append(t.Notes, fmt.Sprintf("column %s is in a unique index: each row gets a value of its own made from its row number", c.name))
		}
		shape.columns = append(shape.columns, q)
		shape.values = append(shape.values, v)
	}
	src.rows = nil // in the sample table now
	e.like = shape
	for _, keyType := range []string{"BIGINT", "BINARY(16)"} {
		if err := e.trialCopy(ctx, keyType, n); err != nil {
			e.like = nil
			return fail("a copy with a %s key (the key type of some schemes) fails: %v", keyType, err)
		}
	}
	t.Notes = append(t.Notes, likeNotes...)
	return t, nil
}

// readMySQLLike reads the table's definition, its figures today and a
// uniform sample of its rows from the source server, on one connection in
// one consistent, read-only snapshot: a nonlocking read, which takes no
// row lock and waits for none, whatever locks the application holds. It
// needs SELECT on the table; the per-index sizes of the persistent
// statistics are read where the user may read mysql.innodb_index_stats.
func readMySQLLike(ctx context.Context, dsn string, name LikeName, sample, n int) (LikeTable, *myLike, error) {
	schema, table := name.Schema.name, name.Table.name
	qualified := mysqlIdent(schema) + "." + mysqlIdent(table)
	t := LikeTable{Engine: EngineMySQL, Name: name.String()}
	fail := func(format string, args ...any) (LikeTable, *myLike, error) {
		return t, nil, fmt.Errorf("%w %s: mysql: %s", ErrLike, name, fmt.Sprintf(format, args...))
	}
	db, conn, err := mysqlConnect(ctx, dsn)
	if err != nil {
		return fail("the source: %v", err)
	}
	defer db.Close()
	defer conn.Close()
	for _, q := range []string{"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fail("begin a read-only snapshot: %v", err)
		}
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "COMMIT")

	var engine, kind string
	var avgRow int64
	err = conn.QueryRowContext(ctx, `SELECT coalesce(ENGINE, ''), TABLE_TYPE, coalesce(TABLE_ROWS, 0), coalesce(DATA_LENGTH, 0), coalesce(AVG_ROW_LENGTH, 0)
		FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, schema, table).Scan(&engine, &kind, &t.Rows, &t.TableBytes, &avgRow)
	if errors.Is(err, sql.ErrNoRows) {
		return fail("no table %s (or no right to see it)", qualified)
	}
	if err != nil {
		return fail("read information_schema: %v", err)
	}
	if kind != "BASE TABLE" || !strings.EqualFold(engine, "InnoDB") {
		return fail("%s is a %s of engine %q; --like measures InnoDB tables", qualified, strings.ToLower(kind), engine)
	}
	var partitions int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.PARTITIONS
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND PARTITION_NAME IS NOT NULL`, schema, table).Scan(&partitions); err != nil {
		return fail("read information_schema: %v", err)
	}
	if partitions > 0 {
		return fail("%s is partitioned (%d partitions): InnoDB keeps a B-tree per partition and index, which a copy of one table does not measure; --like measures unpartitioned tables", qualified, partitions)
	}
	indexes, err := mysqlIndexes(ctx, conn, schema, table)
	if err != nil {
		return fail("read the indexes: %v", err)
	}
	if len(indexes) == 0 || indexes[0].name != "PRIMARY" {
		return fail("%s has no primary key; --like needs a single-column primary key to replace", qualified)
	}
	if pk := indexes[0]; len(pk.columns) != 1 {
		return fail("%s has a composite primary key (%s); --like needs a single-column primary key to replace", qualified, strings.Join(pk.columns, ", "))
	}
	var pageSize int64
	if err := conn.QueryRowContext(ctx, "SELECT @@innodb_page_size").Scan(&pageSize); err != nil {
		return fail("read the page size: %v", err)
	}
	src := &myLike{key: indexes[0].columns[0]}
	t.Key = src.key
	var ignored string
	if err := conn.QueryRowContext(ctx, "SHOW CREATE TABLE "+qualified).Scan(&ignored, &src.create); err != nil {
		return fail("read the table's definition: %v", err)
	}

	rows, err := conn.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, coalesce(CHARACTER_MAXIMUM_LENGTH, 0),
		  coalesce(CHARACTER_SET_NAME, ''), coalesce(COLLATION_NAME, ''), EXTRA
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, schema, table)
	if err != nil {
		return fail("read the columns: %v", err)
	}
	for rows.Next() {
		var c myColumn
		var extra string
		if err := rows.Scan(&c.name, &c.typ, &c.dataType, &c.maxLen, &c.charset, &c.collation, &extra); err != nil {
			rows.Close()
			return fail("read the columns: %v", err)
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
		return fail("read the columns: %v", err)
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
		return fail("read the foreign keys that point at the table: %v", err)
	}
	for refs.Next() {
		var r string
		if err := refs.Scan(&r); err != nil {
			refs.Close()
			return fail("read the foreign keys that point at the table: %v", err)
		}
		t.ReferencedBy = append(t.ReferencedBy, r)
	}
	refs.Close()

	// The table's figures today, from the persistent statistics as they
	// stand (the run does not ANALYZE the user's table), where the user
	// may read them; otherwise only the clustered index's size.
	for _, ix := range indexes {
		f := IndexFigures{Name: ix.displayName()}
		var size, leaves int64
		err := conn.QueryRowContext(ctx, `SELECT
			  coalesce(sum(CASE stat_name WHEN 'size' THEN stat_value END), 0),
			  coalesce(sum(CASE stat_name WHEN 'n_leaf_pages' THEN stat_value END), 0)
			FROM mysql.innodb_index_stats WHERE database_name = ? AND table_name = ? AND index_name = ?`,
			schema, table, ix.name).Scan(&size, &leaves)
		if isMySQLDenied(err) {
			t.Indexes = []IndexFigures{{Name: indexes[0].displayName(), Bytes: t.TableBytes}}
			t.Notes = append(t.Notes, "the secondary indexes' sizes today are left out: this user may not read mysql.innodb_index_stats on the source")
			break
		}
		if err != nil {
			return fail("index statistics: %v", err)
		}
		f.Bytes, f.LeafPages = size*pageSize, leaves
		t.Indexes = append(t.Indexes, f)
	}
	t.Notes = append(t.Notes, "InnoDB keeps the rows in the primary key's order: the table is its clustered index; index sizes are InnoDB's persistent statistics as they stand")

	size, note := likeSampleSize(sample, n, t.Rows, t.TableBytes)
	t.Notes = append(t.Notes, note)
	var list []string
	for _, c := range src.columns {
		list = append(list, mysqlIdent(c.name))
	}
	selectList := "1"
	if len(list) > 0 {
		selectList = strings.Join(list, ", ")
	}
	p := 1.0
	if t.Rows > 0 {
		p = min(1, 2*float64(size)/float64(t.Rows))
	}
	src.rows, err = readMySQLSample(ctx, conn, qualified, selectList, p, size)
	if err == nil && len(src.rows) < size && p < 1 {
		src.rows, err = readMySQLSample(ctx, conn, qualified, selectList, 1, size) // the estimate was far off
	}
	if err != nil {
		return fail("read a sample: %v", err)
	}
	if len(src.rows) == 0 {
		return fail("%s is empty: --like copies the other columns from its rows", qualified)
	}
	if len(list) == 0 {
		for i := range src.rows {
			src.rows[i] = nil
		}
	}
	t.Sampled = len(src.rows)
	t.Reuse = (n + t.Sampled - 1) / t.Sampled
	return t, src, nil
}

// mysqlServerMetrics are the figures of a load read from server-wide
// counters.
var mysqlServerMetrics = []string{"pages_written", "pages_written_per_1000", "page_splits", "page_splits_per_1000", "redo_bytes", "redo_bytes_per_insert"}

// mysqlConnect opens a pool on dsn and one connection of it.
func mysqlConnect(ctx context.Context, dsn string) (*sql.DB, *sql.Conn, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("the DSN does not parse (it may hold a password, so it is not repeated here): %w", err)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	return db, conn, nil
}

// readMySQLSample reads a uniform sample of at most n rows of the columns
// selectList of table on conn, in the transaction the caller began. The
// server passes each row with probability p; the tool keeps a uniform n
// of those (reservoir sampling), so that the sample spans the whole
// table, not its first rows.
func readMySQLSample(ctx context.Context, conn *sql.Conn, table, selectList string, p float64, n int) ([][]any, error) {
	where := ""
	if p < 1 {
		where = fmt.Sprintf(" WHERE RAND() < %g", p)
	}
	rows, err := conn.QueryContext(ctx, "SELECT "+selectList+" FROM "+table+where)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	var sample [][]any
	for seen := 0; rows.Next(); seen++ {
		row := make([]any, len(types))
		dst := make([]any, len(types))
		for i := range row {
			dst[i] = &row[i]
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
		if len(sample) < n {
			sample = append(sample, row)
		} else if j := rng.IntN(seen + 1); j < n {
			sample[j] = row
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

// writeSample inserts rows into the sample table, numbering them from 0,
// in statements of at most 4 MiB of values and 65,535 placeholders.
func (e *mysqlEngine) writeSample(ctx context.Context, table string, rows [][]any) error {
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
		_, err := e.conn.ExecContext(ctx, "INSERT INTO "+table+" VALUES "+strings.TrimSuffix(strings.Repeat(one+", ", k), ", "), args...)
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

// mysqlIndexes returns the indexes of a table, the primary key first.
func mysqlIndexes(ctx context.Context, conn *sql.Conn, schema, table string) ([]mysqlIndex, error) {
	rows, err := conn.QueryContext(ctx, `SELECT INDEX_NAME, NON_UNIQUE, INDEX_TYPE, coalesce(COLUMN_NAME, '')
		FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
		ORDER BY INDEX_NAME <> 'PRIMARY', INDEX_NAME, SEQ_IN_INDEX`, schema, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []mysqlIndex
	for rows.Next() {
		var name, typ, col string
		var nonUnique int
		if err := rows.Scan(&name, &nonUnique, &typ, &col); err != nil {
			return nil, err
		}
		if n := len(out); n == 0 || out[n-1].name != name {
			out = append(out, mysqlIndex{name: name, unique: nonUnique == 0, btree: typ == "BTREE"})
		}
		ix := &out[len(out)-1]
		ix.columns = append(ix.columns, col)
	}
	return out, rows.Err()
}

// autoIncrement matches the AUTO_INCREMENT table option, which a copy
// starts without.
var autoIncrement = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// copyStatement returns the statement that creates a copy of the user's
// table, table (qualified), with a key column of type keyType: the table's
// definition as SHOW CREATE TABLE gives it, generated columns and every
// index included, but without its foreign keys and check constraints.
func (src *myLike) copyStatement(table, keyType string) (string, error) {
	lines := strings.Split(src.create, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "CREATE TABLE ") || !strings.HasSuffix(lines[0], " (") {
		return "", fmt.Errorf("unexpected SHOW CREATE TABLE output %.200q", src.create)
	}
	keyLine := "  " + mysqlIdent(src.key) + " "
	var body []string
	end := len(lines) - 1
	for _, line := range lines[1:end] {
		item := strings.TrimSuffix(line, ",")
		switch trimmed := strings.TrimSpace(item); {
		case strings.HasPrefix(trimmed, "CONSTRAINT "), strings.HasPrefix(trimmed, "FOREIGN KEY "), strings.HasPrefix(trimmed, "CHECK "):
			continue
		case strings.HasPrefix(item, keyLine):
			item = keyLine + keyType + " NOT NULL"
		}
		body = append(body, item)
	}
	tail := autoIncrement.ReplaceAllString(strings.Join(lines[end:], "\n"), "")
	if !strings.HasPrefix(tail, ")") {
		return "", fmt.Errorf("unexpected SHOW CREATE TABLE output %.200q", src.create)
	}
	return "CREATE TABLE " + table + " (\n" + strings.Join(body, ",\n") + "\n" + tail, nil
}

// trialCopy creates a copy with a keyType key, inserts one row numbered as
// the loads' last (n-1), and drops it.
func (e *mysqlEngine) trialCopy(ctx context.Context, keyType string, n int) error {
	table := e.database + ".like_trial"
	defer e.conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	create, err := e.like.my.copyStatement(table, keyType)
	if err != nil {
		return err
	}
	if _, err := e.conn.ExecContext(ctx, create); err != nil {
		return err
	}
	bigint := keyType == "BIGINT"
	key := "1"
	if !bigint {
		key = hex.EncodeToString(make([]byte, 16))
	}
	doc, _ := json.Marshal([][2]any{{key, n - 1}})
	_, err = e.conn.ExecContext(ctx, e.likeInsert(table, bigint), string(doc), e.like.sample)
	return err
}

// likeInsert is the statement that inserts a batch of keys into the copy
// table: a JSON array of [key, row number] pairs, keys as decimal text
// (bigint) or hex, and the sample's size; each row takes the other
// columns of sampled row r mod the sample's size.
func (e *mysqlEngine) likeInsert(table string, bigint bool) string {
	shape := e.like
	key := "CAST(j.k AS SIGNED)"
	if !bigint {
		key = "UNHEX(j.k)"
	}
	cols := append([]string{shape.key}, shape.columns...)
	vals := append([]string{key}, shape.values...)
	return fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s
		FROM JSON_TABLE(?, '$[*]' COLUMNS (k VARCHAR(128) PATH '$[0]', r BIGINT PATH '$[1]')) j
		JOIN %s.like_sample s ON s.idkit_row = j.r %% ?`,
		table, strings.Join(cols, ", "), strings.Join(vals, ", "), e.database)
}

// loadLike loads l's keys into a copy of the user's table in the run's
// database, the key column's type set to the scheme's, each row filled
// from the sample, and reads every index's figures after an ANALYZE of
// the copy: its own statistics, not the server's counters.
func (e *mysqlEngine) loadLike(ctx context.Context, l dbLoad) (EngineLoad, error) {
	shape := e.like
	colType := mysqlColumn(l)
	out := EngineLoad{Engine: EngineMySQL, ColumnType: colType, Metrics: map[string]float64{}}
	table := e.database + "." + l.table
	fail := func(what string, err error) (EngineLoad, error) {
		return out, fmt.Errorf("compare: mysql: %s %s (like %s): %w", what, table, shape.name, err)
	}
	create, err := shape.my.copyStatement(table, colType)
	if err != nil {
		return fail("copy the table", err)
	}
	if _, err := e.conn.ExecContext(ctx, create); err != nil {
		return fail("copy the table", err)
	}
	defer e.conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	stmt := e.likeInsert(table, l.bigint())
	insert := func(lo, hi int) error {
		batch := make([][2]any, 0, hi-lo)
		for i := lo; i < hi; i++ {
			k := hex.EncodeToString(l.keys.At(i))
			if l.bigint() {
				k = strconv.FormatInt(l.int64At(i), 10)
			}
			batch = append(batch, [2]any{k, i})
		}
		doc, err := json.Marshal(batch)
		if err != nil {
			return err
		}
		_, err = e.conn.ExecContext(ctx, stmt, string(doc), shape.sample)
		return err
	}
	x, err := e.flushedLoad(ctx, l, table, insert)
	if err != nil {
		return fail("load", err)
	}
	if _, err := e.conn.ExecContext(ctx, "ANALYZE TABLE "+table); err != nil {
		return fail("analyze", err)
	}
	n := l.keys.N()
	m := out.Metrics
	var secondary, all float64
	indexes, err := mysqlIndexes(ctx, e.conn, e.database, l.table)
	if err != nil {
		return fail("read the indexes", err)
	}
	for _, ix := range indexes {
		f, err := e.indexFigures(ctx, l.table, ix)
		if err != nil {
			return fail("index figures", err)
		}
		out.Indexes = append(out.Indexes, f)
		all += float64(f.Bytes)
		if ix.name == "PRIMARY" {
			m["index_bytes"] = float64(f.Bytes)
			m["leaf_pages"] = float64(f.LeafPages)
			m["leaf_pages_per_1000"] = perThousand(float64(f.LeafPages), n)
			if f.LeafDensity > 0 {
				m["leaf_density"] = f.LeafDensity
			}
		} else {
			secondary += float64(f.Bytes)
		}
	}
	x.metrics(m, n)
	if m["disturbed"] == 1 { // the server's counters hold another session's writes
		for _, k := range mysqlServerMetrics {
			delete(m, k)
		}
	}
	m["index_bytes_per_key"] = perKey(m["index_bytes"], n)
	m["secondary_index_bytes"] = secondary
	m["all_index_bytes"] = all
	m["all_index_bytes_per_key"] = perKey(all, n)
	return out, nil
}
