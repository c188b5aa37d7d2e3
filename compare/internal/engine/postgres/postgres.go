package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Engine loads each key set into a fresh table of a schema the run
// creates (idkit_compare_<random>) and drops at the end. Each batch is one
// INSERT ... SELECT FROM unnest(...) run under EXPLAIN (ANALYZE, BUFFERS,
// WAL), which executes and commits it and reports, for that statement
// alone, the shared buffers it dirtied and the WAL records, full-page
// images and bytes it wrote; other sessions on the server do not count.
//
// A long-lived database checkpoints every few minutes, and the first
// change to a page after a checkpoint logs the whole page (a full-page
// image) and dirties it again. The load models that by running CHECKPOINT
// every Load.CheckpointEvery inserts (and once before the load), so
// pages dirtied and WAL bytes are those of a database that checkpoints at
// that interval of inserts.
//
// In a --like run whose copies live on the source server (no scratch
// server), the engine is polite: it runs no CHECKPOINT and creates no
// extension there, and leaves out the figures that need checkpoints.
type Engine struct {
	dsn       string
	sourceDSN string // the server with the user's table, in a --like run
	polite    bool   // the engine's server is the source: no CHECKPOINT
	conn      *pgx.Conn
	pid       uint32 // the server process of conn
	schema    string
	version   string
	like      *engine.Shape[*pgLike] // set by prepareLike: load into copies of the user's table
	// pageinspect says whether the run may read the index's pages, for
	// the leaf pages of the newest rows.
	pageinspect bool
	// walStart and checkpointsStart are the server's WAL position and
	// checkpoint count when the run began, for a polite engine's report
	// of the load it put on the source.
	walStart, checkpointsStart int64
	throttle                   *engine.Throttle // nil: the loads never pause
}

func (e *Engine) Throttle() *engine.Throttle { return e.throttle }

// Open connects to dsn and creates the run's schema there. In a
// --like run sourceDSN names the server with the user's table, the same
// as dsn when polite.
func Open(ctx context.Context, dsn, sourceDSN string, polite bool, lim engine.Limits) (*Engine, error) {
	conn, err := Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("compare: postgres: connect: %w", err)
	}
	e := &Engine{dsn: dsn, sourceDSN: sourceDSN, polite: polite, conn: conn, pid: conn.PgConn().PID(), schema: "idkit_compare_" + engine.RunSuffix()}
	e.throttle = engine.NewThrottle(lim, engine.Postgres, Busy(conn))
	fail := func(what string, err error) (*Engine, error) {
		conn.Close(ctx)
		return nil, fmt.Errorf("compare: postgres: %s: %w", what, err)
	}
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&e.version); err != nil {
		return fail("version", err)
	}
	if polite {
		if err := conn.QueryRow(ctx, `SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter`).
			Scan(&e.walStart, &e.checkpointsStart); err != nil {
			return fail("read the WAL position", err)
		}
		// pageinspect where it is there and the user may run it: a polite
		// engine creates no extension.
		var err error
		if e.pageinspect, err = pgMayInspect(ctx, conn); err != nil {
			return fail("pageinspect", err)
		}
	} else {
		// pgstattuple is a database-wide extension: create it if missing
		// and leave it, since another run on the same server may be using
		// it. A polite engine only uses it (the preflight checked).
		if err := createExtension(ctx, conn, "pgstattuple"); err != nil {
			return fail("create extension pgstattuple", err)
		}
		var err error
		if e.pageinspect, err = pgPageinspect(ctx, conn); err != nil {
			return fail("pageinspect", err)
		}
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+e.schema); err != nil {
		return fail("create schema", err)
	}
	return e, nil
}

func (e *Engine) Info() engine.Info {
	settings := "8192-byte pages, autovacuum off for the tables, CHECKPOINT every interval, schema " + e.schema
	switch {
	case e.polite && e.pageinspect:
		settings = "8192-byte pages, autovacuum off for the tables, no CHECKPOINT (the copies are on the source server): the pages changed in each interval are counted from their LSNs (pageinspect), schema " + e.schema
	case e.polite:
		settings = "8192-byte pages, autovacuum off for the tables, no CHECKPOINT (the copies are on the source server), schema " + e.schema +
			"; the pages changed in each interval and the newest rows' leaf pages are left out: pageinspect is not there or not for this user (a superuser's, or the run with --scratch)"
	case !e.pageinspect:
		settings += "; the newest rows' leaf pages are left out: pageinspect is for superusers (CREATE EXTENSION pageinspect, and the run as a superuser)"
	}
	return engine.Info{Name: engine.Postgres, Version: "PostgreSQL " + e.version + engine.Driver("github.com/jackc/pgx/v5"), Settings: settings}
}

