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
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
	"github.com/idkit/idkit/segment"
)

// Defaults for Options fields left zero.
const (
	DefaultPrefix       = "idkit_tickets"
	DefaultUnit   int64 = 1000
)

// Errors of this package. Bad options and arguments wrap
// segment.ErrInvalid, and a tag whose IDs ran out segment.ErrExhausted.
var (
	// ErrNotDurable reports a server whose commits may be lost in a crash.
	ErrNotDurable = errkind.New(idkit.ErrNotDurable, "mysqlstore: commits are not durable")
	// ErrUnavailable marks an error of the server or the connection that
	// may pass: trying again later may succeed.
	ErrUnavailable = errkind.New(idkit.ErrUnavailable, "mysqlstore: server unavailable")
	// ErrRefused marks the server's refusal for good: a failed login, a
	// missing privilege, database or table.
	ErrRefused = errkind.New(idkit.ErrRefused, "mysqlstore: refused by the server")
	// ErrClosed reports a call on a closed Store or Pair.
	ErrClosed = errkind.New(idkit.ErrClosed, "mysqlstore: store closed")
)

// serverError marks err, an error of the server or the connection, as
// ErrRefused or ErrUnavailable, its message unchanged; an error that has
// a kind already (segment.ErrInvalid, ...) it returns as it is.
func serverError(err error) error {
	var myErr *mysql.MySQLError
	switch {
	case errors.Is(err, segment.ErrInvalid) || errors.Is(err, segment.ErrExhausted) || errors.Is(err, ErrNotDurable):
		return err
	case errors.As(err, &myErr) && refusedForGood(myErr.Number):
		return errkind.Mark(ErrRefused, err)
	}
	return errkind.Mark(ErrUnavailable, err)
}

// refusedForGood reports whether the server's error number refuses for
// good: access denied (1044, 1045, 1142, 1143, 1227), no such database
// (1049) or table (1146).
func refusedForGood(number uint16) bool {
	switch number {
	case 1044, 1045, 1142, 1143, 1227, 1049, 1146:
		return true
	}
	return false
}

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
	closed   atomic.Bool
	opts     Options
	database string
	// increment and offset are the session's auto_increment_increment and
	// auto_increment_offset: 1 and 1 on a plain server, 2 and 1 or 2 on a
	// side of a Pair. Tables record them, since two settings on one table
	// hand out the same tickets.
	increment, offset int64

	mu     sync.Mutex
	tables map[string]string // tag -> REPLACE statement, once its table is checked
}

var _ segment.BlockStore = (*Store)(nil)

// Open connects to the server at dsn (go-sql-driver/mysql's form,
// user:password@tcp(host:port)/database) and returns a store that closes
// its connections on Close. A DSN without timeout, readTimeout or
// writeTimeout gets DialTimeout and IOTimeout, so that no call waits
// forever on a server that stopped answering.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: mysqlstore: the DSN does not parse (it may hold a password, so it is not repeated here): %w", segment.ErrInvalid, err)
	}
	return openConfig(ctx, cfg, opts)
}

// Timeouts that Open gives a DSN without its own.
const (
	// DialTimeout bounds a connection's set-up.
	DialTimeout = 10 * time.Second
	// IOTimeout bounds each read and write on a connection. It is longer
	// than the longest wait for a tag's lock.
	IOTimeout = lockTimeout + 10*time.Second
)

func openConfig(ctx context.Context, cfg *mysql.Config, opts Options) (*Store, error) {
	if cfg.Timeout == 0 {
		cfg.Timeout = DialTimeout
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = IOTimeout
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = IOTimeout
	}
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
	var increment, offset int64
	if err := db.QueryRowContext(ctx,
		"SELECT @@innodb_flush_log_at_trx_commit, DATABASE(), @@session.auto_increment_increment, @@session.auto_increment_offset").
		Scan(&flush, &database, &increment, &offset); err != nil {
		return nil, serverError(fmt.Errorf("mysqlstore: connect: %w", err))
	}
	if flush != 1 && !opts.AllowLazyFlush {
		return nil, fmt.Errorf("%w: innodb_flush_log_at_trx_commit is %d, so a crash of the server could hand out a block twice; set it to 1, or set Options.AllowLazyFlush to accept that", ErrNotDurable, flush)
	}
	if !database.Valid {
		return nil, fmt.Errorf("%w: mysqlstore: the connection has no database; name one in the DSN (user@tcp(host:3306)/DATABASE)", segment.ErrInvalid)
	}
	return &Store{db: db, opts: opts, database: database.String, increment: increment, offset: offset, tables: map[string]string{}}, nil
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

// comment returns the comment of tag's table, which records what its
// tickets mean: the tag, the unit and, when not 1 and 1, the increment
// and offset of the sessions that take them.
func (s *Store) comment(tag string) string {
	c := fmt.Sprintf("idkit segment tickets: tag=%s unit=%d", tag, s.opts.Unit)
	if s.increment != 1 || s.offset != 1 {
		c += fmt.Sprintf(" increment=%d offset=%d", s.increment, s.offset)
	}
	return c
}

// replace returns the REPLACE statement of tag's table, creating the
// table if missing and checking its comment the first time.
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
		return "", fmt.Errorf("%w: mysqlstore: table %s says %q, but this store would take %q: "+
			"a table holds the tickets of one tag, unit, auto_increment_increment and auto_increment_offset "+
			"(a side of a Pair, or a plain store), and another setting on it would hand out the same blocks twice",
			segment.ErrInvalid, table, got, s.comment(tag))
	}
	stmt = "REPLACE INTO `" + table + "` (stub) VALUES (?)"
	s.mu.Lock()
	s.tables[tag] = stmt
	s.mu.Unlock()
	return stmt, nil
}

