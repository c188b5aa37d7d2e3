package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// postgresEngine loads each key set into a fresh table of a schema the run
// creates (idkit_compare_<random>) and drops at the end. Each batch is one
// INSERT ... SELECT FROM unnest(...) run under EXPLAIN (ANALYZE, BUFFERS,
// WAL), which executes and commits it and reports, for that statement
// alone, the shared buffers it dirtied and the WAL records, full-page
// images and bytes it wrote; other sessions on the server do not count.
//
// A long-lived database checkpoints every few minutes, and the first
// change to a page after a checkpoint logs the whole page (a full-page
// image) and dirties it again. The load models that by running CHECKPOINT
// every dbLoad.checkpointEvery inserts (and once before the load), so
// pages dirtied and WAL bytes are those of a database that checkpoints at
// that interval of inserts.
type postgresEngine struct {
	dsn     string
	conn    *pgx.Conn
	schema  string
	version string
	like    *likeShape // set by prepareLike: load into copies of the user's table
}

func openPostgres(ctx context.Context, dsn string) (*postgresEngine, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("compare: postgres: connect: %w", err)
	}
	e := &postgresEngine{dsn: dsn, conn: conn, schema: "idkit_compare_" + runSuffix()}
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&e.version); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("compare: postgres: %w", err)
	}
	// pgstattuple is a database-wide extension: create it if missing and
	// leave it, since another run on the same server may be using it.
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pgstattuple"); err != nil {
		var pgErr *pgconn.PgError
		// Two runs creating it at once: one loses the race on the catalog
		// (a duplicate key, or the extension found to exist).
		if !errors.As(err, &pgErr) || (pgErr.Code != "23505" && pgErr.Code != "42710") {
			conn.Close(ctx)
			return nil, fmt.Errorf("compare: postgres: create extension pgstattuple: %w", err)
		}
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+e.schema); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("compare: postgres: create schema: %w", err)
	}
	return e, nil
}

func (e *postgresEngine) Info() EngineInfo {
	return EngineInfo{
		Name: EnginePostgres, Version: "PostgreSQL " + e.version + driver("github.com/jackc/pgx/v5"),
		Settings: "8192-byte pages, autovacuum off for the tables, CHECKPOINT every interval, schema " + e.schema,
	}
}

// Close drops the run's schema and everything in it, on a new connection
// if a cancelled statement closed the run's.
func (e *postgresEngine) Close(ctx context.Context) error {
	if e.conn.IsClosed() {
		conn, err := pgx.Connect(ctx, e.dsn)
		if err != nil {
			return fmt.Errorf("compare: postgres: drop schema %s: %w", e.schema, err)
		}
		e.conn = conn
	}
	_, err := e.conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+e.schema+" CASCADE")
	if cerr := e.conn.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("compare: postgres: drop schema %s: %w", e.schema, err)
	}
	return nil
}

// explained is what a load's statements reported under EXPLAIN (ANALYZE,
// BUFFERS, WAL), summed over its batches, with the time they took and the
// server's WAL position difference over the load.
type explained struct {
	dirtied, written, records, fpi, walBytes int64
	lsnBytes                                 int64
	spent                                    time.Duration
}

// explainLoad runs l's batches through stmt, an EXPLAIN (ANALYZE, BUFFERS,
// WAL, FORMAT JSON) of one INSERT whose arguments args gives for keys
// lo..hi-1, with a CHECKPOINT before the load and at each of its
// intervals, and sums what the batches reported.
func (e *postgresEngine) explainLoad(ctx context.Context, l dbLoad, stmt string, args func(lo, hi int) []any) (explained, error) {
	var x explained
	checkpoint := func() error {
		_, err := e.conn.Exec(ctx, "CHECKPOINT")
		return err
	}
	if err := checkpoint(); err != nil {
		return x, fmt.Errorf("checkpoint before loading: %w", err)
	}
	// The server-wide LSN difference over the load counts, besides the
	// statements' WAL, their commit records, the checkpoints' records and
	// any other session's writes: a cross-check, never less.
	lsn := func() (int64, error) {
		var n int64
		err := e.conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn").Scan(&n)
		return n, err
	}
	before, err := lsn()
	if err != nil {
		return x, fmt.Errorf("read the WAL position: %w", err)
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
	if x.spent, err = l.batches(insert, checkpoint); err != nil {
		return x, err
	}
	after, err := lsn()
	if err != nil {
		return x, fmt.Errorf("read the WAL position: %w", err)
	}
	x.lsnBytes = after - before
	return x, nil
}

// metrics sets the figures of a load of n keys that x describes.
func (x explained) metrics(m map[string]float64, n int) {
	m["inserts_per_second"] = rate(n, x.spent)
	m["pages_dirtied"] = float64(x.dirtied)
	m["pages_dirtied_per_1000"] = perThousand(float64(x.dirtied), n)
	m["pages_written_by_backend"] = float64(x.written)
	m["wal_records"] = float64(x.records)
	m["wal_fpi"] = float64(x.fpi)
	m["wal_fpi_per_1000"] = perThousand(float64(x.fpi), n)
	m["wal_bytes"] = float64(x.walBytes)
	m["wal_bytes_per_insert"] = perKey(float64(x.walBytes), n)
	m["wal_bytes_lsn"] = float64(x.lsnBytes)
	m["wal_bytes_lsn_per_insert"] = perKey(float64(x.lsnBytes), n)
}

// postgresColumn is the key column a user would choose: bigint for 64-bit
// integers, uuid for 16-byte keys (UUIDs and ULIDs), bytea for the rest.
func postgresColumn(l dbLoad) (colType, array string) {
	switch {
	case l.bigint():
		return "bigint", "bigint[]"
	case l.keys.Len == 16:
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

func (e *postgresEngine) Load(ctx context.Context, l dbLoad) (EngineLoad, error) {
	if e.like != nil {
		return e.loadLike(ctx, l)
	}
	colType, array := postgresColumn(l)
	out := EngineLoad{Engine: EnginePostgres, ColumnType: colType, Metrics: map[string]float64{}}
	table := e.schema + "." + l.table
	index := e.schema + "." + l.table + "_pkey"
	fail := func(what string, err error) (EngineLoad, error) {
		return out, fmt.Errorf("compare: postgres: %s %s: %w", what, table, err)
	}
	if _, err := e.conn.Exec(ctx, fmt.Sprintf(
		"CREATE TABLE %s (id %s PRIMARY KEY, payload bytea NOT NULL) WITH (autovacuum_enabled = false)", table, colType)); err != nil {
		return fail("create table", err)
	}
	defer e.conn.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table)

	stmt := fmt.Sprintf("EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) INSERT INTO %s (id, payload) SELECT k, $2 FROM unnest($1::%s) AS k", table, array)
	x, err := e.explainLoad(ctx, l, stmt, func(lo, hi int) []any { return []any{pgKeys(l, colType, lo, hi), l.value} })
	if err != nil {
		return fail("load", err)
	}
	n := l.keys.N()
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
	x.metrics(m, n)
	m["index_bytes"] = float64(indexBytes)
	m["index_bytes_per_key"] = perKey(float64(indexBytes), n)
	m["heap_bytes"] = float64(heapBytes)
	m["leaf_pages"] = float64(leafPages)
	m["leaf_density"] = density / 100
	if !math.IsNaN(fragmentation) {
		m["leaf_fragmentation"] = fragmentation / 100
	}
	return out, nil
}
