package myrocks

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/innodb"

	"github.com/go-sql-driver/mysql"
)

// Engine loads each key set into a MyRocks table (MariaDB's RocksDB
// storage engine, an LSM tree) of a database the run creates on the
// --mysql server, when that server has the ROCKSDB engine, and drops it at
// the end.
//
// Each load's table keeps its rows in a column family of its own for the
// load, so that the server's compaction statistics of that column family
// (information_schema.ROCKSDB_COMPACTION_STATS) are the table's alone:
// bytes flushed and compacted, moved without a rewrite, and the tables'
// size. MariaDB cannot drop a column family through SQL, so the engine
// takes one of a fixed pool of them (myrocksPool), held by a named lock
// (GET_LOCK) for the load, and the pool is all it ever adds to a server.
// A column family is created by the CREATE TABLE that names it first and
// only then given a scaled-down tree (myrocksCFOptions)
// (rocksdb_update_cf_options): MariaDB 10.11 aborts on reading
// information_schema.ROCKSDB_GLOBAL_INFO once a column family exists that
// no table created, and crashes when the plugin is installed into a
// running server, which is why .ci/servers.sh loads it at start.
//
// The server writes and compacts in its own threads, while the load
// inserts: its counts vary a little from run to run, as InnoDB's do. The
// load waits for the column family to settle (no flush or compaction
// pending, and its compaction counts unchanged for myrocksQuiet) before
// it reads the figures. Rows of time-ordered schemes go into a table
// partitioned at the expiry's bound, and expire by dropping the oldest
// partition, which MyRocks deletes by key range; the others expire by
// DELETE, row by row.
type Engine struct {
	db       *sql.DB
	conn     *sql.Conn
	connID   int64
	database string
	server   string
	version  string
	bloom    string                      // the filter policy of new column families, "" for none
	like     *engine.Shape[*innodb.Like] // set by writeLike: load into copies of the user's table
}

// The column family pool, and how long a column family must be quiet
// before the load reads its figures.
const (
	myrocksPool   = 16
	myrocksQuiet  = 300 * time.Millisecond
	myrocksPoll   = 20 * time.Millisecond
	myrocksBound  = 10 * time.Minute
	myrocksCFPref = "idkit_compare_"
	// myrocksGB is the unit of the compaction statistics' byte columns.
	myrocksGB = 1 << 30
)

// myrocksCFOptions is the tree of every load's column family, without
// compression: RocksDB's defaults scaled down, a 1 MiB memtable (64 MiB by
// default), 256 KiB tables (64 MiB) and 8 MiB in Lbase (256 MiB). With
// the defaults a load of the default N (200,000 rows of about 120 bytes)
// would fill less than one memtable and write one table, whatever its
// keys: the scaled tree flushes and compacts it as a table some 50 times
// larger is with the defaults.
var myrocksCFOptions = fmt.Sprintf("write_buffer_size=%d;target_file_size_base=%d;max_bytes_for_level_base=%d;compression=kNoCompression",
	1<<20, 256<<10, 8<<20)

// myrocksMissing says how to get the ROCKSDB engine into a server that
// lacks it.
const myrocksMissing = "the server has no ROCKSDB engine: install Debian's mariadb-plugin-rocksdb (the server's version) and restart the server, which loads it from the package's rocksdb.cnf (INSTALL SONAME 'ha_rocksdb' into a running MariaDB 10.11 crashed it here)"

