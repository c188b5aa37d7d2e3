package compare

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/myrocks"

	"github.com/idkit/idkit/internal/testkit/testenv"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The MyRocks tests run one at a time (none calls t.Parallel): each
// compares the server-wide RocksDB counters with one load's figures, and
// each holds a column family of the pool. For the same reason each holds
// testenv.MyRocksLock, which the tests of other packages that load
// MyRocks take too.

// myrocksLockWait bounds the wait for testenv.MyRocksLock: the longest
// that another package's test loads MyRocks.
const myrocksLockWait = 10 * time.Minute

// myrocksDSN returns the MariaDB server's DSN when it has the ROCKSDB
// engine, or skips the test (fails it under CI=true) saying how to get it,
// and holds testenv.MyRocksLock until the test ends.
func myrocksDSN(t *testing.T) string {
	t.Helper()
	dsn := serverDSN(t, engine.EnvMySQLDSN)
	e, skipped, err := myrocks.Open(context.Background(), dsn)
	require.NoError(t, err)
	if e == nil {
		testenv.Missing(t, skipped+" (.ci/servers.sh need_myrocks does it)")
	}
	require.NoError(t, e.Close(context.Background()))
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // after the lock is let go of
	testenv.HoldLock(t, db, testenv.MyRocksLock, myrocksLockWait)
	return dsn
}

// TestMyRocksTestsHoldTheLock: a MyRocks test holds testenv.MyRocksLock
// while it runs, and lets go of it when it ends.
func TestMyRocksTestsHoldTheLock(t *testing.T) {
	dsn := serverDSN(t, engine.EnvMySQLDSN)
	holder := func() (id sql.NullInt64) {
		db, err := sql.Open("mysql", dsn)
		require.NoError(t, err)
		defer db.Close()
		require.NoError(t, db.QueryRow("SELECT IS_USED_LOCK(?)", testenv.MyRocksLock).Scan(&id))
		return id
	}
	var during sql.NullInt64
	ran := false
	t.Run("test", func(t *testing.T) {
		myrocksDSN(t) // skips without the ROCKSDB engine (fails under CI=true)
		ran = true
		during = holder()
	})
	if !ran {
		t.Skip("the MyRocks test did not run: the server has no ROCKSDB engine")
	}
	require.True(t, during.Valid, "the lock is held during the test")
	// Another package's test may take it at once: the session differs.
	assert.NotEqual(t, during, holder(), "the test's session let go of the lock")
}

// myrocksLoad loads n keys of scheme with writers writers into MyRocks.
func myrocksLoad(t *testing.T, dsn, name string, n, writers int) engine.Figures {
	t.Helper()
	s, err := scheme.Lookup(name)
	require.NoError(t, err)
	gens, err := s.New(writers)
	require.NoError(t, err)
	keys, err := scheme.Generate(gens, s.KeyLen, n, nil)
	require.NoError(t, err)
	require.NoError(t, scheme.CloseGenerators(gens))
	value := make([]byte, DefaultValueSize)
	ctx := context.Background()
	e, skipped, err := myrocks.Open(ctx, dsn)
	require.NoError(t, err)
	require.NotNil(t, e, skipped)
	defer func() { require.NoError(t, e.Close(ctx)) }()
	d := s.Design()
	l, err := e.Load(ctx, engine.Load{Keys: keys, Int63: d.Int63, ByAge: scheme.SortsByAge(d), Value: value, Batch: 1000, Table: "t_" + strings.ReplaceAll(name, "-", "_")})
	require.NoError(t, err)
	return l
}