// Created names what the run created on the server, for the message of a
// stopped run.
func (e *Engine) Created() string {
	return fmt.Sprintf("schema %s on PostgreSQL %s", e.schema, engine.ServerName(e.conn.Config().Host, e.conn.Config().Port, e.conn.Config().Database))
}

// Close drops the run's schema and everything in it. When a cancelled
// statement closed the run's connection, its server process may still be
// running the statement: Close ends that process first (a user may end
// its own), on a new connection, and waits for locks at most a few
// seconds, so that a stopped run ends at once.
func (e *Engine) Close(ctx context.Context) error {
	drop := "DROP SCHEMA IF EXISTS " + e.schema + " CASCADE"
	left := func(err error) error {
		return fmt.Errorf("compare: postgres: %s is left behind (%v); remove it with: %s", e.Created(), err, drop)
	}
	if e.conn.IsClosed() {
		conn, err := Connect(ctx, e.dsn)
		if err != nil {
			return left(err)
		}
		e.conn = conn
		if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend($1, 3000)", int32(e.pid)); err != nil {
			conn.Close(ctx)
			return left(err)
		}
	}
	_, err := e.conn.Exec(ctx, "SET lock_timeout = '3s'")
	if err == nil {
		_, err = e.conn.Exec(ctx, drop)
	}
	e.conn.Close(ctx)
	if err != nil {
		return left(err)
	}
	return nil
}

// ServerLoad says how much WAL the server wrote and how often it
// checkpointed since the engine opened: the load a run without a scratch
// server put on the source, with any other session's.
func (e *Engine) ServerLoad(ctx context.Context) (string, int64, error) {
	if !e.polite {
		return "", 0, nil
	}
	var wal, checkpoints int64
	if err := e.conn.QueryRow(ctx, `SELECT pg_current_wal_lsn() - '0/0'::pg_lsn, checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter`).
		Scan(&wal, &checkpoints); err != nil {
		return "", 0, fmt.Errorf("compare: postgres: read the WAL position: %w", err)
	}
	return fmt.Sprintf("load on this server, which held the copies: it wrote %s of WAL and checkpointed %d times during the run (this run's and any other session's work); run with --scratch to build the copies elsewhere",
		engine.MiB(float64(wal-e.walStart)), checkpoints-e.checkpointsStart), wal - e.walStart, nil
}

// explained is what a load's statements reported under EXPLAIN (ANALYZE,
// BUFFERS, WAL), summed over its batches, with the time they took, the
// server's WAL position difference over the load, and, counted without a
// checkpoint, the pages changed in each interval.
type explained struct {
	dirtied, written, records, fpi, walBytes int64
	lsnBytes                                 int64
	spent                                    time.Duration
	// changed sums, over the load's intervals, the pages of the copy
	// whose LSN moved in each (counted: the engine is polite and may read
	// pages with pageinspect).
	changed int64
	counted bool
	// keyChanged sums, over the load's intervals, the pages of the
	// primary-key index whose LSN moved in each (keyCounted: the engine
	// may read pages with pageinspect, on either path).
	keyChanged int64
	keyCounted bool
	// checkpoints is the number of checkpoints the server took during
	// the load, on a polite engine, which forces none.
	checkpoints int64
}