// ReserveBlock takes the next tickets of tag and returns their block:
// step rounded down to a multiple of Unit, and at least one Unit. A
// session whose auto_increment_increment is not 1 (a side of a Pair)
// takes one ticket whatever the step, since its next tickets are not
// consecutive. tag and step are checked with segment.CheckTag and
// segment.CheckStep.
func (s *Store) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	if s.closed.Load() {
		return segment.Block{}, fmt.Errorf("%w: reserve block for tag %q", ErrClosed, tag)
	}
	if err := segment.CheckTag(tag); err != nil {
		return segment.Block{}, fmt.Errorf("mysqlstore: %w", err)
	}
	if err := segment.CheckStep(step); err != nil {
		return segment.Block{}, fmt.Errorf("mysqlstore: tag %q: %w", tag, err)
	}
	tickets := int64(1)
	if s.increment == 1 {
		tickets = max(step/s.opts.Unit, 1)
	}
	first, last, err := s.tickets(ctx, tag, tickets)
	if err != nil && s.closed.Load() {
		return segment.Block{}, fmt.Errorf("%w: reserve block for tag %q: %w", ErrClosed, tag, err)
	}
	if err != nil {
		return segment.Block{}, serverError(err)
	}
	return s.block(tag, first, last)
}

// lockTimeout bounds the wait for a tag's lock when the context has no
// deadline.
const lockTimeout = 30 * time.Second

// tickets takes the next n tickets of tag and returns the first and the
// last. Concurrent REPLACEs of one row can deadlock in InnoDB, and the
// statement rolled back still uses up its AUTO_INCREMENT value, a ticket
// no block would ever hold; so the REPLACE runs under GET_LOCK on the
// tag's table, which the server releases when the session ends, whatever
// happens to the client.
func (s *Store) tickets(ctx context.Context, tag string, n int64) (first, last int64, err error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, fmt.Errorf("mysqlstore: reserve a ticket for tag %q: %w", tag, err)
	}
	stmt, err := s.replace(ctx, tag)
	if err != nil {
		return 0, 0, err
	}
	first, last, err = s.locked(ctx, s.lockName(tag), stmt, tag, n)
	if err != nil {
		return 0, 0, fmt.Errorf("mysqlstore: reserve a ticket for tag %q: %w", tag, err)
	}
	return first, last, nil
}

// releaseTimeout bounds the release of a tag's lock.
const releaseTimeout = 5 * time.Second

// locked takes n tickets under the tag's lock: the next one by Flickr's
// REPLACE, which lies above every ticket ever taken, and, when n > 1, the
// n-1 after it by writing the last of them as the row's id, which moves
// AUTO_INCREMENT past it in the same transaction. A failure of that
// second write leaves the first ticket taken, and returns it alone.
func (s *Store) locked(ctx context.Context, lock, stmt, tag string, n int64) (first, last int64, err error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	wait := lockTimeout
	if d, ok := ctx.Deadline(); ok {
		wait = max(time.Until(d), time.Millisecond)
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", lock, wait.Seconds()).Scan(&got); err != nil {
		return 0, 0, err
	}
	if !got.Valid || got.Int64 != 1 {
		return 0, 0, fmt.Errorf("GET_LOCK(%q) not granted within %v", lock, wait)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
		defer cancel()
		if _, rerr := conn.ExecContext(rctx, "DO RELEASE_LOCK(?)", lock); rerr != nil {
			// Drop the session, and with it the lock.
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	first, err = exec(ctx, conn, stmt, tag)
	if err != nil || n == 1 || first < 1 || first >= math.MaxInt64/s.opts.Unit {
		return first, first, err // block reports a first ticket past the end
	}
	last = first + min(n-1, math.MaxInt64/s.opts.Unit-first)
	if _, err := exec(ctx, conn, "REPLACE INTO `"+s.Table(tag)+"` (id, stub) VALUES (?, ?)", last, tag); err != nil {
		return first, first, nil
	}
	return first, last, nil
}

// exec runs stmt, again when InnoDB rolled it back for a deadlock or a
// lock wait timeout (nothing was reserved), and returns the id it
// inserted.
func exec(ctx context.Context, conn *sql.Conn, stmt string, args ...any) (int64, error) {
	for {
		res, err := conn.ExecContext(ctx, stmt, args...)
		var myErr *mysql.MySQLError
		if errors.As(err, &myErr) && (myErr.Number == 1213 || myErr.Number == 1205) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	}
}

// block returns the block of tickets first through last.
func (s *Store) block(tag string, first, last int64) (segment.Block, error) {
	u := s.opts.Unit
	if first < 1 || first > math.MaxInt64/u {
		return segment.Block{}, fmt.Errorf("%w: mysqlstore: tag %q: ticket %d of %d IDs would pass 2^63-1", segment.ErrExhausted, tag, uint64(first), u)
	}
	return segment.Block{First: (first-1)*u + 1, Last: last * u}, nil
}

// Close closes the connections if Open made them; later calls fail with
// ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.own {
		return s.db.Close()
	}
	return nil
}
