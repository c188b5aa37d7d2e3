package mysqlstore_test

import (
	"context"
	"database/sql"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/testkit/leakcheck"
	"github.com/idkit/idkit/internal/testkit/suites/segmenttest"
	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/mysqlstore"
)

const envDSN = "IDKIT_MYSQL_DSN"

func TestMain(m *testing.M) {
	segmenttest.Child(func() (segment.BlockStore, error) {
		return mysqlstore.Open(context.Background(), os.Getenv(envDSN), mysqlstore.Options{Unit: 100})
	})
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// server returns the DSN of the test server, or skips.
func server(t testing.TB) string {
	return storetest.Server(t, envDSN, "MariaDB/MySQL", "'root@tcp(127.0.0.1:3306)/test'")
}

// newDatabase creates a database (schema) of the test's own, dropped when
// it ends, and returns a DSN for it and a connection to it.
func newDatabase(t testing.TB) (dsn string, db *sql.DB) {
	t.Helper()
	cfg, err := mysql.ParseDSN(server(t))
	require.NoError(t, err)
	name := "idkit_seg_" + storetest.Suffix(t)
	root, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	_, err = root.Exec("CREATE DATABASE " + name)
	require.NoError(t, err)
	cfg.DBName = name
	db, err = sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	t.Cleanup(func() {
		db.Close()
		_, err := root.Exec("DROP DATABASE " + name)
		assert.NoError(t, err)
		root.Close()
	})
	return cfg.FormatDSN(), db
}

func open(t testing.TB, dsn string, opts mysqlstore.Options) *mysqlstore.Store {
	t.Helper()
	s, err := mysqlstore.Open(context.Background(), dsn, opts)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// TestConformance runs the suite with a unit of 1, where every block is
// one ticket: gaps or overlaps of tickets show as gaps or overlaps of
// blocks.
func TestConformance(t *testing.T) {
	t.Parallel()
	dsn, _ := newDatabase(t)
	storetest.BlockStore(t, func(t *testing.T) segment.BlockStore {
		return open(t, dsn, mysqlstore.Options{Unit: 1})
	})
}

func TestTickets(t *testing.T) {
	t.Parallel()
	dsn, db := newDatabase(t)
	ctx := context.Background()
	s := open(t, dsn, mysqlstore.Options{})
	assert.Equal(t, mysqlstore.DefaultUnit, s.Unit())
	var got []segment.Block
	for _, step := range []int64{1, 5000, 10} {
		b, err := s.ReserveBlock(ctx, "orders", step)
		require.NoError(t, err)
		got = append(got, b)
	}
	assert.Equal(t, []segment.Block{{First: 1, Last: 1000}, {First: 1001, Last: 6000}, {First: 6001, Last: 7000}}, got,
		"a step rounds down to a multiple of the unit, and up to one unit")

	// The table is Flickr's: one row, the last ticket, the stub.
	var id int64
	var stub string
	var rows int
	table := s.Table("orders")
	require.NoError(t, db.QueryRow("SELECT COUNT(*), MAX(id), MAX(stub) FROM `"+table+"`").Scan(&rows, &id, &stub))
	assert.Equal(t, 1, rows)
	assert.Equal(t, int64(7), id)
	assert.Equal(t, "orders", stub)

	// A store of another unit refuses the table; one of the same unit
	// continues it.
	other := open(t, dsn, mysqlstore.Options{Unit: 500})
	_, err := other.ReserveBlock(ctx, "orders", 1)
	assert.ErrorIs(t, err, segment.ErrInvalid)
	assert.ErrorContains(t, err, "unit=1000")
	same := open(t, dsn, mysqlstore.Options{})
	b, err := same.ReserveBlock(ctx, "orders", 1)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: 7001, Last: 8000}, b)

	// A plain REPLACE, as another client of the table would run it, lands
	// above every ticket taken, the ones a step skipped over included.
	_, err = db.Exec("REPLACE INTO `" + table + "` (stub) VALUES ('orders')")
	require.NoError(t, err)
	require.NoError(t, db.QueryRow("SELECT id FROM `"+table+"`").Scan(&id))
	assert.Equal(t, int64(9), id)
	b, err = same.ReserveBlock(ctx, "orders", 2500)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: 9001, Last: 11000}, b)
}