// Open connects to dsn and, when the server has the ROCKSDB
// engine, creates the run's database there; without the engine it
// returns the reason to skip it.
func Open(ctx context.Context, dsn string) (*Engine, string, error) {
	db, conn, err := innodb.Connect(ctx, dsn)
	if err != nil {
		return nil, "", fmt.Errorf("compare: myrocks: %w", err)
	}
	cfg, _ := mysql.ParseDSN(dsn)
	e := &Engine{db: db, conn: conn, database: "idkit_rocks_" + engine.RunSuffix(), server: engine.ServerName(cfg.Addr, 0, cfg.DBName)}
	fail := func(what string, err error) (*Engine, string, error) {
		conn.Close()
		db.Close()
		return nil, "", fmt.Errorf("compare: myrocks: %s: %w", what, err)
	}
	var support sql.NullString
	err = conn.QueryRowContext(ctx, "SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'").Scan(&support)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fail("read the engines", err)
	}
	if s := strings.ToUpper(support.String); s != "YES" && s != "DEFAULT" {
		conn.Close()
		db.Close()
		return nil, myrocksMissing, nil
	}
	if err := conn.QueryRowContext(ctx, "SELECT version(), CONNECTION_ID()").Scan(&e.version, &e.connID); err != nil {
		return fail("version", err)
	}
	// The loads flush, compact and tune their column families with SET
	// GLOBAL, which needs SUPER, and read the engine's statistics, which
	// need PROCESS (without it they read as empty); without them the run
	// goes on without MyRocks and says what to grant.
	if lack, user, err := innodb.MyRocksRights(ctx, conn); err != nil {
		return fail("read the rights", err)
	} else if lack != "" {
		conn.Close()
		db.Close()
		return nil, fmt.Sprintf("MyRocks loads flush and compact their column families (SET GLOBAL rocksdb_compact_cf: SUPER) and read the engine's statistics (information_schema.ROCKSDB_*: PROCESS): GRANT %s ON *.* TO %s", lack, user), nil
	}
	var filter sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT VALUE FROM information_schema.ROCKSDB_CF_OPTIONS WHERE CF_NAME = 'default' AND OPTION_TYPE = 'TABLE_FACTORY::FILTER_POLICY'").Scan(&filter); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fail("read the column family options", err)
	}
	if f := filter.String; f != "" && f != "nullptr" {
		e.bloom = f
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+e.database); err != nil {
		return fail("create database", err)
	}
	return e, "", nil
}

func (e *Engine) Info() engine.Info {
	bloom := "no bloom filter (the server's rocksdb_default_cf_options set none)"
	if e.bloom != "" {
		bloom = "filter " + e.bloom
	}
	return engine.Info{
		Name: engine.MyRocks, Version: "MariaDB " + e.version + " MyRocks" + engine.Driver("github.com/go-sql-driver/mysql"),
		Settings: fmt.Sprintf("a column family per load, from a pool of %d, with %s; %s; database %s", myrocksPool, myrocksCFOptions, bloom, e.database),
	}
}

// Created names what the run created on the server.
func (e *Engine) Created() string {
	return fmt.Sprintf("database %s on MariaDB %s", e.database, e.server)
}

func (e *Engine) ServerLoad(context.Context) (string, int64, error) { return "", 0, nil }

// Close drops the run's database, as the InnoDB engine's Close does.
func (e *Engine) Close(ctx context.Context) error {
	return innodb.DropDatabase(ctx, e.db, e.conn, e.connID, e.database, "compare: myrocks: "+e.Created())
}

// cfStats are the compaction statistics of one column family, summed over
// its levels.
type cfStats struct {
	written, moved, size float64 // bytes
	compactions          float64
}

func (e *Engine) cfStats(ctx context.Context, cf string) (cfStats, error) {
	var s cfStats
	rows, err := e.conn.QueryContext(ctx, `SELECT TYPE, VALUE FROM information_schema.ROCKSDB_COMPACTION_STATS
		WHERE CF_NAME = ? AND LEVEL = 'Sum' AND TYPE IN ('WriteGB', 'MovedGB', 'SizeBytes', 'CompCount')`, cf)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var typ string
		var v float64
		if err := rows.Scan(&typ, &v); err != nil {
			return s, err
		}
		switch typ {
		case "WriteGB":
			s.written = v * myrocksGB
		case "MovedGB":
			s.moved = v * myrocksGB
		case "SizeBytes":
			s.size = v
		case "CompCount":
			s.compactions = v
		}
	}
	return s, rows.Err()
}

