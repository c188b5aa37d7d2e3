package compare

import (
	"context"
	"database/sql"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/innodb"
	"github.com/idkit/idkit/compare/internal/engine/postgres"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testwait"
)

// TestSessionSettings: every session a run opens calls itself idkit and
// waits for a lock at most LockTimeout, on both servers; a DSN that sets
// either keeps its own.
func TestSessionSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pgDSN, myDSN := serverDSN(t, engine.EnvPostgresDSN), serverDSN(t, engine.EnvMySQLDSN)

	pg := func(dsn string) (app, timeout string) {
		conn, err := postgres.Connect(ctx, dsn)
		require.NoError(t, err)
		defer conn.Close(ctx)
		require.NoError(t, conn.QueryRow(ctx, "SELECT current_setting('application_name'), current_setting('lock_timeout')").Scan(&app, &timeout))
		return app, timeout
	}
	app, timeout := pg(pgDSN)
	assert.Equal(t, engine.AppName, app)
	assert.Equal(t, "5s", timeout)
	u, err := url.Parse(pgDSN)
	require.NoError(t, err)
	q := u.Query()
	q.Set("application_name", "mine")
	q.Set("lock_timeout", "1500")
	u.RawQuery = q.Encode()
	app, timeout = pg(u.String())
	assert.Equal(t, "mine", app, "the DSN's own name")
	assert.Equal(t, "1500ms", timeout, "the DSN's own timeout")

	my := func(dsn string) (mdl, row int) {
		db, conn, err := innodb.Connect(ctx, dsn)
		require.NoError(t, err)
		defer db.Close()
		defer conn.Close()
		require.NoError(t, conn.QueryRowContext(ctx, "SELECT @@session.lock_wait_timeout, @@session.innodb_lock_wait_timeout").Scan(&mdl, &row))
		return mdl, row
	}
	mdl, row := my(myDSN)
	assert.Equal(t, [2]int{5, 5}, [2]int{mdl, row})
	cfg, err := mysql.ParseDSN(myDSN)
	require.NoError(t, err)
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["innodb_lock_wait_timeout"] = "1"
	mdl, row = my(cfg.FormatDSN())
	assert.Equal(t, [2]int{5, 1}, [2]int{mdl, row}, "the DSN's own row lock timeout")
	// MariaDB shows connection attributes only in performance_schema,
	// which is off by default: the attribute is checked as sent.
	cfg, err = mysql.ParseDSN(myDSN)
	require.NoError(t, err)
	innodb.SetSession(cfg)
	assert.Equal(t, "program_name:idkit", cfg.ConnectionAttributes)
}

