package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/idkit/idkit/compare/internal/engine"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"
)

// Engine loads each key set into a fresh SQLite file in WAL mode:
// every commit appends one frame per page it changed, so WAL frames per
// 1,000 inserts are the direct analogue of bbolt's pages written.
// Automatic checkpoints are off; the load checkpoints (TRUNCATE) every
// Load.CheckpointEvery inserts and at the end, and counts the frames
// each checkpoint found in the log.
type Engine struct {
	dir     string
	sync    bool
	version string
}

// Open returns the SQLite engine of a run, whose databases go in dir and
// are synced to disk at each commit when sync is set; it reads SQLite's
// version from an in-memory database.
func Open(dir string, sync bool) (engine.Engine, error) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, fmt.Errorf("compare: sqlite: %w", err)
	}
	defer db.Close()
	e := &Engine{dir: dir, sync: sync}
	if err := db.QueryRow("SELECT sqlite_version()").Scan(&e.version); err != nil {
		return nil, fmt.Errorf("compare: sqlite: %w", err)
	}
	return e, nil
}

func (e *Engine) Info() engine.Info {
	return engine.Info{
		Name: engine.SQLite, Version: "SQLite " + e.version + engine.Driver("modernc.org/sqlite"),
		Settings: "WAL, 4096-byte pages, 64 MiB cache, synchronous " + map[bool]string{true: "FULL", false: "OFF"}[e.sync] + ", wal_checkpoint(PASSIVE) every interval",
	}
}

func (e *Engine) Close(context.Context) error { return nil }

// sqliteColumn is the key column a user would choose: the rowid itself for
// 64-bit integers, a BLOB key in a WITHOUT ROWID table for the others.
func sqliteColumn(l engine.Load) (ddl, colType string) {
	if l.Bigint() {
		return "CREATE TABLE t (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)", "INTEGER PRIMARY KEY"
	}
	return "CREATE TABLE t (id BLOB PRIMARY KEY, payload BLOB NOT NULL) WITHOUT ROWID", "BLOB PRIMARY KEY, WITHOUT ROWID"
}

func (e *Engine) Load(ctx context.Context, l engine.Load) (engine.Figures, error) {
	ddl, colType := sqliteColumn(l)
	out := engine.Figures{Engine: engine.SQLite, ColumnType: colType, Metrics: map[string]float64{}}
	path := filepath.Join(e.dir, l.Table+".sqlite")
	syncMode := "OFF"
	if e.sync {
		syncMode = "FULL"
	}
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=synchronous(" + syncMode + ")&_pragma=wal_autocheckpoint(0)&_pragma=page_size(4096)&_pragma=cache_size(-65536)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return out, fmt.Errorf("compare: sqlite %s: %w", path, err)
	}
	defer func() {
		db.Close()
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(path + suffix)
		}
	}()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return out, fmt.Errorf("compare: sqlite %s: %w", path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, ddl); err != nil {
		return out, fmt.Errorf("compare: sqlite: create table: %w", err)
	}
	var frames int64
	checkpoint := func() error {
		var busy, log, done int64
		if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done); err != nil {
			return err
		}
		if busy != 0 || done != log {
			return fmt.Errorf("wal_checkpoint: busy %d, %d of %d frames checkpointed", busy, done, log)
		}
		frames += log
		return nil
	}
	// The table's creation is not part of the load.
	if err := checkpoint(); err != nil {
		return out, fmt.Errorf("compare: sqlite: %w", err)
	}
	frames = 0

	insert := func(lo, hi int) error {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		st, err := tx.PrepareContext(ctx, "INSERT INTO t (id, payload) VALUES (?, ?)")
		if err != nil {
			return err
		}
		defer st.Close()
		for i := lo; i < hi; i++ {
			var key any = l.Keys.At(i)
			if l.Bigint() {
				key = l.Int64At(i)
			}
			if _, err := st.ExecContext(ctx, key, l.Value); err != nil {
				return err
			}
		}
		return tx.Commit()
	}
	spent, err := l.Batches(insert, checkpoint)
	if err != nil {
		return out, fmt.Errorf("compare: sqlite: %w", err)
	}
	if err := checkpoint(); err != nil {
		return out, fmt.Errorf("compare: sqlite: %w", err)
	}
	n := l.Keys.N()
	var pageCount, pageSize, leafPages, leafUsed, leafSize int64
	if err := conn.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pageCount); err != nil {
		return out, fmt.Errorf("compare: sqlite: page_count: %w", err)
	}
	if err := conn.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
		return out, fmt.Errorf("compare: sqlite: page_size: %w", err)
	}
	// dbstat reads every page of the tree: the leaves' used bytes are
	// measured, not modelled.
	if err := conn.QueryRowContext(ctx,
		"SELECT count(*), coalesce(sum(pgsize-unused), 0), coalesce(sum(pgsize), 0) FROM dbstat WHERE name = 't' AND pagetype = 'leaf'",
	).Scan(&leafPages, &leafUsed, &leafSize); err != nil {
		return out, fmt.Errorf("compare: sqlite: dbstat: %w", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return out, fmt.Errorf("compare: sqlite: %w", err)
	}
	m := out.Metrics
	m["inserts_per_second"] = engine.Rate(n, spent)
	m["wal_frames"] = float64(frames)
	m["wal_frames_per_1000"] = engine.PerThousand(float64(frames), n)
	m["page_count"] = float64(pageCount)
	m["leaf_pages"] = float64(leafPages)
	if leafSize > 0 {
		m["leaf_density"] = float64(leafUsed) / float64(leafSize)
	}
	m["file_bytes"] = float64(fi.Size())
	m["bytes_per_key"] = engine.PerKey(float64(pageCount*pageSize), n)
	return out, nil
}