// TestStepNearTheEnd: a step of several tickets stops at the last ticket
// whose block fits below 2^63, and the next reservation is refused.
func TestStepNearTheEnd(t *testing.T) {
	t.Parallel()
	dsn, db := newDatabase(t)
	ctx := context.Background()
	const unit = 1 << 31
	s := open(t, dsn, mysqlstore.Options{Unit: unit})
	last := int64(math.MaxInt64 / unit) // the last ticket whose block fits
	for _, start := range []int64{last - 1, last} {
		tag := "t" + itoa(start)
		_, err := s.ReserveBlock(ctx, tag, 1)
		require.NoError(t, err)
		_, err = db.Exec("ALTER TABLE `" + s.Table(tag) + "` AUTO_INCREMENT = " + itoa(start))
		require.NoError(t, err)
		b, err := s.ReserveBlock(ctx, tag, 2*unit) // two tickets
		require.NoError(t, err)
		assert.Equal(t, segment.Block{First: (start-1)*unit + 1, Last: last * unit}, b, "from ticket %d", start)
		_, err = s.ReserveBlock(ctx, tag, 2*unit)
		assert.ErrorIs(t, err, segment.ErrExhausted, "from ticket %d", start)
	}
}

func TestExhausted(t *testing.T) {
	t.Parallel()
	dsn, db := newDatabase(t)
	ctx := context.Background()
	const unit = 1 << 32
	s := open(t, dsn, mysqlstore.Options{Unit: unit})
	_, err := s.ReserveBlock(ctx, "t", 1)
	require.NoError(t, err)
	last := int64(math.MaxInt64 / unit) // the last ticket whose block fits
	_, err = db.Exec("ALTER TABLE `" + s.Table("t") + "` AUTO_INCREMENT = " + itoa(last))
	require.NoError(t, err)
	b, err := s.ReserveBlock(ctx, "t", 1)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: (last-1)*unit + 1, Last: last * unit}, b)
	_, err = s.ReserveBlock(ctx, "t", 1)
	assert.ErrorIs(t, err, segment.ErrExhausted)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		opts mysqlstore.Options
		want string
	}{
		{mysqlstore.Options{Unit: -1}, "Unit -1, want 1 to 4294967296"},
		{mysqlstore.Options{Unit: segment.MaxStep + 1}, "Unit 4294967297"},
		{mysqlstore.Options{Prefix: "bad-prefix"}, `Prefix "bad-prefix"`},
		{mysqlstore.Options{Prefix: "x`; drop"}, "want 1 to 40 letters"},
	} {
		_, err := mysqlstore.Open(ctx, "root@tcp(127.0.0.1:1)/x", tt.opts)
		assert.ErrorIs(t, err, segment.ErrInvalid)
		assert.ErrorContains(t, err, tt.want)
	}
	// A DSN that does not parse is not repeated: it may hold a password.
	const bad = "app:s3cret@tcp(127.0.0.1:3306)" // no "/database"
	_, err := mysqlstore.Open(ctx, bad, mysqlstore.Options{})
	assert.ErrorIs(t, err, segment.ErrInvalid)
	assert.ErrorContains(t, err, "the DSN does not parse")
	assert.NotContains(t, err.Error(), "s3cret")
	_, err = mysqlstore.OpenPair(ctx, bad, "root@tcp(127.0.0.1:1)/x", mysqlstore.Options{})
	assert.ErrorIs(t, err, segment.ErrInvalid)
	assert.ErrorContains(t, err, "pair server A: the DSN does not parse")
	assert.NotContains(t, err.Error(), "s3cret")
}

// TestNoDatabase: a DSN without a database is refused at open, naming
// what is missing.
func TestNoDatabase(t *testing.T) {
	t.Parallel()
	cfg, err := mysql.ParseDSN(server(t))
	require.NoError(t, err)
	cfg.DBName = ""
	_, err = mysqlstore.Open(context.Background(), cfg.FormatDSN(), mysqlstore.Options{})
	assert.ErrorIs(t, err, segment.ErrInvalid)
	assert.ErrorContains(t, err, "the connection has no database")
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := mysqlstore.Open(ctx, "nobody@tcp(127.0.0.1:1)/none?timeout=5s", mysqlstore.Options{})
	assert.ErrorContains(t, err, "mysqlstore: connect: ")
	assert.ErrorIs(t, err, mysqlstore.ErrUnavailable)
	assert.ErrorIs(t, err, idkit.ErrUnavailable, "may pass")
}