// pending says whether cf has a flush or a compaction pending.
func (e *Engine) pending(ctx context.Context, cf string) (bool, error) {
	var n int64
	err := e.conn.QueryRowContext(ctx, `SELECT coalesce(sum(VALUE), 0) FROM information_schema.ROCKSDB_CFSTATS
		WHERE CF_NAME = ? AND STAT_TYPE IN ('NUM_IMMUTABLE_MEM_TABLE', 'MEM_TABLE_FLUSH_PENDING', 'COMPACTION_PENDING')`, cf).Scan(&n)
	return n > 0, err
}

// settle flushes the memtables and waits until cf has nothing pending and
// its compaction counts have not moved for myrocksQuiet.
func (e *Engine) settle(ctx context.Context, cf string) error {
	if _, err := e.conn.ExecContext(ctx, "SET GLOBAL rocksdb_force_flush_memtable_now = 1"); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	deadline := time.Now().Add(myrocksBound)
	var last cfStats
	since := time.Now()
	for {
		busy, err := e.pending(ctx, cf)
		if err != nil {
			return err
		}
		s, err := e.cfStats(ctx, cf)
		if err != nil {
			return err
		}
		if busy || s != last {
			last, since = s, time.Now()
		} else if time.Since(since) >= myrocksQuiet {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("column family %s still flushing or compacting after %v", cf, myrocksBound)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(myrocksPoll):
		}
	}
}

// takeCF takes a column family of the pool, by a named lock held on the
// engine's connection until releaseCF. It passes over a column family
// that holds a table: one a killed run left behind, whose rows would be
// counted in the load's figures, and which the run leaves alone, since
// it did not create it.
func (e *Engine) takeCF(ctx context.Context) (string, error) {
	var others []string // tables in the pool's column families
	for i := range myrocksPool {
		cf := fmt.Sprintf("%s%d", myrocksCFPref, i)
		var got sql.NullInt64
		if err := e.conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", cf).Scan(&got); err != nil {
			return "", fmt.Errorf("lock a column family: %w", err)
		}
		if got.Int64 != 1 {
			continue
		}
		var table sql.NullString
		err := e.conn.QueryRowContext(ctx, "SELECT min(concat(TABLE_SCHEMA, '.', TABLE_NAME)) FROM information_schema.ROCKSDB_DDL WHERE CF = ?", cf).Scan(&table)
		if err != nil {
			e.releaseCF(cf)
			return "", fmt.Errorf("look for tables in column family %s: %w", cf, err)
		}
		if !table.Valid {
			return cf, nil
		}
		e.releaseCF(cf)
		others = append(others, table.String+" in "+cf)
	}
	if len(others) > 0 {
		return "", fmt.Errorf("the %d column families %s0..%d are in use by other runs or hold tables that no run is loading (%s): a run leaves tables it did not create alone; drop them, if a killed run left them, to free their column families",
			myrocksPool, myrocksCFPref, myrocksPool-1, strings.Join(others, ", "))
	}
	return "", fmt.Errorf("all %d column families %s0..%d are in use by other runs", myrocksPool, myrocksCFPref, myrocksPool-1)
}

func (e *Engine) releaseCF(cf string) {
	e.conn.ExecContext(context.Background(), "SELECT RELEASE_LOCK(?)", cf)
}

// emptyCF waits until the tables an earlier load dropped from cf are gone
// (MyRocks removes a dropped index's rows in the background), compacting
// cf when they linger.
func (e *Engine) emptyCF(ctx context.Context, cf string) error {
	s, err := e.cfStats(ctx, cf)
	if err != nil || s.size == 0 {
		return err
	}
	if _, err := e.conn.ExecContext(ctx, "SET GLOBAL rocksdb_compact_cf = ?", cf); err != nil {
		return fmt.Errorf("compact what an earlier load left in %s: %w", cf, err)
	}
	return e.settle(ctx, cf)
}

// rocksCounters are the server's RocksDB counters a load reads before and
// after: bytes written through the log, and rows changed by anyone.
type rocksCounters struct {
	walBytes, rows float64
}

