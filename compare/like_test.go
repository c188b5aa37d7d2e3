package compare

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/innodb"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testenv"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

func TestParseLike(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in            string
		schema, table string // as PostgreSQL's catalog holds them
		out           string
	}{
		{"public.orders", "public", "orders", "public.orders"},
		{"Sales.Orders", "sales", "orders", "Sales.Orders"},
		{`"My Schema"."odd ""orders"" table"`, "My Schema", `odd "orders" table`, `"My Schema"."odd ""orders"" table"`},
		{"`db`.`t``x`", "db", "t`x", `"db"."t` + "`" + `x"`},
		{"s_1.$t9", "s_1", "$t9", "s_1.$t9"},
	} {
		n, err := engine.ParseLike(tt.in)
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.schema, n.Schema.Postgres(), tt.in)
		assert.Equal(t, tt.table, n.Table.Postgres(), tt.in)
		assert.Equal(t, tt.out, n.String(), tt.in)
	}
	for _, tt := range []struct{ in, msg string }{
		{"", "an empty name"},
		{"orders", "no dot after the schema"},
		{"a.b.c", `".c" after the table name`},
		{"a.b; DROP TABLE x", `"; DROP TABLE x" after the table name`},
		{`"a.b`, "an unclosed quote"},
		{`"".b`, "an empty quoted name"},
		{"1a.b", `"1a.b" is no identifier`},
		{"a.", "an empty name"},
		{"a .b", "no dot after the schema"},
	} {
		_, err := engine.ParseLike(tt.in)
		require.ErrorIs(t, err, engine.ErrLike, tt.in)
		assert.Contains(t, err.Error(), tt.msg, tt.in)
		assert.Contains(t, err.Error(), "want schema.table", tt.in)
	}
}

// likeOptions returns options of a --like run of four schemes, ordered and
// random, on the one server engine. On PostgreSQL it sees that the
// server's test database has pageinspect, which a run without --scratch
// needs there and does not create (a run with --scratch creates it, as
// the test's superuser could).
func likeOptions(t *testing.T, eng, like string) Options {
	t.Helper()
	o := engineOptions(t, eng)
	if eng == engine.Postgres {
		pageinspectOnce.Do(func() {
			conn, err := pgx.Connect(context.Background(), o.PostgresDSN)
			require.NoError(t, err)
			defer conn.Close(context.Background())
			_, err = conn.Exec(context.Background(), "CREATE EXTENSION IF NOT EXISTS pageinspect")
			require.NoError(t, err, "pageinspect, for the runs without --scratch")
		})
	}
	o.NoSQLite = true
	o.Writers = 1
	o.N = 20_000
	o.Like = like
	o.Sample = 2_000
	var err error
	o.Schemes, err = scheme.Select("counter,traceid,uuidv7,uuidv4")
	require.NoError(t, err)
	return o
}

// pageinspectOnce creates pageinspect once per test binary (likeOptions).
var pageinspectOnce sync.Once

