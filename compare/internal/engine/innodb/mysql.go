package innodb

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/go-sql-driver/mysql"
)

// Engine loads each key set into a fresh InnoDB table of a database
// the run creates (idkit_compare_<random>) and drops at the end. InnoDB
// clusters rows by primary key, so the key decides where every row goes.
//
// InnoDB writes a dirty page only when it flushes it, so the load flushes
// the table (FLUSH TABLES ... FOR EXPORT) every Load.CheckpointEvery
// inserts and at the end, as a database under a steady checkpoint age
// would: pages written are then the distinct pages each interval dirtied.
// Pages written, redo bytes (the log sequence number) and the page-split
// counter of INNODB_METRICS are server-wide counters, read before and
// after the load; the load compares the server's row writes over the
// same window with its own session's, and keeps the counters only when no
// other session wrote.
//
// In a --like run whose copies live on the source server (no scratch
// server), the engine is polite: no FLUSH, no server-wide setting and no
// scan of the buffer pool there, and the figures that need them are left
// out.
type Engine struct {
	db        *sql.DB
	conn      *sql.Conn
	connID    int64 // the server's thread of conn
	sourceDSN string
	polite    bool
	splits    bool // INNODB_METRICS counts page splits
	database  string
	server    string
	version   string
	pageSize  int64
	like      *engine.Shape[*Like] // set by prepareLike: load into copies of the user's table
	lsnStart  int64                // the server's log sequence number when the run began
	throttle  *engine.Throttle     // nil: the loads never pause
}

func (e *Engine) Throttle() *engine.Throttle { return e.throttle }

// Open connects to dsn and creates the run's database there. In a
// --like run sourceDSN names the server with the user's table, the same
// as dsn when polite.
func Open(ctx context.Context, dsn, sourceDSN string, polite bool, lim engine.Limits) (*Engine, error) {
	db, conn, err := Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("compare: mysql: %w", err)
	}
	cfg, _ := mysql.ParseDSN(dsn)
	e := &Engine{db: db, conn: conn, sourceDSN: sourceDSN, polite: polite, database: "idkit_compare_" + engine.RunSuffix(),
		server: engine.ServerName(cfg.Addr, 0, cfg.DBName)}
	e.throttle = engine.NewThrottle(lim, engine.MySQL, Busy(conn))
	fail := func(what string, err error) (*Engine, error) {
		conn.Close()
		db.Close()
		return nil, fmt.Errorf("compare: mysql: %s: %w", what, err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT version(), @@innodb_page_size, CONNECTION_ID()").Scan(&e.version, &e.pageSize, &e.connID); err != nil {
		return fail("version", err)
	}
	if polite {
		if e.lsnStart, err = e.globalStatus(ctx, "Innodb_lsn_current"); err != nil {
			return fail("read the log sequence number", err)
		}
	} else {
		// The split counter is off by default. Enabling it is server-wide
		// and it stays on: another run on the server may be reading it.
		// Without the right to, splits are left out.
		enabled := "STATUS = 'enabled'" // MySQL's column
		if strings.Contains(strings.ToLower(e.version), "mariadb") {
			enabled = "ENABLED = 1"
		}
		if err := conn.QueryRowContext(ctx, "SELECT "+enabled+" FROM information_schema.INNODB_METRICS WHERE NAME = 'index_page_splits'").Scan(&e.splits); err != nil {
			return fail("read INNODB_METRICS", err)
		}
		if !e.splits {
			_, err := conn.ExecContext(ctx, "SET GLOBAL innodb_monitor_enable = 'index_page_splits'")
			e.splits = err == nil
		}
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+e.database); err != nil {
		return fail("create database", err)
	}
	return e, nil
}