func (e *Engine) counters(ctx context.Context) (rocksCounters, error) {
	var c rocksCounters
	err := e.conn.QueryRowContext(ctx, `SELECT
		  coalesce(sum(CASE WHEN VARIABLE_NAME = 'ROCKSDB_WAL_BYTES' THEN CAST(VARIABLE_VALUE AS UNSIGNED) END), 0),
		  coalesce(sum(CASE WHEN VARIABLE_NAME IN ('ROCKSDB_ROWS_INSERTED', 'ROCKSDB_ROWS_DELETED', 'ROCKSDB_ROWS_UPDATED') THEN CAST(VARIABLE_VALUE AS UNSIGNED) END), 0)
		FROM information_schema.GLOBAL_STATUS`).Scan(&c.walBytes, &c.rows)
	return c, err
}

// perfCounts are the table's RocksDB perf context counters (summed over
// its partitions), which the run's session counts at level 2.
type perfCounts map[string]float64

func (e *Engine) perf(ctx context.Context, table string) (perfCounts, error) {
	rows, err := e.conn.QueryContext(ctx, `SELECT STAT_TYPE, sum(VALUE) FROM information_schema.ROCKSDB_PERF_CONTEXT
		WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? GROUP BY STAT_TYPE`, e.database, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	p := perfCounts{}
	for rows.Next() {
		var k string
		var v float64
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		p[k] = v
	}
	return p, rows.Err()
}

// blocks are the blocks a read touched: read from the files, or found in
// the block cache.
func (p perfCounts) blocks(before perfCounts) float64 {
	return p["BLOCK_READ_COUNT"] - before["BLOCK_READ_COUNT"] + p["BLOCK_CACHE_HIT_COUNT"] - before["BLOCK_CACHE_HIT_COUNT"]
}

func (e *Engine) Load(ctx context.Context, l engine.Load) (out engine.Figures, err error) {
	colType := innodb.Column(l)
	out = engine.Figures{Engine: engine.MyRocks, ColumnType: colType, Metrics: map[string]float64{}}
	table := e.database + "." + l.Table
	fail := func(what string, err error) (engine.Figures, error) {
		return out, fmt.Errorf("compare: myrocks: %s %s: %w", what, table, err)
	}
	cf, err := e.takeCF(ctx)
	if err != nil {
		return fail("load", err)
	}
	defer e.releaseCF(cf)
	if err := e.emptyCF(ctx, cf); err != nil {
		return fail("load", err)
	}
	n := l.Keys.N()
	d := n / engine.ExpireShare
	// Keys that sort rows by age go into a table partitioned at the
	// expiry's bound, as a store that drops a day at a time is.
	var cut []byte
	ddl := fmt.Sprintf("CREATE TABLE %s (id %s NOT NULL, payload BINARY(%d) NOT NULL, PRIMARY KEY (id) COMMENT 'cfname=%s') ENGINE=ROCKSDB", table, colType, len(l.Value), cf)
	insert := innodb.InsertBatches(ctx, e.conn, table, l)
	key, column := "id", "payload"
	switch {
	case e.like != nil:
		if ddl, err = e.like.Def.CopyStatement(table, colType, cf); err != nil {
			return fail("copy the table", err)
		}
		insert = innodb.LikeBatches(ctx, e.conn, innodb.LikeInsert(e.like, e.database, table, l.Bigint()), l)
		key, column = e.like.Key, e.like.Key
		if len(e.like.Columns) > 0 {
			column = e.like.Columns[0]
		}
	case l.ByAge && d > 0:
		cut = engine.SortedKeys(l)[d]
		ddl = fmt.Sprintf("CREATE TABLE %s (id %s NOT NULL, payload BINARY(%d) NOT NULL, PRIMARY KEY (id) COMMENT 'p_old_cfname=%s;p_new_cfname=%s') ENGINE=ROCKSDB PARTITION BY RANGE COLUMNS(id) (PARTITION p_old VALUES LESS THAN (%s), PARTITION p_new VALUES LESS THAN (MAXVALUE))",
			table, colType, len(l.Value), cf, cf, mysqlLiteral(l, cut))
	}
	if _, err := e.conn.ExecContext(ctx, ddl); err != nil {
		return fail("create table", err)
	}
	defer e.conn.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	// The CREATE TABLE made the column family; now it takes the tree.
	if _, err := e.conn.ExecContext(ctx, "SET GLOBAL rocksdb_update_cf_options = ?", cf+"={"+myrocksCFOptions+"};"); err != nil {
		return fail("set the column family's options", err)
	}
	if _, err := e.conn.ExecContext(ctx, "SET @idkit_payload = ?, SESSION rocksdb_perf_context_level = 2", l.Value); err != nil {
		return fail("set payload", err)
	}
	s0, err := e.cfStats(ctx, cf)
	if err != nil {
		return fail("read the column family's statistics", err)
	}
	c0, err := e.counters(ctx)
	if err != nil {
		return fail("read the server's counters", err)
	}
	start := time.Now()
	if _, err := l.Batches(insert, nil); err != nil {
		return fail("load", err)
	}
	if err := e.settle(ctx, cf); err != nil {
		return fail("settle", err)
	}
	spent := time.Since(start)
	s1, err := e.cfStats(ctx, cf)
	if err != nil {
		return fail("read the column family's statistics", err)
	}
	c1, err := e.counters(ctx)
	if err != nil {
		return fail("read the server's counters", err)
	}
	m := out.Metrics
	in := c1.walBytes - c0.walBytes
	m["inserts_per_second"] = engine.Rate(n, spent)
	m["bytes_written"] = s1.written - s0.written
	m["bytes_written_per_insert"] = engine.PerKey(m["bytes_written"], n)
	m["bytes_moved"] = s1.moved - s0.moved
	m["bytes_in"] = in
	if in > 0 {
		m["write_amp"] = m["bytes_written"] / in
		m["moved_per_byte_in"] = m["bytes_moved"] / in
	}
	if c1.rows-c0.rows == float64(n) {
		m["wal_bytes_per_insert"] = engine.PerKey(in, n)
	} else {
		m["disturbed"] = 1 // another session changed MyRocks rows: the log bytes are not the load's alone
	}
	m["table_bytes"] = s1.size
	m["bytes_per_key"] = engine.PerKey(s1.size, n)
	if rows := float64(n) * float64(l.Keys.Len+len(l.Value)); rows > 0 && e.like == nil {
		m["space_amp"] = s1.size / rows
	}
	if err := e.reads(ctx, l, table, key, column, m); err != nil {
		return fail("reads", err)
	}
	if e.like != nil {
		if out.Indexes, err = e.copyIndexes(ctx, l.Table, m); err != nil {
			return fail("index figures", err)
		}
		return out, nil // the expiry is measured on the plain tables
	}
	if err := e.expire(ctx, l, table, cf, cut, m); err != nil {
		return fail("expiry", err)
	}
	s2, err := e.cfStats(ctx, cf)
	if err != nil {
		return fail("read the column family's statistics", err)
	}
	m["bytes_written_all"] = s2.written - s0.written
	return out, nil
}

// WriteLike writes the sample into the run's database (writeMySQLLike)
// and makes every later Load of n keys a load into a MyRocks copy of the
// table, every index of it in the load's column family.
func (e *Engine) WriteLike(ctx context.Context, ls *engine.Source, n int) error {
	cf, err := e.takeCF(ctx)
	if err != nil {
		return fmt.Errorf("%w %s: myrocks: %w", engine.ErrLike, ls.Name, err)
	}
	defer e.releaseCF(cf)
	shape, err := innodb.WriteLike(ctx, e.conn, e.database, ls, n, func(table, keyType string) (string, error) {
		return ls.Def.(*innodb.Like).CopyStatement(table, keyType, cf)
	})
	if err != nil {
		return err
	}
	e.like = shape
	ls.Table.Notes = append(ls.Table.Notes,
		"each copy keeps all its indexes in one column family of the run's pool, whose compaction statistics are the copy's alone",
		"the expiry of the oldest rows is measured on the plain tables of the other loads, not on the copies")
	return nil
}

// copyIndexes returns the figures of each index of a copy: its bytes in
// the column family's tables, once the load has settled.
func (e *Engine) copyIndexes(ctx context.Context, table string, m map[string]float64) ([]engine.IndexFigures, error) {
	indexes, err := innodb.Indexes(ctx, e.conn, e.database, table)
	if err != nil {
		return nil, err
	}
	sizes, err := innodb.RocksIndexBytes(ctx, e.conn, e.database, table)
	if err != nil {
		return nil, err
	}
	var out []engine.IndexFigures
	var all float64
	for _, ix := range indexes {
		f := engine.IndexFigures{Name: ix.DisplayName(), Bytes: sizes[ix.Name]}
		out = append(out, f)
		all += float64(f.Bytes)
		if ix.Name == "PRIMARY" {
			m["index_bytes"] = float64(f.Bytes)
		} else {
			m["secondary_index_bytes"] += float64(f.Bytes)
		}
	}
	n := int(m["rows"])
	m["all_index_bytes"] = all
	m["all_index_bytes_per_key"] = engine.PerKey(all, n)
	return out, nil
}

// reads counts the rows, then measures the blocks a point lookup touches
// and the tables its bloom filters rule out (none without a filter), over
// keys spread over the table and over its newest 1%, and the blocks of a
// range scan through the key that reads the newest 1%.
func (e *Engine) reads(ctx context.Context, l engine.Load, table, key, column string, m map[string]float64) error {
	n := l.Keys.N()
	var rows int64
	if err := e.conn.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&rows); err != nil {
		return fmt.Errorf("count the rows: %w", err)
	}
	m["rows"] = float64(rows)
	spread, newest := engine.LookupKeys(n)
	for _, q := range []struct {
		key  string
		keys []int
	}{{"lookup", spread}, {"lookup_newest", newest}} {
		before, err := e.perf(ctx, l.Table)
		if err != nil {
			return err
		}
		found := 0
		for _, i := range q.keys {
			var payload []byte
			err := e.conn.QueryRowContext(ctx, "SELECT "+column+" FROM "+table+" WHERE "+key+" = ?", innodb.Arg(l, i)).Scan(&payload)
			if err != nil {
				return fmt.Errorf("point lookup of key %d: %w", i, err)
			}
			found++
		}
		after, err := e.perf(ctx, l.Table)
		if err != nil {
			return err
		}
		k := float64(found)
		m[q.key+"_blocks"] = after.blocks(before) / k
		m[q.key+"_filter_hits"] = (after["BLOOM_SST_MISS_COUNT"] - before["BLOOM_SST_MISS_COUNT"]) / k
	}
	before, err := e.perf(ctx, l.Table)
	if err != nil {
		return err
	}
	lowest := engine.LowestNewest(l)
	var scanned int64
	if err := e.conn.QueryRowContext(ctx, "SELECT count("+column+") FROM "+table+" WHERE "+key+" >= ?", innodb.Arg(l, lowest)).Scan(&scanned); err != nil {
		return fmt.Errorf("range scan of the newest rows: %w", err)
	}
	after, err := e.perf(ctx, l.Table)
	if err != nil {
		return err
	}
	m["newest_scan_blocks"] = after.blocks(before)
	m["newest_scan_rows"] = float64(scanned) / float64(n-engine.NewestStart(n))
	return nil
}