// checkLikeReport checks what a --like run must show on engine: the
// table's indexes today, every index of every copy (with its leaf density
// where density says the run could measure it), ordered keys making a
// smaller primary key than random ones and, where pagesKey names a figure
// of the load alone, writing fewer pages, and an ordered scheme ranked
// first.
func checkLikeReport(t *testing.T, r *report.Report, eng string, pagesKey string, density bool) {
	t.Helper()
	require.Len(t, r.Like, 1)
	lt := r.Like[0]
	assert.Equal(t, eng, lt.Engine)
	require.Len(t, lt.Indexes, 3, "the primary key and two secondary indexes")
	for _, ix := range lt.Indexes {
		assert.Positive(t, ix.Bytes, "size of %s today", ix.Name)
	}
	assert.Equal(t, 2_000, lt.Sampled)
	pages := map[string]float64{}
	primary := map[string]int64{} // the primary key's size
	scanRows := map[string]float64{}
	for _, s := range r.Schemes {
		l, ok := s.Runs[0].EngineLoad(eng)
		require.True(t, ok, s.Name)
		require.Len(t, l.Indexes, 3, "%s: every index of the copy", s.Name)
		for _, ix := range l.Indexes {
			assert.Positive(t, ix.Bytes, "%s: %s", s.Name, ix.Name)
			if density {
				assert.Positive(t, ix.LeafDensity, "%s: %s", s.Name, ix.Name)
			}
		}
		assert.Equal(t, "primary key (id)", l.Indexes[0].Name, s.Name)
		primary[s.Name] = l.Indexes[0].Bytes
		assert.Positive(t, l.Metrics["secondary_index_bytes"], s.Name)
		assert.Equal(t, l.Metrics["all_index_bytes"], l.Metrics["index_bytes"]+l.Metrics["secondary_index_bytes"], "%s: every index counts", s.Name)
		pages[s.Name] = l.Metrics[pagesKey]
		// The reads of the plain runs, through the copy's key.
		for _, k := range []string{"lookup_pages", "lookup_pages_newest", "newest_scan_pages", "newest_scan_rows"} {
			assert.Positive(t, l.Metrics[k], "%s: %s", s.Name, k)
		}
		scanRows[s.Name] = l.Metrics["newest_scan_rows"]
	}
	assert.InDelta(t, 1, scanRows["counter"], 0.01, "the counter's newest rows are the last in key order")
	assert.Greater(t, scanRows["uuidv4"], 50.0, "uuidv4's newest rows are spread over the whole key")
	for _, ordered := range []string{"counter", "traceid", "uuidv7"} {
		assert.Less(t, primary[ordered], primary["uuidv4"], "%s: a primary key smaller than uuidv4's", ordered)
		if pagesKey != "" {
			assert.Less(t, pages[ordered], pages["uuidv4"], "%s: %s fewer than uuidv4's", ordered, pagesKey)
		}
	}
	require.NotNil(t, r.Verdict)
	require.NotEmpty(t, r.Verdict.Ranked)
	assert.NotEqual(t, "uuidv4", r.Verdict.Ranked[0].Scheme, "an ordered scheme ranks first")

	var text, html strings.Builder
	require.NoError(t, r.WriteTable(&text))
	assert.Contains(t, text.String(), "YOUR TABLE "+lt.Name)
	assert.Contains(t, text.String(), "EVERY INDEX OF THE COPIES OF "+lt.Name)
	require.NoError(t, r.WriteHTML(&html))
	h1 := strings.Index(html.String(), "<h1")
	require.GreaterOrEqual(t, h1, 0)
	assert.Contains(t, html.String()[h1:h1+200], "idkit compare on your table", "the page opens with the table's name")
	assert.Less(t, strings.Index(html.String(), "<h1"), strings.Index(html.String(), `id="verdict"`), "then the verdict")
	// The verdict's chart draws the figures the verdict ranked by, and the
	// reads of the copies have theirs.
	var keys []string
	for _, f := range r.Verdict.Figures {
		keys = append(keys, f.Key)
	}
	assert.Contains(t, r.Verdict.Basis, r.Verdict.Figures[len(r.Verdict.Figures)-1].Name)
	assert.Contains(t, html.String(), `data-keys="`+strings.Join(keys, ",")+`"`, "the verdict's chart")
	assert.Contains(t, html.String(), `data-chart="reads-`+eng+`"`, "the reads' chart")
}