// TestMyRocksEveryScheme loads every scheme's keys into MyRocks and reads
// them back: every row is there, every point lookup finds its row, and
// the expiry reclaims its tenth. It loads 10,000 keys per scheme, 4,000
// under -short; under the race detector, three schemes'.
func TestMyRocksEveryScheme(t *testing.T) {
	dsn := myrocksDSN(t)
	n := 10_000
	if testing.Short() {
		n = 4_000
	}
	schemes, err := scheme.Select(everySchemeUnlessRace())
	require.NoError(t, err)
	for _, s := range schemes {
		t.Run(s.Name, func(t *testing.T) {
			l := myrocksLoad(t, dsn, s.Name, n, 2)
			assert.Equal(t, float64(n), l.Metrics["rows"], "rows read back")
			assert.GreaterOrEqual(t, l.Metrics["newest_scan_rows"], 1.0)
			assert.Equal(t, float64(n/10), l.Metrics["expiry_rows"])
			assert.GreaterOrEqual(t, l.Metrics["expiry_reclaimed"], engine.ReclaimedShare, "the expired rows' space is reclaimed")
		})
	}
}

// TestMyRocksDirection checks on MyRocks what TestPebbleDirection checks
// on Pebble, at N = 200,000 with one writer: the counter's write
// amplification is below UUIDv4's, its expiry (dropping the oldest
// partition) writes at least 10 times fewer bytes than UUIDv4's row by
// row, the partition is used exactly for the keys that sort rows by age,
// and a scan over the expired range meets UUIDv4's deletion markers and
// none of the counter's.
func TestMyRocksDirection(t *testing.T) {
	skipUnderRace(t)
	dsn := myrocksDSN(t)
	f := map[string]map[string]float64{}
	for _, name := range []string{"counter", "traceid", "decimalid", "uuidv4"} {
		f[name] = myrocksLoad(t, dsn, name, 200_000, 1).Metrics
		t.Logf("%s: %v", name, f[name])
	}
	c, u := f["counter"], f["uuidv4"]
	assert.Less(t, c["write_amp"], u["write_amp"], "the counter's write amplification is below uuidv4's")
	assert.Greater(t, c["moved_per_byte_in"], 0.0, "the counter's tables move down a level unwritten")
	assert.GreaterOrEqual(t, u["expiry_bytes"], 10*c["expiry_bytes"], "the counter's expiry writes at least 10x fewer bytes than uuidv4's")
	for name, ranged := range map[string]float64{"counter": 1, "traceid": 1, "decimalid": 0, "uuidv4": 0} {
		assert.Equal(t, ranged, f[name]["expiry_range"], "%s: the partition is dropped iff the keys sort rows by age", name)
	}
	assert.Greater(t, u["newest_scan_blocks"], 10*c["newest_scan_blocks"])
	assert.Zero(t, c["expiry_scan_skipped"], "a scan below the dropped partition meets no deletion marker")
	assert.Greater(t, u["expiry_scan_skipped"], u["expiry_rows"]/2, "a scan over uuidv4's expired range steps over its deletion markers")
}

// TestMyRocksAgreesWithServerCounters reads the server's own RocksDB
// counters before and after one load (Rocksdb_flush_write_bytes and
// Rocksdb_compact_write_bytes, server-wide) and checks the engine's
// figure for everything its column family wrote against them, within 5%,
// and its bytes logged by the load against Rocksdb_wal_bytes, which the
// expiry's deletes add to. One writer's figures: it skips under -race.
func TestMyRocksAgreesWithServerCounters(t *testing.T) {
	skipUnderRace(t)
	dsn := myrocksDSN(t)
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	defer db.Close()
	read := func() (written, wal float64) {
		require.NoError(t, db.QueryRow(`SELECT
			  sum(CASE WHEN VARIABLE_NAME IN ('ROCKSDB_FLUSH_WRITE_BYTES', 'ROCKSDB_COMPACT_WRITE_BYTES') THEN CAST(VARIABLE_VALUE AS UNSIGNED) END),
			  sum(CASE WHEN VARIABLE_NAME = 'ROCKSDB_WAL_BYTES' THEN CAST(VARIABLE_VALUE AS UNSIGNED) END)
			FROM information_schema.GLOBAL_STATUS`).Scan(&written, &wal))
		return written, wal
	}
	// The counters are the server's: another session's MyRocks rows, or
	// the background removal of a table an earlier load dropped, add to
	// them. A load that another session disturbed is measured again, at
	// most three times.
	for _, name := range []string{"counter", "uuidv4"} {
		t.Run(name, func(t *testing.T) {
			for attempt := 1; ; attempt++ {
				w0, l0 := read()
				l := myrocksLoad(t, dsn, name, 100_000, 1)
				w1, l1 := read()
				m := l.Metrics
				t.Logf("attempt %d: engine: written %v, logged %v; server: written %v, logged %v", attempt, m["bytes_written_all"], m["bytes_in"], w1-w0, l1-l0)
				if m["disturbed"] != 0 || w1-w0 > 1.05*m["bytes_written_all"] {
					require.Less(t, attempt, 3, "in each of three loads, another session changed MyRocks rows or the server wrote more than 5%% above the engine's figure")
					continue
				}
				assert.InEpsilon(t, w1-w0, m["bytes_written_all"], 0.05, "table bytes written")
				assert.Greater(t, m["bytes_in"], 0.0)
				assert.LessOrEqual(t, m["bytes_in"], l1-l0, "the load's log bytes are part of the server's")
				assert.Greater(t, m["bytes_in"], 0.5*(l1-l0), "and most of them")
				return
			}
		})
	}
}