// expire deletes the oldest tenth of the rows the way the keys allow, as
// the Pebble engine does (see pebbleEngine.expire), from a column family
// compacted into its last level first (not counted): by dropping the
// oldest partition when the keys sort rows by age (cut is its bound),
// which MyRocks deletes by key range and whose files it drops whole, or
// by DELETE of the first rows in generation order, in batches. Then it
// waits for the column family to settle, counts the blocks and deletion
// markers a scan over the expired keys' range meets, and when its tables
// have not shrunk by reclaimedShare of the expired share, compacts it.
func (e *Engine) expire(ctx context.Context, l engine.Load, table, cf string, cut []byte, m map[string]float64) error {
	n := l.Keys.N()
	d := n / engine.ExpireShare
	if d == 0 {
		return nil
	}
	if _, err := e.conn.ExecContext(ctx, "SET GLOBAL rocksdb_compact_cf = ?", cf); err != nil {
		return fmt.Errorf("compact into the last level: %w", err)
	}
	if err := e.settle(ctx, cf); err != nil {
		return err
	}
	s0, err := e.cfStats(ctx, cf)
	if err != nil {
		return err
	}
	c0, err := e.counters(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	var scan string // the expired keys' range
	var bounds []any
	if cut != nil {
		if _, err := e.conn.ExecContext(ctx, "ALTER TABLE "+table+" DROP PARTITION p_old"); err != nil {
			return fmt.Errorf("drop the oldest partition: %w", err)
		}
		m["expiry_range"] = 1
		scan, bounds = "id < ?", []any{innodb.KeyArg(l, cut)}
	} else {
		lower, upper := l.Keys.At(0), l.Keys.At(0)
		for i := 1; i < d; i++ {
			if k := l.Keys.At(i); bytes.Compare(k, lower) < 0 {
				lower = k
			} else if bytes.Compare(k, upper) > 0 {
				upper = k
			}
		}
		scan, bounds = "id BETWEEN ? AND ?", []any{innodb.KeyArg(l, lower), innodb.KeyArg(l, upper)}
		for lo := 0; lo < d; lo += innodb.InList {
			hi := min(lo+innodb.InList, d)
			args := make([]any, 0, hi-lo)
			for i := lo; i < hi; i++ {
				args = append(args, innodb.Arg(l, i))
			}
			if _, err := e.conn.ExecContext(ctx, "DELETE FROM "+table+" WHERE id IN ("+strings.TrimSuffix(strings.Repeat("?,", hi-lo), ",")+")", args...); err != nil {
				return fmt.Errorf("delete rows: %w", err)
			}
		}
		m["expiry_range"] = 0
	}
	if err := e.settle(ctx, cf); err != nil {
		return err
	}
	before, err := e.perf(ctx, l.Table)
	if err != nil {
		return err
	}
	var left int64
	if err := e.conn.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE "+scan, bounds...).Scan(&left); err != nil {
		return fmt.Errorf("scan of the expired range: %w", err)
	}
	after, err := e.perf(ctx, l.Table)
	if err != nil {
		return err
	}
	m["expiry_scan_blocks"] = after.blocks(before)
	m["expiry_scan_skipped"] = after["INTERNAL_DELETE_SKIPPED_COUNT"] - before["INTERNAL_DELETE_SKIPPED_COUNT"]
	expired := s0.size * float64(d) / float64(n)
	s1, err := e.cfStats(ctx, cf)
	if err != nil {
		return err
	}
	m["expiry_reclaimed_auto"] = (s0.size - s1.size) / expired
	m["expiry_manual"] = 0
	if s0.size-s1.size < engine.ReclaimedShare*expired {
		m["expiry_manual"] = 1
		if _, err := e.conn.ExecContext(ctx, "SET GLOBAL rocksdb_compact_cf = ?", cf); err != nil {
			return fmt.Errorf("manual compaction: %w", err)
		}
		if err := e.settle(ctx, cf); err != nil {
			return err
		}
		if s1, err = e.cfStats(ctx, cf); err != nil {
			return err
		}
	}
	spent := time.Since(start)
	c1, err := e.counters(ctx)
	if err != nil {
		return err
	}
	written := s1.written - s0.written + c1.walBytes - c0.walBytes
	m["expiry_rows"] = float64(d)
	m["expiry_bytes"] = written
	m["expiry_bytes_per_row"] = written / float64(d)
	m["expiry_seconds"] = spent.Seconds()
	m["expiry_reclaimed"] = (s0.size - s1.size) / expired
	if in := m["bytes_in"]; in > 0 {
		m["lifetime_write_amp"] = m["write_amp"] + written*float64(n)/float64(d)/in
	}
	return nil
}

// mysqlLiteral writes a key of l as an SQL literal.
func mysqlLiteral(l engine.Load, key []byte) string {
	k := engine.Load{Keys: engine.KeySet{Len: len(key), Data: key}, Int63: l.Int63}
	return innodb.KeyLiteral(k, 0)
}