// A --like run on PostgreSQL copies a table with a UUIDv4 key, a 300-byte
// text, an indexed timestamp and a unique column, whose schema and name
// hold quotes and spaces; the table is unchanged afterwards.
func TestLikePostgres(t *testing.T) {
	t.Parallel()
	dsn := serverDSN(t, engine.EnvPostgresDSN)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) }) // after the cleanups below, which use it
	schema := "idkit like " + engine.RunSuffix()
	s := pgx.Identifier{schema}.Sanitize()
	table := s + `."odd ""orders"" table"`
	t.Cleanup(func() { conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+s+" CASCADE") })
	for _, q := range []string{
		"CREATE SCHEMA " + s,
		"CREATE TABLE " + table + ` (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), payload text NOT NULL,
			created_at timestamptz NOT NULL, email text NOT NULL UNIQUE)`,
		"CREATE INDEX ON " + table + " (created_at)",
		"INSERT INTO " + table + ` (payload, created_at, email)
			SELECT repeat(md5(i::text), 10)::char(300), now() - i * interval '1 second', 'user' || i || '@example.com'
			FROM generate_series(1, 10000) i`,
		"ANALYZE " + table,
		"CREATE TABLE " + s + ".nokey (a int)",
		"CREATE TABLE " + s + ".twokeys (a int, b int, PRIMARY KEY (a, b))",
	} {
		_, err := conn.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	state := func() (sum string, ins, upd, del int64) {
		require.NoError(t, conn.QueryRow(ctx, "SELECT md5(string_agg(t::text, ',' ORDER BY id)) FROM "+table+" t").Scan(&sum))
		require.NoError(t, conn.QueryRow(ctx, `SELECT n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables
			WHERE schemaname = $1 AND relname = $2`, schema, `odd "orders" table`).Scan(&ins, &upd, &del))
		return
	}
	// The statistics of the test's own inserts arrive with a delay: wait
	// for them before taking the table's state.
	testwait.Until(t, func() bool {
		conn.Exec(ctx, "SELECT pg_stat_force_next_flush()")
		conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()")
		_, ins, _, _ := state()
		return ins == 10_000
	}, "the table's insert statistics")
	sum, ins, upd, del := state()

	like := `"` + strings.ReplaceAll(schema, `"`, `""`) + `"."odd ""orders"" table"`
	r, err := Run(likeOptions(t, engine.Postgres, like))
	require.NoError(t, err)
	// The copies are on the table's server: no CHECKPOINT there, and no
	// figure that needs one; the pages each interval changed are counted
	// from their LSNs instead (the test's user is a superuser).
	checkLikeReport(t, r, engine.Postgres, "pages_changed_per_1000", true)
	assert.Contains(t, r.Verdict.Basis, "pages changed per interval (page LSNs, no checkpoint forced)")
	assert.Contains(t, r.Engine(engine.Postgres).Settings, "no CHECKPOINT")
	for _, s := range r.Schemes {
		l, _ := s.Runs[0].EngineLoad(engine.Postgres)
		assert.NotContains(t, l.Metrics, "pages_dirtied_per_1000", s.Name)
	}
	assert.Contains(t, strings.Join(r.Like[0].Notes, "\n"), "of WAL and checkpointed", "the load the run put on the source")
	lt := r.Like[0]
	assert.Equal(t, "id", lt.Key)
	assert.Equal(t, "uuid", lt.KeyType)
	require.NotNil(t, lt.KeyCorrelation, "the table was analyzed")
	assert.InDelta(t, 0, *lt.KeyCorrelation, 0.2, "random UUIDs are in no physical order")
	assert.Equal(t, []string{"primary key (id)", "(created_at)", "unique (email)"}, indexNames(lt.Indexes))
	for _, sch := range r.Schemes {
		l, _ := sch.Runs[0].EngineLoad(engine.Postgres)
		assert.Equal(t, indexNames(lt.Indexes), indexNames(l.Indexes), sch.Name)
	}

	// The user's table: the same rows, never written.
	conn.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	conn.Exec(ctx, "SELECT pg_stat_clear_snapshot()")
	sum2, ins2, upd2, del2 := state()
	assert.Equal(t, sum, sum2, "the table's rows are unchanged")
	assert.Equal(t, [3]int64{ins, upd, del}, [3]int64{ins2, upd2, del2}, "n_tup_ins, n_tup_upd, n_tup_del unchanged")
	scratch := regexp.MustCompile(`schema (idkit_compare_\w+)`).FindStringSubmatch(r.Engine(engine.Postgres).Settings)
	require.Len(t, scratch, 2, r.Engine(engine.Postgres).Settings)
	var left int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", scratch[1]).Scan(&left))
	assert.Zero(t, left, "the run's scratch schema is dropped")

	// Stopped in the middle of a load (as by Ctrl-C), the run drops what
	// it created all the same.
	o := likeOptions(t, engine.Postgres, like)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var created string
	draws := 0
	o.Progress = writerFunc(func(p []byte) {
		if m := regexp.MustCompile(`schema (idkit_compare_\w+) on PostgreSQL`).FindSubmatch(p); m != nil {
			created = string(m[1]) // the run names its schema first
		}
		if strings.Contains(string(p), "postgres") {
			draws++ // the schema, then a line per step
		}
		if draws == 3 {
			var sample int
			require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
				WHERE n.nspname = $1 AND c.relname = 'like_sample'`, created).Scan(&sample))
			require.Equal(t, 1, sample, "the run's schema holds the sample")
			cancel()
		}
	})
	_, err = RunContext(runCtx, o)
	require.ErrorIs(t, err, context.Canceled)
	require.NotEmpty(t, created, "the run reached the postgres load")
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", created).Scan(&left))
	assert.Zero(t, left, "the scratch schema of a stopped run is dropped")

	for _, tt := range []struct{ like, msg string }{
		{pgx.Identifier{schema}.Sanitize() + ".nokey", "has no primary key"},
		{pgx.Identifier{schema}.Sanitize() + ".twokeys", "composite primary key (a, b)"},
		{pgx.Identifier{schema}.Sanitize() + ".missing", "no table"},
	} {
		_, err := Run(likeOptions(t, engine.Postgres, tt.like))
		require.ErrorIs(t, err, engine.ErrLike, tt.like)
		assert.Contains(t, err.Error(), tt.msg, tt.like)
	}
}

// The same on MariaDB: a database and table whose names hold quotes and
// spaces; the table's rows and its update time are unchanged afterwards.
func TestLikeMySQL(t *testing.T) {
	t.Parallel()
	dsn := serverDSN(t, engine.EnvMySQLDSN)
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	db, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // after the cleanups below, which use it
	ctx := context.Background()
	database := "idkit like " + engine.RunSuffix()
	d := innodb.Ident(database)
	table := d + ".`odd \"orders\" table`"
	t.Cleanup(func() { db.Exec("DROP DATABASE IF EXISTS " + d) })
	for _, q := range []string{
		"CREATE DATABASE " + d,
		"CREATE TABLE " + table + ` (id BINARY(16) NOT NULL PRIMARY KEY, payload VARCHAR(300) NOT NULL, note VARCHAR(45) NOT NULL,
			created_at DATETIME(6) NOT NULL, email VARCHAR(100) NOT NULL, UNIQUE KEY (email), KEY (created_at)) ENGINE=InnoDB`,
		"INSERT INTO " + table + ` SELECT UNHEX(REPLACE(UUID(), '-', '')), REPEAT(MD5(seq), 9), MD5(seq),
			NOW(6) - INTERVAL seq SECOND, CONCAT('user', seq, '@example.com') FROM seq_1_to_10000`,
		"ANALYZE TABLE " + table,
		"CREATE TABLE " + d + ".nokey (a INT) ENGINE=InnoDB",
		"CREATE TABLE " + d + ".twokeys (a INT, b INT, PRIMARY KEY (a, b)) ENGINE=InnoDB",
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	state := func() (sum int64, updated sql.NullString) {
		var name string
		require.NoError(t, db.QueryRowContext(ctx, "CHECKSUM TABLE "+table+" EXTENDED").Scan(&name, &sum))
		require.NoError(t, db.QueryRowContext(ctx, "SELECT UPDATE_TIME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
			database, `odd "orders" table`).Scan(&updated))
		return
	}
	sum, updated := state()

	like := `"` + database + `"."odd ""orders"" table"`
	r, err := Run(likeOptions(t, engine.MySQL, like))
	require.NoError(t, err)
	// InnoDB's pages written are server-wide counters, which the tests of
	// other packages move at the same time: the primary key's size is
	// compared instead.
	checkLikeReport(t, r, engine.MySQL, "", false)
	assert.Contains(t, strings.Join(r.Like[0].Notes, "\n"), "of redo during the run", "the load the run put on the source")
	lt := r.Like[0]
	assert.Equal(t, "id", lt.Key)
	assert.Equal(t, "binary(16)", lt.KeyType)
	assert.Equal(t, []string{"primary key (id)", "(created_at)", "unique (email)"}, indexNames(lt.Indexes))

	sum2, updated2 := state()
	assert.Equal(t, sum, sum2, "the table's rows are unchanged")
	assert.Equal(t, updated, updated2, "the table was not written")

	for _, tt := range []struct{ like, msg string }{
		{`"` + database + `".nokey`, "has no primary key"},
		{`"` + database + `".twokeys`, "composite primary key (a, b)"},
		{`"` + database + `".missing`, "no table"},
	} {
		_, err := Run(likeOptions(t, engine.MySQL, tt.like))
		require.ErrorIs(t, err, engine.ErrLike, tt.like)
		assert.Contains(t, err.Error(), tt.msg, tt.like)
	}
}

// writerFunc is an io.Writer that hands each write to a function.
type writerFunc func(p []byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

func indexNames(ixs []engine.IndexFigures) []string {
	var out []string
	for _, ix := range ixs {
		out = append(out, ix.Name)
	}
	return out
}

// binlogMariaDB starts a MariaDB server of the test's own, with the binary
// log on as on a primary that replicas follow, and returns its DSN. With the
// binary log on, InnoDB reads the source of an INSERT ... SELECT with shared
// locks, even under REPEATABLE READ. It listens on a socket in a temporary
// directory only, keeps its temporary files there, and is stopped when the
// test ends.
func binlogMariaDB(t *testing.T) string {
	t.Helper()
	serverDSN(t, engine.EnvMySQLDSN) // MariaDB is one of the machine's servers
	install := testenv.Tool(t, "mariadb-install-db", "apt-get install mariadb-server")
	mariadbd := testenv.Tool(t, "mariadbd", "apt-get install mariadb-server")
	dir, err := os.MkdirTemp("", "idkit-mariadb-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	// Both the bootstrap and the server get the test's own tmpdir: at start
	// a server deletes every #sql file in its tmpdir, and in /tmp those are
	// the machine's MariaDB's temporary tables, in use by other tests.
	out, err := exec.Command(install, "--no-defaults", "--datadir="+data, "--user=root",
		"--auth-root-authentication-method=normal", "--skip-test-db", "--tmpdir="+dir).CombinedOutput()
	require.NoError(t, err, "mariadb-install-db: %s", out)
	cmd := exec.Command(mariadbd, "--no-defaults", "--datadir="+data, "--user=root", "--skip-networking",
		"--socket="+sock, "--log-bin="+filepath.Join(dir, "binlog"), "--innodb-buffer-pool-size=64M", "--pid-file="+filepath.Join(dir, "pid"),
		"--tmpdir="+dir)
	dsn := "root@unix(" + sock + ")/mysql"
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	runServer(t, "mariadbd", cmd, func() bool { return db.Ping() == nil })
	var binlog int
	require.NoError(t, db.QueryRow("SELECT @@log_bin").Scan(&binlog))
	require.Equal(t, 1, binlog, "the binary log is on")
	return dsn
}

// runServer starts cmd, a database server of the test's own, and returns
// once ready says it answers, failing the test if it exits first. It is
// stopped with SIGTERM when the test ends, and killed if it has not
// stopped within testwait.Bound.
func runServer(t *testing.T, name string, cmd *exec.Cmd, ready func() bool) {
	t.Helper()
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(testwait.Bound):
			cmd.Process.Kill()
			<-exited
			t.Errorf("%s did not stop within %v of SIGTERM", name, testwait.Bound)
		}
	})
	testwait.Until(t, func() bool {
		select {
		case err := <-exited:
			t.Fatalf("%s exited: %v: %s", name, err, log.String())
		default:
		}
		return ready()
	}, "the test's own "+name+" answering")
}

// TestLikeMySQLTakesNoLocks runs --like on a server with the binary log on
// while an application session holds rows of the table FOR UPDATE. The
// run's sessions give up on any lock after a second
// (innodb_lock_wait_timeout=1, set through the DSN), so a run that read
// with locks, as an INSERT ... SELECT from the table does there, would
// fail; this one reads a snapshot and finishes, and the application's
// transaction stays undisturbed.
func TestLikeMySQLTakesNoLocks(t *testing.T) {
	t.Parallel()
	dsn := binlogMariaDB(t)
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // after the cleanups below, which use it
	ctx := context.Background()
	database := "idkit_locks_" + engine.RunSuffix()
	table := database + ".orders"
	t.Cleanup(func() { db.Exec("DROP DATABASE IF EXISTS " + database) })
	for _, q := range []string{
		"CREATE DATABASE " + database,
		// No secondary index: the sample is read from the clustered
		// index, whose records the application locks.
		"CREATE TABLE " + table + " (id BIGINT NOT NULL PRIMARY KEY, note VARCHAR(45) NOT NULL) ENGINE=InnoDB",
		"INSERT INTO " + table + " SELECT seq, MD5(seq) FROM seq_1_to_5000",
		"ANALYZE TABLE " + table,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}

	app, err := db.Conn(ctx)
	require.NoError(t, err)
	defer app.Close()
	tx, err := app.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer tx.Rollback() // ends the locks if the test fails before the Commit
	locked, err := tx.QueryContext(ctx, "SELECT id FROM "+table+" FOR UPDATE")
	require.NoError(t, err)
	n := 0
	for locked.Next() {
		n++
	}
	require.NoError(t, locked.Err())
	require.Equal(t, 5000, n, "the application holds every row")

	lockWaits := func() (n int64) {
		var name string
		require.NoError(t, db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'").Scan(&name, &n))
		return n
	}
	waits := lockWaits()
	o := likeOptions(t, engine.MySQL, table)
	strict := cfg.Clone()
	if strict.Params == nil {
		strict.Params = map[string]string{}
	}
	strict.Params["innodb_lock_wait_timeout"] = "1"
	o.MySQLDSN = strict.FormatDSN()
	r, err := Run(o)
	require.NoError(t, err, "a run beside rows locked FOR UPDATE")
	require.Len(t, r.Like, 1)
	assert.Equal(t, 2000, r.Like[0].Sampled)
	assert.Equal(t, waits, lockWaits(), "Innodb_row_lock_waits: no session waited for a row lock during the run")

	var still int
	require.NoError(t, tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE note <> ''").Scan(&still))
	assert.Equal(t, 5000, still)
	require.NoError(t, tx.Commit(), "the application's transaction commits")
}