// TestMyRocksWithoutSuper: a user who may create databases but lacks
// SUPER, which the loads' flushes and compactions need, or PROCESS, which
// reading the engine's statistics needs, gets a run without MyRocks and a
// note naming the grant, and the run creates nothing for MyRocks.
func TestMyRocksWithoutSuper(t *testing.T) {
	dsn := myrocksDSN(t)
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // after the user is dropped
	nosuper := mysqlUser(t, db, dsn, "idkit_nosuper_", "", "CREATE, DROP, INSERT, SELECT, DELETE, ALTER ON `idkit\\_rocks\\_%`.*")
	cfg, err := mysql.ParseDSN(nosuper)
	require.NoError(t, err)
	e, skipped, err := myrocks.Open(context.Background(), nosuper)
	require.NoError(t, err)
	require.Nil(t, e, "a user without SUPER runs no MyRocks load")
	assert.Contains(t, skipped, "GRANT SUPER, PROCESS ON *.* TO '"+cfg.User+"'@")

	// With SUPER alone the engine's statistics would read as empty.
	noprocess := mysqlUser(t, db, dsn, "idkit_noprocess_", "", "CREATE, DROP, INSERT, SELECT, DELETE, ALTER ON `idkit\\_rocks\\_%`.*", "SUPER ON *.*")
	cfg, err = mysql.ParseDSN(noprocess)
	require.NoError(t, err)
	e, skipped, err = myrocks.Open(context.Background(), noprocess)
	require.NoError(t, err)
	require.Nil(t, e, "a user without PROCESS runs no MyRocks load")
	assert.Contains(t, skipped, "GRANT PROCESS ON *.* TO '"+cfg.User+"'@")
}