// TestMySQLRightsCheckStopped: a run stopped while its rights check waits
// behind another session's metadata lock on the table leaves no
// statement queued: the check ends its own statement, though the DSN
// lets it wait ten minutes.
func TestMySQLRightsCheckStopped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := serverDSN(t, engine.EnvMySQLDSN)
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // after the cleanups below, which use it
	database := "idkit_mdl_" + engine.RunSuffix()
	t.Cleanup(func() { db.Exec("DROP DATABASE IF EXISTS " + database) })
	myExec(t, db, "CREATE DATABASE "+database,
		"CREATE TABLE "+database+".t (id BIGINT NOT NULL PRIMARY KEY, note VARCHAR(20)) ENGINE=InnoDB",
		"INSERT INTO "+database+".t VALUES (1, 'a'), (2, 'b')")

	lock, err := db.Conn(ctx)
	require.NoError(t, err)
	defer lock.Close()
	_, err = lock.ExecContext(ctx, "LOCK TABLES "+database+".t WRITE")
	require.NoError(t, err)
	defer lock.ExecContext(ctx, "UNLOCK TABLES")

	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["lock_wait_timeout"] = "600"
	o := likeOptions(t, engine.MySQL, database+".t")
	o.MySQLDSN = cfg.FormatDSN()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	waiting := func() int {
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM information_schema.PROCESSLIST
			WHERE INFO LIKE ? AND INFO NOT LIKE '%PROCESSLIST%'`, "SELECT 1 FROM `"+database+"`.`t` LIMIT 0").Scan(&n))
		return n
	}
	done := make(chan error, 1)
	go func() {
		_, err := RunContext(runCtx, o)
		done <- err
	}()
	testwait.Until(t, func() bool { return waiting() > 0 }, "the rights check waiting for the locked table")
	stopped := time.Now()
	cancel()
	err = testwait.Recv(t, done, "the stopped run's end")
	require.ErrorIs(t, err, context.Canceled)
	testwait.Until(t, func() bool { return waiting() == 0 }, "the rights check's statement gone from the server")
	t.Logf("the run ended and its statement was gone %v after it was stopped", time.Since(stopped))
	assert.NotContains(t, err.Error(), "left behind")
}

// TestLikeRefusedBeforeAnyWrite: a view, a table of another engine, a
// table without a primary key and a missing table are refused before the
// run creates anything on the server: on a PostgreSQL and a MariaDB
// server of the test's own, nothing else running, an event trigger and
// the binary log see no DDL of the run's.
func TestLikeRefusedBeforeAnyWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	pgDSN := privatePostgres(t)
	conn, err := pgx.Connect(ctx, pgDSN)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	pgExec(t, conn,
		"CREATE SCHEMA shop",
		"CREATE TABLE shop.orders (id bigint PRIMARY KEY, note text)",
		"INSERT INTO shop.orders SELECT i, md5(i::text) FROM generate_series(1, 100) i",
		"CREATE VIEW shop.recent AS SELECT * FROM shop.orders WHERE id > 50",
		"CREATE TABLE shop.nokey (a int)",
		"CREATE EXTENSION pgstattuple",
		"CREATE TABLE public.ddl_log (tag text NOT NULL, at timestamptz NOT NULL DEFAULT now())",
		`CREATE FUNCTION public.log_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$
			BEGIN INSERT INTO public.ddl_log (tag) VALUES (tg_tag); END $$`,
		"CREATE EVENT TRIGGER log_ddl ON ddl_command_start EXECUTE FUNCTION public.log_ddl()")
	for _, tt := range []struct{ table, msg string }{
		{"shop.recent", "is a view"},
		{"shop.nokey", "has no primary key"},
		{"shop.missing", "no table"},
	} {
		o := likeOptions(t, engine.Postgres, tt.table)
		o.PostgresDSN = pgDSN
		_, err := Run(o)
		require.ErrorIs(t, err, engine.ErrLike, tt.table)
		assert.Contains(t, err.Error(), tt.msg, tt.table)
	}
	var tags []string
	rows, err := conn.Query(ctx, "SELECT tag FROM public.ddl_log")
	require.NoError(t, err)
	tags, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	assert.Empty(t, tags, "DDL on the source before the table was refused")

	myDSN := binlogMariaDB(t)
	db, err := sql.Open("mysql", myDSN)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	myExec(t, db,
		"CREATE DATABASE shop",
		"CREATE TABLE shop.orders (id BIGINT NOT NULL PRIMARY KEY, note VARCHAR(40)) ENGINE=InnoDB",
		"INSERT INTO shop.orders SELECT seq, MD5(seq) FROM seq_1_to_100",
		"CREATE VIEW shop.recent AS SELECT * FROM shop.orders WHERE id > 50",
		"CREATE TABLE shop.old (id BIGINT NOT NULL PRIMARY KEY) ENGINE=MyISAM",
		"CREATE TABLE shop.nokey (a INT) ENGINE=InnoDB")
	var file string
	var pos int64
	var ignore1, ignore2 sql.NullString
	require.NoError(t, db.QueryRow("SHOW MASTER STATUS").Scan(&file, &pos, &ignore1, &ignore2))
	for _, tt := range []struct{ table, msg string }{
		{"shop.recent", "is a view; --like measures InnoDB and MyRocks tables"},
		{"shop.old", "is a table of engine MyISAM"},
		{"shop.nokey", "has no primary key"},
		{"shop.missing", "no table"},
	} {
		o := likeOptions(t, engine.MySQL, tt.table)
		o.MySQLDSN = myDSN
		_, err := Run(o)
		require.ErrorIs(t, err, engine.ErrLike, tt.table)
		assert.Contains(t, err.Error(), tt.msg, tt.table)
		assert.NotContains(t, err.Error(), `engine ""`, tt.table)
	}
	rows2, err := db.Query("SHOW BINLOG EVENTS IN '" + file + "' FROM " + strconv.FormatInt(pos, 10))
	require.NoError(t, err)
	defer rows2.Close()
	cols, err := rows2.Columns()
	require.NoError(t, err)
	var events []string
	for rows2.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows2.Scan(ptrs...))
		if info := vals[len(vals)-1].String; strings.Contains(strings.ToUpper(info), "CREATE") || strings.Contains(info, "idkit") {
			events = append(events, info)
		}
	}
	require.NoError(t, rows2.Err())
	assert.Empty(t, events, "DDL in the binary log before the table was refused")
}
