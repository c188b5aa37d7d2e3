package compare

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// mysqlEngine loads each key set into a fresh InnoDB table of a database
// the run creates (idkit_compare_<random>) and drops at the end. InnoDB
// clusters rows by primary key, so the key decides where every row goes.
//
// InnoDB writes a dirty page only when it flushes it, so the load flushes
// the table (FLUSH TABLES ... FOR EXPORT) every dbLoad.checkpointEvery
// inserts and at the end, as a database under a steady checkpoint age
// would: pages written are then the distinct pages each interval dirtied.
// Pages written, redo bytes (the log sequence number) and the page-split
// counter of INNODB_METRICS are server-wide counters, read before and
// after the load: on a server with other writers they include theirs.
type mysqlEngine struct {
	db       *sql.DB
	conn     *sql.Conn
	database string
	version  string
	pageSize int64
	like     *likeShape // set by prepareLike: load into copies of the user's table
}

func openMySQL(ctx context.Context, dsn string) (*mysqlEngine, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: the DSN does not parse (it may hold a password, so it is not repeated here): %w", err)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: %w", err)
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("compare: mysql: connect: %w", err)
	}
	e := &mysqlEngine{db: db, conn: conn, database: "idkit_compare_" + runSuffix()}
	fail := func(what string, err error) (*mysqlEngine, error) {
		conn.Close()
		db.Close()
		return nil, fmt.Errorf("compare: mysql: %s: %w", what, err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT version(), @@innodb_page_size").Scan(&e.version, &e.pageSize); err != nil {
		return fail("version", err)
	}
	// The split counter is off by default. Enabling it is server-wide and
	// it stays on: another run on the server may be reading it.
	if _, err := conn.ExecContext(ctx, "SET GLOBAL innodb_monitor_enable = 'index_page_splits'"); err != nil {
		return fail("enable INNODB_METRICS index_page_splits", err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+e.database); err != nil {
		return fail("create database", err)
	}
	return e, nil
}

func (e *mysqlEngine) Info() EngineInfo {
	name := "MySQL"
	if strings.Contains(strings.ToLower(e.version), "mariadb") {
		name = "MariaDB"
	}
	return EngineInfo{
		Name: EngineMySQL, Version: name + " " + e.version + driver("github.com/go-sql-driver/mysql"),
		Settings: fmt.Sprintf("InnoDB, %d-byte pages, table flushed every interval, database %s", e.pageSize, e.database),
	}
}

// Close drops the run's database and everything in it, on a connection
// of the pool: a cancelled statement may have broken the run's.
func (e *mysqlEngine) Close(ctx context.Context) error {
	e.conn.Close()
	_, err := e.db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+e.database)
	if cerr := e.db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("compare: mysql: drop database %s: %w", e.database, err)
	}
	return nil
}

// mysqlColumn is the key column a user would choose: BIGINT for 64-bit
// integers, BINARY(n) for the rest.
func mysqlColumn(l dbLoad) string {
	if l.bigint() {
		return "BIGINT"
	}
	return fmt.Sprintf("BINARY(%d)", l.keys.Len)
}

// mysqlCounters are the server-wide counters a load reads before and after.
type mysqlCounters struct{ pagesWritten, lsn, splits int64 }

// flushed is what a load changed of the server-wide counters, and the time
// its inserts took.
type flushed struct {
	before, after mysqlCounters
	spent         time.Duration
}

// flushedLoad runs l's batches through insert with the table flushed
// (FLUSH TABLES ... FOR EXPORT) before the load, at each of its intervals
// and at its end, and reads the server's counters before and after.
func (e *mysqlEngine) flushedLoad(ctx context.Context, l dbLoad, table string, insert func(lo, hi int) error) (flushed, error) {
	var x flushed
	flush := func() error {
		if _, err := e.conn.ExecContext(ctx, "FLUSH TABLES "+table+" FOR EXPORT"); err != nil {
			return err
		}
		_, err := e.conn.ExecContext(ctx, "UNLOCK TABLES")
		return err
	}
	if err := flush(); err != nil {
		return x, fmt.Errorf("flush: %w", err)
	}
	var err error
	if x.before, err = e.counters(ctx); err != nil {
		return x, fmt.Errorf("read counters: %w", err)
	}
	if x.spent, err = l.batches(insert, flush); err != nil {
		return x, err
	}
	if err := flush(); err != nil {
		return x, fmt.Errorf("flush: %w", err)
	}
	if x.after, err = e.counters(ctx); err != nil {
		return x, fmt.Errorf("read counters: %w", err)
	}
	return x, nil
}