func (e *Engine) Info() engine.Info {
	name := "MySQL"
	if strings.Contains(strings.ToLower(e.version), "mariadb") {
		name = "MariaDB"
	}
	settings := fmt.Sprintf("InnoDB, %d-byte pages, table flushed every interval, database %s", e.pageSize, e.database)
	if e.polite {
		settings = fmt.Sprintf("InnoDB, %d-byte pages, no flush and no server counters (the copies are on the source server), database %s", e.pageSize, e.database)
	} else if !e.splits {
		settings += "; page splits left out: enabling INNODB_METRICS index_page_splits needs SUPER"
	}
	return engine.Info{Name: engine.MySQL, Version: name + " " + e.version + engine.Driver("github.com/go-sql-driver/mysql"), Settings: settings}
}

// Created names what the run created on the server, for the message of a
// stopped run.
func (e *Engine) Created() string {
	return fmt.Sprintf("database %s on MariaDB/MySQL %s", e.database, e.server)
}

// Close drops the run's database and everything in it, on a connection
// of the pool: a cancelled statement may have broken the run's. The
// server goes on with a statement whose client went away, so Close first
// ends the run's statement (a user may end its own), after which the
// server ends a thread whose client left, and waits for locks at most a
// few seconds, so that a stopped run ends at once.
func (e *Engine) Close(ctx context.Context) error {
	return DropDatabase(ctx, e.db, e.conn, e.connID, e.database, "compare: mysql: "+e.Created())
}

// DropDatabase drops a run's database on another connection of db
// than conn, the run's, whose statement (connID's) it ends first, and then
// closes db. created names the database in the error when it is left
// behind.
func DropDatabase(ctx context.Context, db *sql.DB, run *sql.Conn, connID int64, database, created string) error {
	drop := "DROP DATABASE IF EXISTS " + database
	conn, err := db.Conn(ctx) // another connection: the run's is still held
	run.Close()
	if err == nil {
		_, err = conn.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", connID))
		var my *mysql.MySQLError
		if errors.As(err, &my) && my.Number == 1094 { // no such thread: it had ended
			err = nil
		}
	}
	if err == nil {
		_, err = conn.ExecContext(ctx, "SET SESSION lock_wait_timeout = 3")
	}
	if err == nil {
		_, err = conn.ExecContext(ctx, drop)
	}
	if conn != nil {
		conn.Close()
	}
	// The pool's connections go with it, the killed one too: an error
	// in saying goodbye on that one says nothing of the drop.
	db.Close()
	if err != nil {
		return fmt.Errorf("%s is left behind (%v); remove it with: %s", created, err, drop)
	}
	return nil
}

// ServerLoad says how much redo the server wrote since the engine opened:
// the load a run without a scratch server put on the source, with any
// other session's.
func (e *Engine) ServerLoad(ctx context.Context) (string, int64, error) {
	if !e.polite {
		return "", 0, nil
	}
	lsn, err := e.globalStatus(ctx, "Innodb_lsn_current")
	if err != nil {
		return "", 0, fmt.Errorf("compare: mysql: read the log sequence number: %w", err)
	}
	return fmt.Sprintf("load on this server, which held the copies: it wrote %s of redo during the run (this run's and any other session's work); run with --scratch to build the copies elsewhere",
		engine.MiB(float64(lsn-e.lsnStart))), lsn - e.lsnStart, nil
}