// TestLikeMyRocks: a --like run on a MyRocks table copies it into MyRocks
// on the scratch server, every index of every copy in the load's column
// family, ranks the schemes on the LSM's figures of the copies, and
// leaves the table unchanged; without a scratch server it refuses before
// it creates anything, naming --scratch, and a user without the rights
// the copies need is told them all at once.
func TestLikeMyRocks(t *testing.T) {
	dsn := myrocksDSN(t)
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	database := "idkit_likerocks_" + engine.RunSuffix()
	table := database + ".orders"
	t.Cleanup(func() { db.Exec("DROP DATABASE IF EXISTS " + database) })
	myExec(t, db,
		"CREATE DATABASE "+database,
		"CREATE TABLE "+table+` (id BINARY(16) NOT NULL PRIMARY KEY, payload VARCHAR(300) NOT NULL,
			created_at DATETIME(6) NOT NULL, email VARCHAR(100) NOT NULL, UNIQUE KEY (email), KEY (created_at)) ENGINE=ROCKSDB`,
		"INSERT INTO "+table+` SELECT UNHEX(REPLACE(UUID(), '-', '')), REPEAT(MD5(seq), 9),
			NOW(6) - INTERVAL seq SECOND, CONCAT('user', seq, '@example.com') FROM seq_1_to_10000`,
		"SET GLOBAL rocksdb_force_flush_memtable_now = 1")
	state := func() string { return mySourceState(t, db, database, "orders").sum }
	before := state()

	o := likeOptions(t, engine.MyRocks, database+".orders")
	o.MySQLDSN = dsn
	_, err = Run(o)
	require.ErrorIs(t, err, engine.ErrLike)
	assert.Contains(t, err.Error(), "--scratch DSN", "a MyRocks table's copies need a scratch server")

	o.ScratchMySQLDSN = dsn
	r, err := Run(o)
	require.NoError(t, err)
	require.Len(t, r.Like, 1)
	lt := r.Like[0]
	assert.Equal(t, engine.MyRocks, lt.Engine)
	assert.Equal(t, []string{"primary key (id)", "(created_at)", "unique (email)"}, indexNames(lt.Indexes))
	for _, ix := range lt.Indexes {
		assert.Positive(t, ix.Bytes, "size of %s today", ix.Name)
	}
	// The index sizes today are counted before compression, as the
	// copies' (whose column family compresses nothing) are: the primary
	// key holds at least every row's 288-byte payload, which the server's
	// Snappy shrinks on disk.
	assert.GreaterOrEqual(t, lt.Indexes[0].Bytes, int64(10_000*288), "the primary key's size today, before compression")
	assert.Contains(t, strings.Join(lt.Notes, "\n"), "before compression")
	for _, e := range r.Engines {
		if e.Name == engine.MySQL {
			assert.Contains(t, e.Skipped, "MyRocks table into MyRocks only")
		}
	}
	scanRows := map[string]float64{}
	for _, s := range r.Schemes {
		l, ok := s.Runs[0].EngineLoad(engine.MyRocks)
		require.True(t, ok, s.Name)
		assert.Equal(t, float64(o.N), l.Metrics["rows"], "%s: every row in the copy", s.Name)
		require.Len(t, l.Indexes, 3, "%s: every index of the copy", s.Name)
		for _, ix := range l.Indexes {
			assert.Positive(t, ix.Bytes, "%s: %s in the load's column family", s.Name, ix.Name)
		}
		assert.Positive(t, l.Metrics["bytes_written_per_insert"], s.Name)
		scanRows[s.Name] = l.Metrics["newest_scan_rows"]
	}
	assert.InDelta(t, 1, scanRows["counter"], 0.01, "the counter's newest rows are the last in key order")
	assert.Greater(t, scanRows["uuidv4"], 50.0, "uuidv4's newest rows are spread over the whole key")
	require.NotNil(t, r.Verdict)
	assert.Equal(t, engine.MyRocks, r.Verdict.Engine, "the verdict ranks on the table's engine")
	assert.Contains(t, r.Verdict.Basis, "bytes flushed and compacted")
	// At 20,000 keys no compaction moves a byte: random keys cost what
	// ordered ones do, and the verdict says it cannot judge them.
	assert.Empty(t, r.Verdict.Ranked)
	assert.Contains(t, r.Verdict.CannotJudge, "no compaction moved or rewrote a byte in any load")
	assert.Contains(t, unjudged(r.Verdict), "uuidv4")
	// The other family's verdict is on the run's own rows, and says so.
	require.NotNil(t, r.Families)
	for _, v := range r.Families.Verdicts {
		if v.Engine != engine.MyRocks {
			assert.Contains(t, v.Basis, "not copies of your table", v.Engine)
		}
	}
	var text strings.Builder
	require.NoError(t, r.WriteTable(&text))
	t.Log(text.String()[strings.Index(text.String(), "VERDICT"):])
	assert.Contains(t, text.String(), "YOUR TABLE "+lt.Name+" IN MYROCKS")
	assert.Equal(t, before, state(), "the table is unchanged")

	// A user who may only read the table, on both sides, is told every
	// right the MyRocks copies need, in one message.
	reader := mysqlReader(t, db, dsn, database, "orders")
	o.MySQLDSN, o.ScratchMySQLDSN = reader, reader
	_, err = Run(o)
	require.ErrorIs(t, err, engine.ErrRights)
	for _, grant := range []string{"ON `idkit\\_rocks\\_%`.* TO", "GRANT SUPER, PROCESS ON *.* TO"} {
		assert.Contains(t, err.Error(), grant)
	}
	assert.Equal(t, before, state(), "the table is unchanged")
}