// metrics sets the figures of a load of n keys that x describes.
func (x flushed) metrics(m map[string]float64, n int) {
	m["inserts_per_second"] = rate(n, x.spent)
	m["pages_written"] = float64(x.after.pagesWritten - x.before.pagesWritten)
	m["pages_written_per_1000"] = perThousand(m["pages_written"], n)
	m["page_splits"] = float64(x.after.splits - x.before.splits)
	m["page_splits_per_1000"] = perThousand(m["page_splits"], n)
	m["redo_bytes"] = float64(x.after.lsn - x.before.lsn)
	m["redo_bytes_per_insert"] = perKey(m["redo_bytes"], n)
}

func (e *mysqlEngine) counters(ctx context.Context) (mysqlCounters, error) {
	var c mysqlCounters
	rows, err := e.conn.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_pages_written', 'Innodb_lsn_current')")
	if err != nil {
		return c, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return c, err
		}
		switch strings.ToLower(name) {
		case "innodb_pages_written":
			c.pagesWritten = v
		case "innodb_lsn_current":
			c.lsn = v
		}
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	err = e.conn.QueryRowContext(ctx, "SELECT `count` FROM information_schema.INNODB_METRICS WHERE name = 'index_page_splits'").Scan(&c.splits)
	return c, err
}

func (e *mysqlEngine) Load(ctx context.Context, l dbLoad) (EngineLoad, error) {
	if e.like != nil {
		return e.loadLike(ctx, l)
	}
	colType := mysqlColumn(l)
	out := EngineLoad{Engine: EngineMySQL, ColumnType: colType, Metrics: map[string]float64{}}
	table := e.database + "." + l.table
	fail := func(what string, err error) (EngineLoad, error) {
		return out, fmt.Errorf("compare: mysql: %s %s: %w", what, table, err)
	}
	if _, err := e.conn.ExecContext(ctx, fmt.Sprintf(
		"CREATE TABLE %s (id %s NOT NULL PRIMARY KEY, payload BINARY(%d) NOT NULL) ENGINE=InnoDB", table, colType, len(l.value))); err != nil {
		return fail("create table", err)
	}
	defer e.conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	if _, err := e.conn.ExecContext(ctx, "SET @idkit_payload = ?", l.value); err != nil {
		return fail("set payload", err)
	}
	stmts := map[int]string{}
	insert := func(lo, hi int) error {
		q, ok := stmts[hi-lo]
		if !ok {
			q = "INSERT INTO " + table + " (id, payload) VALUES " + strings.TrimSuffix(strings.Repeat("(?, @idkit_payload),", hi-lo), ",")
			stmts[hi-lo] = q
		}
		args := make([]any, 0, hi-lo)
		for i := lo; i < hi; i++ {
			if l.bigint() {
				args = append(args, l.int64At(i))
			} else {
				args = append(args, l.keys.At(i))
			}
		}
		_, err := e.conn.ExecContext(ctx, q, args...)
		return err
	}
	x, err := e.flushedLoad(ctx, l, table, insert)
	if err != nil {
		return fail("load", err)
	}

	n := l.keys.N()
	if _, err := e.conn.ExecContext(ctx, "ANALYZE TABLE "+table); err != nil {
		return fail("analyze", err)
	}
	var leafPages, sizePages int64
	if err := e.conn.QueryRowContext(ctx, `SELECT
		  coalesce(sum(CASE stat_name WHEN 'n_leaf_pages' THEN stat_value END), 0),
		  coalesce(sum(CASE stat_name WHEN 'size' THEN stat_value END), 0)
		FROM mysql.innodb_index_stats
		WHERE database_name = ? AND table_name = ? AND index_name = 'PRIMARY'`, e.database, l.table).Scan(&leafPages, &sizePages); err != nil {
		return fail("index stats", err)
	}
	// Leaf density from the index pages in the buffer pool (all of them
	// while the table fits the pool): used bytes over page bytes.
	var sampled, used int64
	if err := e.conn.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(data_size), 0)
		FROM information_schema.INNODB_BUFFER_PAGE
		WHERE table_name = ? AND index_name = 'PRIMARY' AND page_type = 'INDEX'`,
		fmt.Sprintf("`%s`.`%s`", e.database, l.table)).Scan(&sampled, &used); err != nil {
		return fail("buffer pool pages", err)
	}
	m := out.Metrics
	x.metrics(m, n)
	m["leaf_pages"] = float64(leafPages)
	m["index_bytes"] = float64(sizePages * e.pageSize)
	m["index_bytes_per_key"] = perKey(m["index_bytes"], n)
	m["pages_sampled"] = float64(sampled)
	if sampled > 0 {
		m["leaf_density"] = float64(used) / float64(sampled*e.pageSize)
	}
	return out, nil
}