// explainLoad runs l's batches through stmt, an EXPLAIN (ANALYZE, BUFFERS,
// WAL, FORMAT JSON) of one INSERT whose arguments args gives for keys
// lo..hi-1, with a CHECKPOINT before the load and at each of its
// intervals, and sums what the batches reported. A polite engine forces
// no checkpoint: where it may read pages (pageinspect), it counts at each
// interval the pages of the relations rels whose LSN moved since the
// last, which are the pages a checkpoint there would have written. On
// either path, where it may read pages, it counts those of the primary-key
// index key (0: none) apart: the pages the key's order changes.
func (e *Engine) explainLoad(ctx context.Context, l engine.Load, stmt string, args func(lo, hi int) []any, rels []uint32, key uint32) (explained, error) {
	var x explained
	// The server-wide LSN difference over the load counts, besides the
	// statements' WAL, their commit records, the checkpoints' records and
	// any other session's writes: a cross-check, never less.
	lsn := func() (int64, error) {
		var n int64
		err := e.conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn").Scan(&n)
		return n, err
	}
	checkpoints := func() (int64, error) {
		var n int64
		err := e.conn.QueryRow(ctx, "SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter").Scan(&n)
		return n, err
	}
	var since, ckptBefore int64
	x.counted = e.polite && e.pageinspect && len(rels) > 0
	x.keyCounted = e.pageinspect && key != 0
	// count adds the pages changed since the last interval.
	count := func() error {
		if !x.counted && !x.keyCounted {
			return nil
		}
		scan := rels // the key's index among them
		if !x.counted {
			scan = []uint32{key}
		}
		var all, ofKey int64
		if err := e.conn.QueryRow(ctx, pgChangedPages, scan, since, key).Scan(&all, &ofKey); err != nil {
			return fmt.Errorf("pages changed in the interval: %w", err)
		}
		if x.counted {
			x.changed += all
		}
		if x.keyCounted {
			x.keyChanged += ofKey
		}
		var err error
		since, err = lsn()
		return err
	}
	interval := count
	if !e.polite {
		interval = func() error {
			if err := count(); err != nil {
				return err
			}
			_, err := e.conn.Exec(ctx, "CHECKPOINT")
			return err
		}
		if _, err := e.conn.Exec(ctx, "CHECKPOINT"); err != nil {
			return x, fmt.Errorf("checkpoint before loading: %w", err)
		}
	}
	if !x.counted && !x.keyCounted && e.polite {
		interval = nil
	}
	before, err := lsn()
	if err != nil {
		return x, fmt.Errorf("read the WAL position: %w", err)
	}
	since = before
	if e.polite {
		if ckptBefore, err = checkpoints(); err != nil {
			return x, fmt.Errorf("read the checkpoint count: %w", err)
		}
	}
	insert := func(lo, hi int) error {
		var plan []byte
		if err := e.conn.QueryRow(ctx, stmt, args(lo, hi)...).Scan(&plan); err != nil {
			return err
		}
		var ex []explainBuffers
		if err := json.Unmarshal(plan, &ex); err != nil || len(ex) != 1 {
			return fmt.Errorf("unexpected EXPLAIN output %.200q: %v", plan, err)
		}
		p := ex[0].Plan
		x.dirtied += p.Dirtied
		x.written += p.Written
		x.records += p.Records
		x.fpi += p.FPI
		x.walBytes += p.Bytes
		return nil
	}
	if x.spent, err = l.Batches(insert, interval); err != nil {
		return x, err
	}
	if err := count(); err != nil { // the last interval, or none
		return x, err
	}
	after, err := lsn()
	if err != nil {
		return x, fmt.Errorf("read the WAL position: %w", err)
	}
	x.lsnBytes = after - before
	if e.polite {
		ckptAfter, err := checkpoints()
		if err != nil {
			return x, fmt.Errorf("read the checkpoint count: %w", err)
		}
		x.checkpoints = ckptAfter - ckptBefore
	}
	return x, nil
}

// pgChangedPages counts the pages of the relations $1 whose LSN is past
// $2: the pages changed since that WAL position, each read with
// pageinspect from shared buffers, where the load left them; and, apart,
// those of relation $3 (the primary-key index) among them.
const pgChangedPages = `SELECT count(*), count(*) FILTER (WHERE r.rel = $3::oid) FROM unnest($1::oid[]) AS r(rel),
	LATERAL generate_series(0, pg_relation_size(r.rel) / current_setting('block_size')::bigint - 1) AS b(blkno)
	WHERE (page_header(get_raw_page(r.rel::regclass::text, b.blkno))).lsn - '0/0'::pg_lsn > $2::bigint`

// checkpointed says whether a polite engine's load saw a checkpoint of
// the server's: its statements' WAL then holds full-page images.
func (x explained) checkpointed() bool { return x.checkpoints > 0 || x.fpi > 0 }

