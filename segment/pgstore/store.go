package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
	"github.com/idkit/idkit/segment"
)

// DefaultTable is the table a Store uses when Options.Table is empty.
const DefaultTable = "idkit_segment"

// Errors of this package. Bad options and arguments wrap
// segment.ErrInvalid, and a tag whose IDs ran out segment.ErrExhausted.
var (
	// ErrNotDurable reports a session whose commits may be lost in a crash.
	ErrNotDurable = errkind.New(idkit.ErrNotDurable, "pgstore: commits are not durable")
	// ErrUnavailable marks an error of the server or the connection that
	// may pass: trying again later may succeed.
	ErrUnavailable = errkind.New(idkit.ErrUnavailable, "pgstore: server unavailable")
	// ErrRefused marks the server's refusal for good: a failed login, a
	// missing privilege, database or table.
	ErrRefused = errkind.New(idkit.ErrRefused, "pgstore: refused by the server")
	// ErrClosed reports a call on a closed Store.
	ErrClosed = errkind.New(idkit.ErrClosed, "pgstore: store closed")
)

// serverError marks err, an error of the server or the connection, as
// ErrRefused or ErrUnavailable, its message unchanged.
func serverError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && refusedForGood(pgErr.Code) {
		return errkind.Mark(ErrRefused, err)
	}
	return errkind.Mark(ErrUnavailable, err)
}

// refusedForGood reports whether SQLSTATE code refuses for good: class 28
// (invalid authorization), 42501 (insufficient privilege), 3D000 (no such
// database), 42P01 (no such table) and 3F000 (no such schema).
func refusedForGood(code string) bool {
	return strings.HasPrefix(code, "28") || code == "42501" || code == "3D000" || code == "42P01" || code == "3F000"
}

// Options configure a Store.
type Options struct {
	// Table is the table of blocks, created if missing: a name, or a
	// schema and a name ("shard5.blocks"), each of letters, digits and
	// underscores. Empty means DefaultTable in the session's search_path.
	Table string
}

// A Store reserves blocks in a PostgreSQL table. It is safe for
// concurrent use, and any number of processes and hosts may share the
// table.
type Store struct {
	pool   *pgxpool.Pool
	own    bool
	closed atomic.Bool
	table  string // quoted
	update string
	insert string
}

var _ segment.BlockStore = (*Store)(nil)

var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// quoteTable checks a table name (optionally schema-qualified) and
// returns it quoted.
func quoteTable(name string) (string, error) {
	if name == "" {
		name = DefaultTable
	}
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", fmt.Errorf("%w: Table %q: want NAME or SCHEMA.NAME", segment.ErrInvalid, name)
	}
	for _, p := range parts {
		if !ident.MatchString(p) {
			return "", fmt.Errorf("%w: Table %q: each part 1..63 letters, digits or underscores, not starting with a digit", segment.ErrInvalid, name)
		}
	}
	return pgx.Identifier(parts).Sanitize(), nil
}

// Open connects to the server at dsn (a URL or key=value string, as pgx
// reads it) with synchronous_commit on, creates the table if missing, and
// returns a store that closes its connections on Close.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	if _, err := quoteTable(opts.Table); err != nil {
		return nil, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("pgstore: DSN: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, serverError(fmt.Errorf("pgstore: connect: %w", err))
	}
	s, err := New(ctx, pool, opts)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.own = true
	return s, nil
}

// New returns a store on pool, creating the table if missing. It refuses
// a pool whose sessions run with synchronous_commit off. Close leaves the
// pool open.
func New(ctx context.Context, pool *pgxpool.Pool, opts Options) (*Store, error) {
	table, err := quoteTable(opts.Table)
	if err != nil {
		return nil, err
	}
	var sync string
	if err := pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&sync); err != nil {
		return nil, serverError(fmt.Errorf("pgstore: connect: %w", err))
	}
	if sync == "off" {
		return nil, fmt.Errorf("%w: synchronous_commit is off, so a crash of the server could hand out a block twice; set it to on", ErrNotDurable)
	}
	if err := createTable(ctx, pool, table); err != nil {
		return nil, serverError(fmt.Errorf("pgstore: create table %s: %w", table, err))
	}
	return &Store{
		pool:   pool,
		table:  table,
		update: "UPDATE " + table + " SET max_id = max_id + $2, step = $2, update_time = now() WHERE biz_tag = $1 RETURNING max_id",
		insert: "INSERT INTO " + table + " (biz_tag, max_id, step) VALUES ($1, 0, 0) ON CONFLICT (biz_tag) DO NOTHING",
	}, nil
}

// createTable creates table if it is missing. Two sessions running CREATE
// TABLE IF NOT EXISTS at once can both miss the table and one then fails
// on the catalog (a duplicate type, key or relation), so the statement
// runs under a transaction-scoped advisory lock on the table's name: the
// processes that open one store at the same moment take turns.
func createTable(ctx context.Context, pool *pgxpool.Pool, table string) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", "idkit segment table "+table); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+table+` (
			biz_tag text PRIMARY KEY,
			max_id bigint NOT NULL CHECK (max_id >= 0),
			step bigint NOT NULL,
			update_time timestamptz NOT NULL DEFAULT now())`)
		return err
	})
}

// Table returns the table's quoted name.
func (s *Store) Table() string { return s.table }

// ReserveBlock reserves the next step IDs of tag and returns them once the
// UPDATE has committed. tag and step are checked with segment.CheckTag
// and segment.CheckStep.
func (s *Store) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	if s.closed.Load() {
		return segment.Block{}, fmt.Errorf("%w: reserve block for tag %q in %s", ErrClosed, tag, s.table)
	}
	if err := segment.CheckTag(tag); err != nil {
		return segment.Block{}, fmt.Errorf("pgstore: %w", err)
	}
	if err := segment.CheckStep(step); err != nil {
		return segment.Block{}, fmt.Errorf("pgstore: tag %q: %w", tag, err)
	}
	if err := ctx.Err(); err != nil {
		return segment.Block{}, fmt.Errorf("pgstore: reserve block for tag %q: %w", tag, err)
	}
	last, err := s.advance(ctx, tag, step)
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err = s.pool.Exec(ctx, s.insert, tag); err == nil {
			last, err = s.advance(ctx, tag, step)
		}
	}
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "22003" { // numeric_value_out_of_range
			return segment.Block{}, fmt.Errorf("%w: tag %q: a block of %d would pass 2^63-1", segment.ErrExhausted, tag, step)
		}
		if s.closed.Load() {
			return segment.Block{}, fmt.Errorf("%w: reserve block for tag %q in %s: %w", ErrClosed, tag, s.table, err)
		}
		return segment.Block{}, serverError(fmt.Errorf("pgstore: reserve block of %d for tag %q in %s: %w", step, tag, s.table, err))
	}
	return segment.Block{First: last - step + 1, Last: last}, nil
}

func (s *Store) advance(ctx context.Context, tag string, step int64) (int64, error) {
	var last int64
	err := s.pool.QueryRow(ctx, s.update, tag, step).Scan(&last)
	return last, err
}

// Close closes the connections if Open made them; later calls fail with
// ErrClosed. It returns nil, as every store's Close returns an error:
// pgxpool's Close reports none.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.own {
		s.pool.Close()
	}
	return nil
}