// globalStatus reads one server-wide status counter.
func (e *Engine) globalStatus(ctx context.Context, name string) (int64, error) {
	var v int64
	err := e.conn.QueryRowContext(ctx, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = ?", strings.ToUpper(name)).Scan(&v)
	return v, err
}

// Column is the key column a user would choose: BIGINT for 64-bit
// integers, BINARY(n) for the rest.
func Column(l engine.Load) string {
	if l.Bigint() {
		return "BIGINT"
	}
	return fmt.Sprintf("BINARY(%d)", l.Keys.Len)
}

// mysqlCounters are the server-wide counters a load reads before and
// after, with the row writes of the server and of the load's session.
type mysqlCounters struct {
	pagesWritten, lsn, splits int64
	serverWrites, ownWrites   int64
}

// flushed is what a load changed of the server-wide counters, and the time
// its inserts took.
type flushed struct {
	before, after mysqlCounters
	spent         time.Duration
	counted       bool // the counters were read: the engine is not polite
	splits        bool
	// changed sums, over the load's intervals, the pages of the table
	// whose newest change is past the log sequence number at the
	// interval's start (INNODB_BUFFER_PAGE): the pages the flush at the
	// interval's end writes, the table's alone whatever other sessions
	// do; changedCounted says they were counted.
	changed        int64
	changedCounted bool
}

// disturbed says whether another session wrote rows while the load ran.
func (x flushed) disturbed() bool {
	return x.after.serverWrites-x.before.serverWrites > x.after.ownWrites-x.before.ownWrites
}

// flushedLoad runs l's batches through insert with the table flushed
// (FLUSH TABLES ... FOR EXPORT) before the load, at each of its intervals
// and at its end, and reads the server's counters before and after; with
// changed, at each flush it first counts the table's pages changed in the
// interval (a scan of the buffer pool's pages). A polite engine only
// times the inserts.
func (e *Engine) flushedLoad(ctx context.Context, l engine.Load, table string, changed bool, insert func(lo, hi int) error) (flushed, error) {
	var x flushed
	if e.polite {
		var err error
		x.spent, err = l.Batches(insert, nil)
		return x, err
	}
	x.counted, x.splits, x.changedCounted = true, e.splits, changed
	name := strings.SplitN(table, ".", 2)
	var since int64
	count := func() error {
		var n int64
		if err := e.conn.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.INNODB_BUFFER_PAGE
			WHERE TABLE_NAME = ? AND NEWEST_MODIFICATION > ?`, fmt.Sprintf("`%s`.`%s`", name[0], name[len(name)-1]), since).Scan(&n); err != nil {
			return fmt.Errorf("pages changed in the interval: %w", err)
		}
		x.changed += n
		return nil
	}
	flush := func() error {
		if _, err := e.conn.ExecContext(ctx, "FLUSH TABLES "+table+" FOR EXPORT"); err != nil {
			return err
		}
		_, err := e.conn.ExecContext(ctx, "UNLOCK TABLES")
		if err == nil {
			since, err = e.globalStatus(ctx, "Innodb_lsn_current")
		}
		return err
	}
	interval := flush
	if changed {
		interval = func() error {
			if err := count(); err != nil {
				return err
			}
			return flush()
		}
	}
	if err := flush(); err != nil {
		return x, fmt.Errorf("flush: %w", err)
	}
	var err error
	if x.before, err = e.counters(ctx); err != nil {
		return x, fmt.Errorf("read counters: %w", err)
	}
	if x.spent, err = l.Batches(insert, interval); err != nil {
		return x, err
	}
	if err := interval(); err != nil {
		return x, fmt.Errorf("flush: %w", err)
	}
	if x.after, err = e.counters(ctx); err != nil {
		return x, fmt.Errorf("read counters: %w", err)
	}
	return x, nil
}

// metrics sets the figures of a load of n keys that x describes: the
// server-wide counters when they were read, and "disturbed" 1 when
// another session wrote meanwhile.
func (x flushed) metrics(m map[string]float64, n int) {
	m["inserts_per_second"] = engine.Rate(n, x.spent)
	if !x.counted {
		return
	}
	if x.disturbed() {
		m["disturbed"] = 1
	}
	if x.changedCounted {
		m["pages_changed"] = float64(x.changed)
		m["pages_changed_per_1000"] = engine.PerThousand(float64(x.changed), n)
	}
	m["pages_written"] = float64(x.after.pagesWritten - x.before.pagesWritten)
	m["pages_written_per_1000"] = engine.PerThousand(m["pages_written"], n)
	if x.splits {
		m["page_splits"] = float64(x.after.splits - x.before.splits)
		m["page_splits_per_1000"] = engine.PerThousand(m["page_splits"], n)
	}
	m["redo_bytes"] = float64(x.after.lsn - x.before.lsn)
	m["redo_bytes_per_insert"] = engine.PerKey(m["redo_bytes"], n)
}

// handlerWrites are the status counters of rows written, inserted,
// updated and deleted through any storage engine.
const handlerWrites = "('HANDLER_WRITE', 'HANDLER_UPDATE', 'HANDLER_DELETE')"

func (e *Engine) counters(ctx context.Context) (mysqlCounters, error) {
	var c mysqlCounters
	// The session's counters first: reading the server's adds nothing to
	// them, and a write of another session in between counts against
	// the load, never for it.
	// VARIABLE_VALUE is text: each is cast to an integer before the sums.
	if err := e.conn.QueryRowContext(ctx, "SELECT coalesce(sum(CAST(VARIABLE_VALUE AS UNSIGNED)), 0) FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME IN "+handlerWrites).Scan(&c.ownWrites); err != nil {
		return c, err
	}
	if err := e.conn.QueryRowContext(ctx, `SELECT
		  coalesce(sum(CASE WHEN VARIABLE_NAME IN `+handlerWrites+` THEN CAST(VARIABLE_VALUE AS UNSIGNED) END), 0),
		  coalesce(sum(CASE VARIABLE_NAME WHEN 'INNODB_PAGES_WRITTEN' THEN CAST(VARIABLE_VALUE AS UNSIGNED) END), 0),
		  coalesce(sum(CASE VARIABLE_NAME WHEN 'INNODB_LSN_CURRENT' THEN CAST(VARIABLE_VALUE AS UNSIGNED) END), 0)
		FROM information_schema.GLOBAL_STATUS`).Scan(&c.serverWrites, &c.pagesWritten, &c.lsn); err != nil {
		return c, err
	}
	if !e.splits {
		return c, nil
	}
	err := e.conn.QueryRowContext(ctx, "SELECT `count` FROM information_schema.INNODB_METRICS WHERE name = 'index_page_splits'").Scan(&c.splits)
	return c, err
}

// indexFigures reads an index's size and leaf pages from the persistent
// statistics of table, which the caller just analyzed, and, but on a
// polite engine, its leaf density over every page: the index is read
// whole first, so that all its pages are in the buffer pool, whose pages'
// used bytes INNODB_BUFFER_PAGE gives.
func (e *Engine) indexFigures(ctx context.Context, table string, ix Index) (engine.IndexFigures, error) {
	f := engine.IndexFigures{Name: ix.DisplayName()}
	var size, leaves int64
	if err := e.conn.QueryRowContext(ctx, `SELECT
		  coalesce(sum(CASE stat_name WHEN 'size' THEN stat_value END), 0),
		  coalesce(sum(CASE stat_name WHEN 'n_leaf_pages' THEN stat_value END), 0)
		FROM mysql.innodb_index_stats WHERE database_name = ? AND table_name = ? AND index_name = ?`,
		e.database, table, ix.Name).Scan(&size, &leaves); err != nil {
		return f, fmt.Errorf("index stats: %w", err)
	}
	f.Bytes, f.LeafPages = size*e.pageSize, leaves
	if e.polite || !ix.btree {
		return f, nil
	}
	var scanned int64
	if err := e.conn.QueryRowContext(ctx, fmt.Sprintf("SELECT count(*) FROM %s.%s FORCE INDEX (%s)",
		e.database, Ident(table), Ident(ix.Name))).Scan(&scanned); err != nil {
		return f, fmt.Errorf("read the index whole: %w", err)
	}
	var pages, used int64
	if err := e.conn.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(data_size), 0)
		FROM information_schema.INNODB_BUFFER_PAGE
		WHERE table_name = ? AND index_name = ? AND page_type = 'INDEX' AND number_records > 0`,
		fmt.Sprintf("`%s`.`%s`", e.database, table), ix.Name).Scan(&pages, &used); err != nil {
		return f, fmt.Errorf("buffer pool pages: %w", err)
	}
	f.Pages = pages
	// Density over every leaf page, or none: a pool too small for the
	// index holds only some of them.
	if pages >= leaves && pages > 0 {
		f.LeafDensity = float64(used) / float64(pages*e.pageSize)
	}
	return f, nil
}

func (e *Engine) Load(ctx context.Context, l engine.Load) (engine.Figures, error) {
	if e.like != nil {
		return e.loadLike(ctx, l)
	}
	colType := Column(l)
	out := engine.Figures{Engine: engine.MySQL, ColumnType: colType, Metrics: map[string]float64{}}
	table := e.database + "." + l.Table
	fail := func(what string, err error) (engine.Figures, error) {
		return out, fmt.Errorf("compare: mysql: %s %s: %w", what, table, err)
	}
	if _, err := e.conn.ExecContext(ctx, fmt.Sprintf(
		"CREATE TABLE %s (id %s NOT NULL PRIMARY KEY, payload BINARY(%d) NOT NULL) ENGINE=InnoDB", table, colType, len(l.Value))); err != nil {
		return fail("create table", err)
	}
	defer e.conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	if _, err := e.conn.ExecContext(ctx, "SET @idkit_payload = ?", l.Value); err != nil {
		return fail("set payload", err)
	}
	insert := InsertBatches(ctx, e.conn, table, l)
	x, err := e.flushedLoad(ctx, l, table, false, insert)
	if err != nil {
		return fail("load", err)
	}

	n := l.Keys.N()
	if _, err := e.conn.ExecContext(ctx, "ANALYZE TABLE "+table); err != nil {
		return fail("analyze", err)
	}
	var leafPages, sizePages int64
	if err := e.conn.QueryRowContext(ctx, `SELECT
		  coalesce(sum(CASE stat_name WHEN 'n_leaf_pages' THEN stat_value END), 0),
		  coalesce(sum(CASE stat_name WHEN 'size' THEN stat_value END), 0)
		FROM mysql.innodb_index_stats
		WHERE database_name = ? AND table_name = ? AND index_name = 'PRIMARY'`, e.database, l.Table).Scan(&leafPages, &sizePages); err != nil {
		return fail("index stats", err)
	}
	// Leaf density from the index pages in the buffer pool (all of them
	// while the table fits the pool): used bytes over page bytes.
	var sampled, used int64
	if err := e.conn.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(data_size), 0)
		FROM information_schema.INNODB_BUFFER_PAGE
		WHERE table_name = ? AND index_name = 'PRIMARY' AND page_type = 'INDEX'`,
		fmt.Sprintf("`%s`.`%s`", e.database, l.Table)).Scan(&sampled, &used); err != nil {
		return fail("buffer pool pages", err)
	}
	m := out.Metrics
	x.metrics(m, n)
	m["leaf_pages"] = float64(leafPages)
	m["index_bytes"] = float64(sizePages * e.pageSize)
	m["index_bytes_per_key"] = engine.PerKey(m["index_bytes"], n)
	m["pages_sampled"] = float64(sampled)
	if sampled > 0 {
		m["leaf_density"] = float64(used) / float64(sampled*e.pageSize)
	}
	if err := e.myReads(ctx, l, table, "id", "payload", m); err != nil {
		return fail("reads", err)
	}
	return out, nil
}

// LoadConcurrent inserts l's keys into a table of their own through
// writers connections at once, with no flushes, and samples the
// sessions' thread states in PROCESSLIST on the run's own connection. It
// also reads InnoDB's row lock waits and redo log buffer waits, which are
// server-wide, before and after: MariaDB counts its mutex waits only with
// performance_schema, which is off by default and set at start-up.
func (e *Engine) LoadConcurrent(ctx context.Context, l engine.Load, writers int) (*engine.ConcurrentLoad, error) {
	colType := Column(l)
	table := e.database + "." + l.Table + "_concurrent"
	fail := func(what string, err error) (*engine.ConcurrentLoad, error) {
		return nil, fmt.Errorf("compare: mysql: %s %s: %w", what, table, err)
	}
	if _, err := e.conn.ExecContext(ctx, fmt.Sprintf(
		"CREATE TABLE %s (id %s NOT NULL PRIMARY KEY, payload BINARY(%d) NOT NULL) ENGINE=InnoDB", table, colType, len(l.Value))); err != nil {
		return fail("create table", err)
	}
	defer e.conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	sessions := make([]engine.Session, writers)
	ids := make([]string, writers)
	for w := range sessions {
		conn, err := e.db.Conn(ctx)
		if err != nil {
			return fail(fmt.Sprintf("connect writer %d of", w), err)
		}
		defer conn.Close()
		if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&ids[w]); err != nil {
			return fail("connection id", err)
		}
		if _, err := conn.ExecContext(ctx, "SET @idkit_payload = ?", l.Value); err != nil {
			return fail("set payload", err)
		}
		stmts := map[int]string{}
		sessions[w] = engine.Session{
			ID: "thread " + ids[w],
			Insert: func(ctx context.Context, idx []int) error {
				q, ok := stmts[len(idx)]
				if !ok {
					q = "INSERT INTO " + table + " (id, payload) VALUES " + strings.TrimSuffix(strings.Repeat("(?, @idkit_payload),", len(idx)), ",")
					stmts[len(idx)] = q
				}
				args := make([]any, len(idx))
				for j, i := range idx {
					if l.Bigint() {
						args[j] = l.Int64At(i)
					} else {
						args[j] = l.Keys.At(i)
					}
				}
				_, err := conn.ExecContext(ctx, q, args...)
				return err
			},
		}
	}
	sample := func(ctx context.Context) (sampledIDs, events []string, err error) {
		rows, err := e.conn.QueryContext(ctx, `SELECT ID, coalesce(nullif(STATE, ''), 'no state')
			FROM information_schema.PROCESSLIST WHERE ID IN (`+strings.Join(ids, ",")+`) AND COMMAND IN ('Query', 'Execute')`)
		if err != nil {
			return nil, nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var id, ev string
			if err := rows.Scan(&id, &ev); err != nil {
				return nil, nil, err
			}
			sampledIDs, events = append(sampledIDs, "thread "+id), append(events, ev)
		}
		return sampledIDs, events, rows.Err()
	}
	// Server-wide wait counters: row lock waits, and waits for room in
	// the redo log buffer.
	waits := func() (map[string]float64, error) {
		rows, err := e.conn.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_log_waits')")
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := map[string]float64{}
		for rows.Next() {
			var name string
			var v float64
			if err := rows.Scan(&name, &v); err != nil {
				return nil, err
			}
			out[strings.ToLower(name)] = v
		}
		return out, rows.Err()
	}
	before, err := waits()
	if err != nil {
		return fail("wait counters", err)
	}
	c, err := engine.RunConcurrent(ctx, l, sessions, sample)
	if err != nil {
		return fail("load", err)
	}
	after, err := waits()
	if err != nil {
		return fail("wait counters", err)
	}
	c.Server = map[string]float64{}
	for k, v := range after {
		c.Server[k] = v - before[k]
	}
	var rows int
	if err := e.conn.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&rows); err != nil {
		return fail("count", err)
	}
	if rows != l.Keys.N() {
		return fail("count", fmt.Errorf("%d rows after inserting %d keys", rows, l.Keys.N()))
	}
	return c, nil
}

// InsertBatches returns a function that inserts l's keys lo..hi-1 into
// table on conn, each with the payload in @idkit_payload, in one
// statement; a statement is built once per batch size.
func InsertBatches(ctx context.Context, conn *sql.Conn, table string, l engine.Load) func(lo, hi int) error {
	stmts := map[int]string{}
	return func(lo, hi int) error {
		q, ok := stmts[hi-lo]
		if !ok {
			q = "INSERT INTO " + table + " (id, payload) VALUES " + strings.TrimSuffix(strings.Repeat("(?, @idkit_payload),", hi-lo), ",")
			stmts[hi-lo] = q
		}
		args := make([]any, 0, hi-lo)
		for i := lo; i < hi; i++ {
			args = append(args, Arg(l, i))
		}
		_, err := conn.ExecContext(ctx, q, args...)
		return err
	}
}

// Arg is key i of l as a statement argument.
func Arg(l engine.Load, i int) any { return KeyArg(l, l.Keys.At(i)) }

// KeyArg is a key of l, given as bytes, as a statement argument.
func KeyArg(l engine.Load, key []byte) any {
	if l.Bigint() {
		return int64(binary.BigEndian.Uint64(key))
	}
	return key
}