// TestProcesses and TestKillLoop run alone, not in parallel: their
// processes would eat into the timeouts of the package's other tests.
func TestProcesses(t *testing.T) {
	dsn, _ := newDatabase(t)
	segmenttest.Processes(t, 4, 100_000, envDSN+"="+dsn)
}

func TestKillLoop(t *testing.T) {
	dsn, _ := newDatabase(t)
	segmenttest.KillLoop(t, 15, envDSN+"="+dsn)
}

// TestServerRestart: processes issue IDs while MariaDB itself is killed
// with SIGKILL and started again with the machine's command, five times;
// no ID repeats and every round starts above the rounds before. It runs
// only in the server-restart step of .ci/run.
func TestServerRestart(t *testing.T) {
	segmenttest.RestartServers(t)
	dsn, db := newDatabase(t)
	restart := func(t *testing.T) {
		out, err := exec.Command("pidof", "mariadbd").Output()
		require.NoError(t, err, "pidof mariadbd")
		pid, err := strconv.Atoi(strings.Fields(string(out))[0])
		require.NoError(t, err)
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
		testwait.Until(t, func() bool { return syscall.Kill(pid, 0) != nil }, "mariadbd gone after SIGKILL")
		out, err = exec.Command("start-stop-daemon", "--start", "--oknodo", "--background", "--exec", "/usr/sbin/mariadbd").CombinedOutput()
		require.NoError(t, err, "start mariadbd: %s", out)
		testwait.Until(t, func() bool { return db.Ping() == nil }, "MariaDB answering after its restart")
	}
	segmenttest.RestartLoop(t, 5, restart, envDSN+"="+dsn)
}

func TestOutage(t *testing.T) {
	t.Parallel()
	dsn, _ := newDatabase(t)
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	proxy := tcpproxy.New(t, "tcp://"+cfg.Addr)
	cfg.Addr = proxy.Addr()
	cfg.Timeout = 2 * time.Second
	s := open(t, cfg.FormatDSN(), mysqlstore.Options{Unit: 100})
	segmenttest.Outage(t, s, proxy.Cut, proxy.Restore, nil, 10*time.Second)
}

// TestClosed: after Close every call of a Store and of a Pair fails with
// ErrClosed, of kind idkit.ErrClosed and never idkit.ErrUnavailable.
func TestClosed(t *testing.T) {
	t.Parallel()
	dsn, _ := newDatabase(t)
	ctx := context.Background()
	s := open(t, dsn, mysqlstore.Options{Unit: 1})
	_, err := s.ReserveBlock(ctx, "t", 1)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close does nothing")
	_, err = s.ReserveBlock(ctx, "t", 1)
	assert.ErrorIs(t, err, mysqlstore.ErrClosed)
	assert.ErrorIs(t, err, idkit.ErrClosed)
	assert.NotErrorIs(t, err, idkit.ErrUnavailable)

	dsnB, _ := newDatabase(t)
	p, err := mysqlstore.OpenPair(ctx, dsn, dsnB, mysqlstore.Options{Prefix: "pair"})
	require.NoError(t, err)
	require.NoError(t, p.Close())
	_, err = p.Reserve(ctx, "t")
	assert.ErrorIs(t, err, mysqlstore.ErrClosed)
	assert.NotErrorIs(t, err, idkit.ErrUnavailable)
}

// TestRefused: a user without rights on the database is refused with
// ErrRefused, of kind idkit.ErrRefused, which no retry changes.
func TestRefused(t *testing.T) {
	t.Parallel()
	dsn, db := newDatabase(t)
	ctx := context.Background()
	user := "idkit_nobody_" + storetest.Suffix(t)
	_, err := db.Exec("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw'")
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := db.Exec("DROP USER '" + user + "'@'%'")
		assert.NoError(t, err)
	})
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	cfg.User, cfg.Passwd = user, "pw"
	_, err = mysqlstore.Open(ctx, cfg.FormatDSN(), mysqlstore.Options{})
	require.Error(t, err, "a user with no rights on the database")
	assert.ErrorIs(t, err, mysqlstore.ErrRefused)
	assert.ErrorIs(t, err, idkit.ErrRefused)
	assert.NotErrorIs(t, err, idkit.ErrUnavailable, "not retryable")
}