// TestLikeMyRocksTakesNoLocks runs --like on a MyRocks table while an
// application session holds every row FOR UPDATE. The run's sessions give
// up on a row lock after a second (rocksdb_lock_wait_timeout=1, set
// through the DSN), so a run that read with locks would fail; this one
// reads a snapshot and finishes, no session times out on a MyRocks row
// lock, and the application's transaction commits undisturbed.
func TestLikeMyRocksTakesNoLocks(t *testing.T) {
	dsn := myrocksDSN(t)
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // after the cleanups below, which use it
	ctx := context.Background()
	database := "idkit_rockslocks_" + engine.RunSuffix()
	table := database + ".orders"
	t.Cleanup(func() { db.Exec("DROP DATABASE IF EXISTS " + database) })
	myExec(t, db,
		"CREATE DATABASE "+database,
		"CREATE TABLE "+table+" (id BIGINT NOT NULL PRIMARY KEY, note VARCHAR(45) NOT NULL) ENGINE=ROCKSDB",
		"INSERT INTO "+table+" SELECT seq, MD5(seq) FROM seq_1_to_5000")

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

	lockTimeouts := func() (n int64) {
		var name string
		require.NoError(t, db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Rocksdb_row_lock_wait_timeouts'").Scan(&name, &n))
		return n
	}
	timeouts := lockTimeouts()
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	strict := cfg.Clone()
	if strict.Params == nil {
		strict.Params = map[string]string{}
	}
	strict.Params["rocksdb_lock_wait_timeout"] = "1"
	o := likeOptions(t, engine.MyRocks, table)
	o.MySQLDSN = strict.FormatDSN()
	o.ScratchMySQLDSN = o.MySQLDSN
	r, err := Run(o)
	require.NoError(t, err, "a run beside rows locked FOR UPDATE")
	require.Len(t, r.Like, 1)
	assert.Equal(t, engine.MyRocks, r.Like[0].Engine)
	assert.Equal(t, 2000, r.Like[0].Sampled)
	assert.Equal(t, timeouts, lockTimeouts(), "Rocksdb_row_lock_wait_timeouts: no session timed out on a row lock during the run")

	var still int
	require.NoError(t, tx.QueryRowContext(ctx, "SELECT count(*) FROM "+table+" WHERE note <> ''").Scan(&still))
	assert.Equal(t, 5000, still)
	require.NoError(t, tx.Commit(), "the application's transaction commits")
}

// TestMyRocksSaysDisturbedOnlyWhenSo: the MyRocks section says that
// another session changed rows during a load only when one did, and
// names the loads.
func TestMyRocksSaysDisturbedOnlyWhenSo(t *testing.T) {
	t.Parallel()
	load := func() engine.Figures {
		return engine.Figures{Engine: engine.MyRocks, Metrics: map[string]float64{"write_amp": 1}}
	}
	r := &report.Report{Config: report.Config{N: 1000, ValueSize: 100, BatchSize: 100}, Engines: []engine.Info{{Name: engine.MyRocks}},
		Schemes: []report.Result{
			{Name: "counter", Runs: []report.WriterRun{{Writers: 1, Engines: []engine.Figures{load()}}}},
			{Name: "uuidv4", Runs: []report.WriterRun{{Writers: 1, Engines: []engine.Figures{load()}}, {Writers: 4, Engines: []engine.Figures{load()}}}},
		}}
	note := func() string {
		for _, s := range r.Sections() {
			if s.ID == engine.MyRocks {
				return strings.Join(s.Note, "\n")
			}
		}
		t.Fatal("no MyRocks section")
		return ""
	}
	assert.NotContains(t, note(), "disturbed")
	r.Schemes[1].Runs[1].Engines[0].Metrics["disturbed"] = 1
	assert.Contains(t, note(), "disturbed: another session changed MyRocks rows during the loads of uuidv4 with 4 writer(s): ")
}
