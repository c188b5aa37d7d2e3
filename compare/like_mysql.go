package compare

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
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

// prepareLike reads the user's table through information_schema and the
// persistent InnoDB statistics, copies a sample of its rows into the run's
// database, and makes the loads copy its shape. It only reads the table,
// and takes no row lock on it (see readSample).
func (e *mysqlEngine) prepareLike(ctx context.Context, name LikeName, sample int) (LikeTable, error) {
	schema, table := name.Schema.name, name.Table.name
	qualified := mysqlIdent(schema) + "." + mysqlIdent(table)
	t := LikeTable{Engine: EngineMySQL, Name: name.String()}
	fail := func(format string, args ...any) (LikeTable, error) {
		return t, fmt.Errorf("%w %s: mysql: %s", ErrLike, name, fmt.Sprintf(format, args...))
	}
	var engine, kind string
	err := e.conn.QueryRowContext(ctx, `SELECT coalesce(ENGINE, ''), TABLE_TYPE, coalesce(TABLE_ROWS, 0), coalesce(DATA_LENGTH, 0)
		FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, schema, table).Scan(&engine, &kind, &t.Rows, &t.TableBytes)
	if errors.Is(err, sql.ErrNoRows) {
		return fail("no table %s", qualified)
	}
	if err != nil {
		return fail("read information_schema: %v", err)
	}
	if kind != "BASE TABLE" || !strings.EqualFold(engine, "InnoDB") {
		return fail("%s is a %s of engine %q; --like measures InnoDB tables", qualified, strings.ToLower(kind), engine)
	}
	indexes, err := e.likeIndexes(ctx, schema, table)
	if err != nil {
		return fail("read the indexes: %v", err)
	}
	if len(indexes) == 0 || indexes[0].name != "PRIMARY" {
		return fail("%s has no primary key; --like needs a single-column primary key to replace", qualified)
	}
	if pk := indexes[0]; len(pk.columns) != 1 {
		return fail("%s has a composite primary key (%s); --like needs a single-column primary key to replace", qualified, strings.Join(pk.columns, ", "))
	}
	t.Key = indexes[0].columns[0]

	rows, err := e.conn.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, coalesce(CHARACTER_MAXIMUM_LENGTH, 0), EXTRA
		FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`, schema, table)
	if err != nil {
		return fail("read the columns: %v", err)
	}
	type column struct {
		name, typ, dataType string
		maxLen              int64
	}
	var cols []column
	for rows.Next() {
		var c column
		var extra string
		if err := rows.Scan(&c.name, &c.typ, &c.dataType, &c.maxLen, &extra); err != nil {
			rows.Close()
			return fail("read the columns: %v", err)
		}
		if c.name == t.Key {
			t.KeyType = c.typ
			continue
		}
		if !strings.Contains(strings.ToUpper(extra), "GENERATED") {
			cols = append(cols, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fail("read the columns: %v", err)
	}
	unique := map[string]bool{}
	for _, ix := range indexes[1:] {
		if ix.unique {
			for _, c := range ix.columns {
				unique[c] = true
			}
		}
	}

	// The table's figures today, from the persistent statistics as they
	// stand (the run does not ANALYZE the user's table).
	for _, ix := range indexes {
		f := IndexFigures{Name: ix.displayName()}
		var size, leaves int64
		if err := e.conn.QueryRowContext(ctx, `SELECT
			  coalesce(sum(CASE stat_name WHEN 'size' THEN stat_value END), 0),
			  coalesce(sum(CASE stat_name WHEN 'n_leaf_pages' THEN stat_value END), 0)
			FROM mysql.innodb_index_stats WHERE database_name = ? AND table_name = ? AND index_name = ?`,
			schema, table, ix.name).Scan(&size, &leaves); err != nil {
			return fail("index statistics: %v", err)
		}
		f.Bytes, f.LeafPages = size*e.pageSize, leaves
		t.Indexes = append(t.Indexes, f)
	}
	t.Notes = append(t.Notes, "InnoDB keeps the rows in the primary key's order: the table is its clustered index; index sizes are InnoDB's persistent statistics as they stand")

	// The sample: at most sample rows, read in one consistent, read-only
	// snapshot and written to the run's database by the tool, never by an
	// INSERT ... SELECT from the user's table, which would lock its rows.
	shape := &likeShape{name: name, key: mysqlIdent(t.Key)}
	var list []string
	for _, c := range cols {
		list = append(list, mysqlIdent(c.name))
	}
	selectList := "1"
	if len(list) > 0 {
		selectList = strings.Join(list, ", ")
	}
	sampleTable := e.database + ".like_sample"
	// LIMIT 0 reads no row: only the columns' definitions.
	if _, err := e.conn.ExecContext(ctx, fmt.Sprintf("CREATE TABLE %s ENGINE=InnoDB AS SELECT 0 AS idkit_row, %s FROM %s LIMIT 0",
		sampleTable, selectList, qualified)); err != nil {
		return fail("create the sample table: %v", err)
	}
	p := 1.0
	if t.Rows > 0 {
		p = min(1, 2*float64(sample)/float64(t.Rows))
	}
	rowsRead, err := e.readSample(ctx, qualified, selectList, p, sample)
	if err == nil && len(rowsRead) == 0 && p < 1 {
		rowsRead, err = e.readSample(ctx, qualified, selectList, 1, sample) // the estimate was far off
	}
	if err != nil {
		return fail("read a sample: %v", err)
	}
	if len(rowsRead) == 0 {
		return fail("%s is empty: --like copies the other columns from its rows", qualified)
	}
	if err := e.writeSample(ctx, sampleTable, rowsRead); err != nil {
		return fail("write the sample: %v", err)
	}
	shape.sample = len(rowsRead)
	if _, err := e.conn.ExecContext(ctx, "ALTER TABLE "+sampleTable+" MODIFY idkit_row BIGINT NOT NULL, ADD PRIMARY KEY (idkit_row)"); err != nil {
		return fail("index the sample: %v", err)
	}
	t.Sampled = shape.sample

	for _, c := range cols {
		q := mysqlIdent(c.name)
		v := "s." + q
		if unique[c.name] {
			if v, err = mysqlUniqueValue(q, c.typ, c.dataType, c.maxLen); err != nil {
				return fail("%v", err)
			}
			t.Notes = append(t.Notes, fmt.Sprintf("column %s is in a unique index: each row gets a value of its own made from its row number", c.name))
		}
		shape.columns = append(shape.columns, q)
		shape.values = append(shape.values, v)
	}
	t.Notes = append(t.Notes, likeNotes...)
	e.like = shape
	return t, nil
}

// readSample reads a uniform sample of at most n rows of the columns
// selectList of table, in one consistent, read-only snapshot on a
// connection of its own: a nonlocking read, which takes no row lock and
// waits for none, whatever locks the application holds. The server passes
// each row with probability p; the tool keeps a uniform n of those
// (reservoir sampling), so that the sample spans the whole table, not its
// first rows.
func (e *mysqlEngine) readSample(ctx context.Context, table, selectList string, p float64, n int) ([][]any, error) {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	for _, q := range []string{"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "COMMIT")
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
	}
	return "", fmt.Errorf("column %s of type %s is in a unique index: --like can make text, numbers, binary strings and times unique, not %s", col, typ, typ)
}

// likeIndexes returns the indexes of a table, the primary key first.
func (e *mysqlEngine) likeIndexes(ctx context.Context, schema, table string) ([]mysqlIndex, error) {
	rows, err := e.conn.QueryContext(ctx, `SELECT INDEX_NAME, NON_UNIQUE, INDEX_TYPE, COLUMN_NAME
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

// loadLike loads l's keys into a copy of the user's table in the run's
// database (CREATE TABLE ... LIKE: its columns and indexes, no foreign
// keys), the key column's type set to the scheme's, each row filled from
// the sample.
func (e *mysqlEngine) loadLike(ctx context.Context, l dbLoad) (EngineLoad, error) {
	shape := e.like
	colType := mysqlColumn(l)
	out := EngineLoad{Engine: EngineMySQL, ColumnType: colType, Metrics: map[string]float64{}}
	table := e.database + "." + l.table
	user := mysqlIdent(shape.name.Schema.name) + "." + mysqlIdent(shape.name.Table.name)
	fail := func(what string, err error) (EngineLoad, error) {
		return out, fmt.Errorf("compare: mysql: %s %s (like %s): %w", what, table, shape.name, err)
	}
	if _, err := e.conn.ExecContext(ctx, "CREATE TABLE "+table+" LIKE "+user); err != nil {
		return fail("copy the table", err)
	}
	defer e.conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	if _, err := e.conn.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s MODIFY %s %s NOT NULL", table, shape.key, colType)); err != nil {
		return fail("set the key column's type", err)
	}
	key := "CAST(j.k AS SIGNED)"
	if !l.bigint() {
		key = "UNHEX(j.k)"
	}
	cols := append([]string{shape.key}, shape.columns...)
	vals := append([]string{key}, shape.values...)
	// j.r numbers the rows of the whole load from 0.
	stmt := fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s
		FROM JSON_TABLE(?, '$[*]' COLUMNS (k VARCHAR(128) PATH '$[0]', r BIGINT PATH '$[1]')) j
		JOIN %s.like_sample s ON s.idkit_row = j.r %% ?`,
		table, strings.Join(cols, ", "), strings.Join(vals, ", "), e.database)
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
	var secondary float64
	indexes, err := e.likeIndexes(ctx, e.database, l.table)
	if err != nil {
		return fail("read the indexes", err)
	}
	for _, ix := range indexes {
		var size, leaves, sampled, used int64
		if err := e.conn.QueryRowContext(ctx, `SELECT
			  coalesce(sum(CASE stat_name WHEN 'size' THEN stat_value END), 0),
			  coalesce(sum(CASE stat_name WHEN 'n_leaf_pages' THEN stat_value END), 0)
			FROM mysql.innodb_index_stats WHERE database_name = ? AND table_name = ? AND index_name = ?`,
			e.database, l.table, ix.name).Scan(&size, &leaves); err != nil {
			return fail("index stats", err)
		}
		if err := e.conn.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(data_size), 0)
			FROM information_schema.INNODB_BUFFER_PAGE
			WHERE table_name = ? AND index_name = ? AND page_type = 'INDEX'`,
			fmt.Sprintf("`%s`.`%s`", e.database, l.table), ix.name).Scan(&sampled, &used); err != nil {
			return fail("buffer pool pages", err)
		}
		f := IndexFigures{Name: ix.displayName(), Bytes: size * e.pageSize, LeafPages: leaves}
		if sampled > 0 {
			f.LeafDensity = float64(used) / float64(sampled*e.pageSize)
		}
		out.Indexes = append(out.Indexes, f)
		if ix.name == "PRIMARY" {
			m["index_bytes"] = float64(f.Bytes)
			m["leaf_pages"] = float64(leaves)
			m["pages_sampled"] = float64(sampled)
			if sampled > 0 {
				m["leaf_density"] = f.LeafDensity
			}
		} else {
			secondary += float64(f.Bytes)
		}
	}
	x.metrics(m, n)
	m["index_bytes_per_key"] = perKey(m["index_bytes"], n)
	m["secondary_index_bytes"] = secondary
	return out, nil
}