// metrics sets the figures of a load of n keys that x describes. Without
// checkpoints (polite) the pages a load dirtied and the full-page images
// it logged depend on when the server last checkpointed, and the WAL
// position moves with every session's writes: those are left out. The
// statements' WAL is then their records alone, kept when no checkpoint
// of the server's fell in the load, and the pages changed per interval,
// counted from the pages' LSNs, stand for the pages dirtied.
func (x explained) metrics(m map[string]float64, n int, polite bool) {
	m["inserts_per_second"] = engine.Rate(n, x.spent)
	m["wal_records"] = float64(x.records)
	if x.keyCounted {
		m["key_pages_changed"] = float64(x.keyChanged)
		m["key_pages_changed_per_1000"] = engine.PerThousand(float64(x.keyChanged), n)
	}
	if polite {
		if !x.checkpointed() {
			m["wal_bytes_no_fpi"] = float64(x.walBytes)
			m["wal_bytes_no_fpi_per_insert"] = engine.PerKey(float64(x.walBytes), n)
		}
		if x.counted {
			m["pages_changed"] = float64(x.changed)
			m["pages_changed_per_1000"] = engine.PerThousand(float64(x.changed), n)
		}
		return
	}
	m["pages_dirtied"] = float64(x.dirtied)
	m["pages_dirtied_per_1000"] = engine.PerThousand(float64(x.dirtied), n)
	m["pages_written_by_backend"] = float64(x.written)
	m["wal_fpi"] = float64(x.fpi)
	m["wal_fpi_per_1000"] = engine.PerThousand(float64(x.fpi), n)
	m["wal_bytes"] = float64(x.walBytes)
	m["wal_bytes_per_insert"] = engine.PerKey(float64(x.walBytes), n)
	m["wal_bytes_lsn"] = float64(x.lsnBytes)
	m["wal_bytes_lsn_per_insert"] = engine.PerKey(float64(x.lsnBytes), n)
}

// postgresColumn is the key column a user would choose: bigint for 64-bit
// integers, uuid for 16-byte keys (UUIDs and ULIDs), bytea for the rest.
func postgresColumn(l engine.Load) (colType, array string) {
	switch {
	case l.Bigint():
		return "bigint", "bigint[]"
	case l.Keys.Len == 16:
		return "uuid", "uuid[]"
	default:
		return "bytea", "bytea[]"
	}
}

// explainBuffers is the part of EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT
// JSON) the load reads: the top node's counts include its children's.
type explainBuffers struct {
	Plan struct {
		Dirtied int64 `json:"Shared Dirtied Blocks"`
		Written int64 `json:"Shared Written Blocks"`
		Records int64 `json:"WAL Records"`
		FPI     int64 `json:"WAL FPI"`
		Bytes   int64 `json:"WAL Bytes"`
	} `json:"Plan"`
}

func (e *Engine) Load(ctx context.Context, l engine.Load) (engine.Figures, error) {
	if e.like != nil {
		return e.loadLike(ctx, l)
	}
	colType, array := postgresColumn(l)
	out := engine.Figures{Engine: engine.Postgres, ColumnType: colType, Metrics: map[string]float64{}}
	table := e.schema + "." + l.Table
	index := e.schema + "." + l.Table + "_pkey"
	fail := func(what string, err error) (engine.Figures, error) {
		return out, fmt.Errorf("compare: postgres: %s %s: %w", what, table, err)
	}
	if _, err := e.conn.Exec(ctx, fmt.Sprintf(
		"CREATE TABLE %s (id %s PRIMARY KEY, payload bytea NOT NULL) WITH (autovacuum_enabled = false)", table, colType)); err != nil {
		return fail("create table", err)
	}
	defer e.conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)

	stmt := fmt.Sprintf("EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) INSERT INTO %s (id, payload) SELECT k, $2 FROM unnest($1::%s) AS k", table, array)
	x, err := e.explainLoad(ctx, l, stmt, func(lo, hi int) []any { return []any{pgKeys(l, colType, lo, hi), l.Value} }, nil, 0)
	if err != nil {
		return fail("load", err)
	}
	n := l.Keys.N()
	var heapBytes, indexBytes, leafPages int64
	var density, fragmentation float64
	if err := e.conn.QueryRow(ctx, "SELECT pg_relation_size($1::regclass), pg_relation_size($2::regclass)", table, index).
		Scan(&heapBytes, &indexBytes); err != nil {
		return fail("relation sizes", err)
	}
	if err := e.conn.QueryRow(ctx, "SELECT leaf_pages, avg_leaf_density, leaf_fragmentation FROM pgstatindex($1)", index).
		Scan(&leafPages, &density, &fragmentation); err != nil {
		return fail("pgstatindex", err)
	}
	m := out.Metrics
	x.metrics(m, n, false)
	m["index_bytes"] = float64(indexBytes)
	m["index_bytes_per_key"] = engine.PerKey(float64(indexBytes), n)
	m["heap_bytes"] = float64(heapBytes)
	m["leaf_pages"] = float64(leafPages)
	m["leaf_density"] = density / 100
	if !math.IsNaN(fragmentation) {
		m["leaf_fragmentation"] = fragmentation / 100
	}
	if err := e.pgReads(ctx, l, colType, table, index, "id", "payload", m); err != nil {
		return fail("reads", err)
	}
	return out, nil
}

