package mysqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idkit/idkit/segment"
)

// Defaults for Options fields left zero.
const (
	DefaultPrefix       = "idkit_tickets"
	DefaultUnit   int64 = 1000
)

// ErrNotDurable reports a server whose commits may be lost in a crash.
// Bad options and arguments wrap segment.ErrInvalid, and a tag whose IDs
// ran out segment.ErrExhausted.
var ErrNotDurable = errors.New("mysqlstore: commits are not durable")

// Options configure a Store.
type Options struct {
	// Prefix starts the name of each tag's table, which goes on with "_"
	// and 16 hex digits of the tag's SHA-256: up to 40 letters, digits or
	// underscores. Empty means DefaultPrefix.
	Prefix string
	// Unit is the number of IDs per ticket, 1 to segment.MaxStep; zero
	// means DefaultUnit. Every store sharing a table must use the same
	// unit: a table records its unit and refuses another.
	Unit int64
	// AllowLazyFlush accepts a server with innodb_flush_log_at_trx_commit
	// other than 1, where a crash of the server may lose the last
	// committed tickets and hand their blocks out again.
	AllowLazyFlush bool
}

var prefixRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,39}$`)

func (o *Options) check() error {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if !prefixRE.MatchString(o.Prefix) {
		return fmt.Errorf("%w: mysqlstore: Prefix %q: want 1 to 40 letters, digits or underscores, not starting with a digit", segment.ErrInvalid, o.Prefix)
	}
	if o.Unit == 0 {
		o.Unit = DefaultUnit
	}
	if o.Unit < 1 || o.Unit > segment.MaxStep {
		return fmt.Errorf("%w: mysqlstore: Unit %d, want 1 to %d (or 0 for %d)", segment.ErrInvalid, o.Unit, segment.MaxStep, DefaultUnit)
	}
	return nil
}

// A Store reserves blocks from ticket tables on one server. It is safe for
// concurrent use, and any number of processes and hosts may share the
// server.
type Store struct {
	db       *sql.DB
	own      bool
	opts     Options
	database string

	mu     sync.Mutex
	tables map[string]string // tag -> REPLACE statement, once its table is checked
}

var _ segment.BlockStore = (*Store)(nil)

// Open connects to the server at dsn (go-sql-driver/mysql's form,
// user:password@tcp(host:port)/database) and returns a store that closes
// its connections on Close.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: mysqlstore: DSN %q: %w", segment.ErrInvalid, dsn, err)
	}
	return openConfig(ctx, cfg, opts)
}

func openConfig(ctx context.Context, cfg *mysql.Config, opts Options) (*Store, error) {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("mysqlstore: %w", err)
	}
	db := sql.OpenDB(conn)
	s, err := New(ctx, db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.own = true
	return s, nil
}

// New returns a store on db after checking the server's durability (see
// the package documentation). Close leaves db open.
func New(ctx context.Context, db *sql.DB, opts Options) (*Store, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	var flush int
	var database sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT @@innodb_flush_log_at_trx_commit, DATABASE()").Scan(&flush, &database); err != nil {
		return nil, fmt.Errorf("mysqlstore: connect: %w", err)
	}
	if flush != 1 && !opts.AllowLazyFlush {
		return nil, fmt.Errorf("%w: innodb_flush_log_at_trx_commit is %d, so a crash of the server could hand out a block twice; set it to 1, or set Options.AllowLazyFlush to accept that", ErrNotDurable, flush)
	}
	if !database.Valid {
		return nil, fmt.Errorf("%w: mysqlstore: the connection has no database; name one in the DSN (user@tcp(host:3306)/DATABASE)", segment.ErrInvalid)
	}
	return &Store{db: db, opts: opts, database: database.String, tables: map[string]string{}}, nil
}

// Unit returns the number of IDs per ticket.
func (s *Store) Unit() int64 { return s.opts.Unit }

// Table returns the name of tag's ticket table.
func (s *Store) Table(tag string) string {
	h := sha256.Sum256([]byte(tag))
	return s.opts.Prefix + "_" + hex.EncodeToString(h[:8])
}

// lockName returns the name of the server-wide lock on tag's table: a
// hash of the database and the table, within GET_LOCK's 64 characters.
func (s *Store) lockName(tag string) string {
	h := sha256.Sum256([]byte(s.database + "." + s.Table(tag)))
	return "idkit_tickets:" + hex.EncodeToString(h[:16])
}

func (s *Store) comment(tag string) string {
	return fmt.Sprintf("idkit segment tickets: tag=%s unit=%d", tag, s.opts.Unit)
}

// replace returns the REPLACE statement of tag's table, creating the
// table if missing and checking its unit the first time.
func (s *Store) replace(ctx context.Context, tag string) (string, error) {
	s.mu.Lock()
	stmt, ok := s.tables[tag]
	s.mu.Unlock()
	if ok {
		return stmt, nil
	}
	table := s.Table(tag)
	create := "CREATE TABLE IF NOT EXISTS `" + table + "` (" +
		"id bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY, " +
		"stub varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, " +
		"UNIQUE KEY stub (stub)) ENGINE=InnoDB COMMENT='" + s.comment(tag) + "'"
	if _, err := s.db.ExecContext(ctx, create); err != nil {
		return "", fmt.Errorf("mysqlstore: create table %s for tag %q: %w", table, tag, err)
	}
	var got string
	err := s.db.QueryRowContext(ctx,
		"SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", table).Scan(&got)
	if err != nil {
		return "", fmt.Errorf("mysqlstore: read the comment of table %s: %w", table, err)
	}
	if got != s.comment(tag) {
		return "", fmt.Errorf("%w: mysqlstore: table %s says %q, want %q: it holds tickets of another unit or tag, whose blocks would overlap these",
			segment.ErrInvalid, table, got, s.comment(tag))
	}
	stmt = "REPLACE INTO `" + table + "` (stub) VALUES (?)"
	s.mu.Lock()
	s.tables[tag] = stmt
	s.mu.Unlock()
	return stmt, nil
}

// ReserveBlock takes the next ticket of tag and returns its block of Unit
// IDs, whatever step asks for. tag and step are checked with
// segment.CheckTag and segment.CheckStep.
func (s *Store) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	if err := segment.CheckTag(tag); err != nil {
		return segment.Block{}, fmt.Errorf("mysqlstore: %w", err)
	}
	if err := segment.CheckStep(step); err != nil {
		return segment.Block{}, fmt.Errorf("mysqlstore: tag %q: %w", tag, err)
	}
	t, err := s.ticket(ctx, tag)
	if err != nil {
		return segment.Block{}, err
	}
	return s.block(tag, t)
}

// lockTimeout bounds the wait for a tag's lock when the context has no
// deadline.
const lockTimeout = 30 * time.Second

// ticket takes the next ticket of tag. Concurrent REPLACEs of one row can
// deadlock in InnoDB, and the statement rolled back still uses up its
// AUTO_INCREMENT value, a ticket no block would ever hold; so the REPLACE
// runs under GET_LOCK on the tag's table, which the server releases when
// the session ends, whatever happens to the client.
func (s *Store) ticket(ctx context.Context, tag string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("mysqlstore: reserve a ticket for tag %q: %w", tag, err)
	}
	stmt, err := s.replace(ctx, tag)
	if err != nil {
		return 0, err
	}
	t, err := s.locked(ctx, s.lockName(tag), stmt, tag)
	if err != nil {
		return 0, fmt.Errorf("mysqlstore: reserve a ticket for tag %q: %w", tag, err)
	}
	return t, nil
}

func (s *Store) locked(ctx context.Context, lock, stmt, tag string) (ticket int64, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	wait := lockTimeout
	if d, ok := ctx.Deadline(); ok {
		wait = max(time.Until(d), time.Millisecond)
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", lock, wait.Seconds()).Scan(&got); err != nil {
		return 0, err
	}
	if !got.Valid || got.Int64 != 1 {
		return 0, fmt.Errorf("GET_LOCK(%q) not granted within %v", lock, wait)
	}
	defer func() {
		if _, rerr := conn.ExecContext(context.Background(), "DO RELEASE_LOCK(?)", lock); rerr != nil {
			// Drop the session, and with it the lock.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	for {
		res, err := conn.ExecContext(ctx, stmt, tag)
		var myErr *mysql.MySQLError
		if errors.As(err, &myErr) && (myErr.Number == 1213 || myErr.Number == 1205) && ctx.Err() == nil {
			continue // deadlock or lock wait timeout: rolled back, nothing reserved
		}
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	}
}

// block returns the block of ticket t.
func (s *Store) block(tag string, t int64) (segment.Block, error) {
	u := s.opts.Unit
	if t < 1 || t > math.MaxInt64/u {
		return segment.Block{}, fmt.Errorf("%w: mysqlstore: tag %q: ticket %d of %d IDs would pass 2^63-1", segment.ErrExhausted, tag, uint64(t), u)
	}
	return segment.Block{First: (t-1)*u + 1, Last: t * u}, nil
}

// Close closes the connections if Open made them.
func (s *Store) Close() error {
	if s.own {
		return s.db.Close()
	}
	return nil
}