// createExtension creates extension name in the connection's database if
// it is missing, and leaves it: another run on the same server may be
// using it.
func createExtension(ctx context.Context, conn *pgx.Conn, name string) error {
	_, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS "+name)
	var pgErr *pgconn.PgError
	// Two runs creating it at once: one loses the race on the catalog (a
	// duplicate key, or the extension found to exist).
	if errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "42710") {
		return nil
	}
	return err
}

// LoadConcurrent inserts l's keys into a table of their own through
// writers connections at once, with no checkpoints, and samples the
// sessions' wait events in pg_stat_activity on the run's own connection.
// The sessions carry an application_name of the run's, which picks them
// out there.
func (e *Engine) LoadConcurrent(ctx context.Context, l engine.Load, writers int) (*engine.ConcurrentLoad, error) {
	colType, array := postgresColumn(l)
	table := e.schema + "." + l.Table + "_concurrent"
	fail := func(what string, err error) (*engine.ConcurrentLoad, error) {
		return nil, fmt.Errorf("compare: postgres: %s %s: %w", what, table, err)
	}
	if _, err := e.conn.Exec(ctx, fmt.Sprintf(
		"CREATE TABLE %s (id %s PRIMARY KEY, payload bytea NOT NULL) WITH (autovacuum_enabled = false)", table, colType)); err != nil {
		return fail("create table", err)
	}
	defer e.conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)
	cfg, err := pgConfig(e.dsn)
	if err != nil {
		return fail("parse the DSN", err)
	}
	app := e.schema + "_writer"
	cfg.RuntimeParams["application_name"] = app
	stmt := fmt.Sprintf("INSERT INTO %s (id, payload) SELECT k, $2 FROM unnest($1::%s) AS k", table, array)
	sessions := make([]engine.Session, writers)
	for w := range sessions {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return fail(fmt.Sprintf("connect writer %d of", w), err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		sessions[w] = engine.Session{
			ID: fmt.Sprintf("pid %d", conn.PgConn().PID()),
			Insert: func(ctx context.Context, idx []int) error {
				_, err := conn.Exec(ctx, stmt, pgKeysAt(l, colType, idx), l.Value)
				return err
			},
		}
	}
	sample := func(ctx context.Context) (ids, events []string, err error) {
		rows, err := e.conn.Query(ctx, `SELECT 'pid ' || pid, coalesce(wait_event_type || ': ' || wait_event, 'CPU')
			FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'`, app)
		if err != nil {
			return nil, nil, err
		}
		for rows.Next() {
			var id, ev string
			if err := rows.Scan(&id, &ev); err != nil {
				return nil, nil, err
			}
			ids, events = append(ids, id), append(events, ev)
		}
		return ids, events, rows.Err()
	}
	c, err := engine.RunConcurrent(ctx, l, sessions, sample)
	if err != nil {
		return fail("load", err)
	}
	var rows int
	if err := e.conn.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&rows); err != nil {
		return fail("count", err)
	}
	if rows != l.Keys.N() {
		return fail("count", fmt.Errorf("%d rows after inserting %d keys", rows, l.Keys.N()))
	}
	return c, nil
}
