package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/compare"
	"github.com/idkit/idkit/internal/testkit/testenv"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jsonPath, htmlPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	// Empty DSNs switch the servers off whatever the environment says.
	code, stdout, stderr := clitest.Run("compare", "-n", "2000", "--writers", "2", "--schemes", "counter,uuidv4",
		"--postgres", "", "--mysql", "", "--json", jsonPath, "--html", htmlPath)
	require.Equal(t, 0, code, stderr)

	for _, want := range []string{
		"DESIGN — computed from each scheme's layout, not measured",
		"INSERT LOCALITY IN BBOLT — measured in this run (2,000 keys",
		"pages/1k @0.5", "INSERT LOCALITY IN SQLITE", "RANDOMNESS OF THE ID BITS", "VERDICT — need none, engine sqlite, 2 writer(s)",
		"wrote " + jsonPath, "wrote " + htmlPath,
	} {
		assert.Contains(t, stdout, want)
	}
	// Neither output is a terminal here: no bar, a line per finished step.
	assert.NotContains(t, stdout, "\r", "no progress on stdout")
	assert.NotContains(t, stderr, "\r", "no bar in a file")
	assert.Contains(t, stderr, "uuidv4: bbolt, 2 writer(s), fill 0.9\n", "a line per finished step on stderr")

	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	var r compare.Report
	require.NoError(t, json.Unmarshal(b, &r))
	assert.Equal(t, 2000, r.Config.N)
	assert.Equal(t, 2, r.Config.Writers)
	require.Len(t, r.Schemes, 2)
	assert.Equal(t, "counter", r.Schemes[0].Name)
	assert.Equal(t, "uuidv4", r.Schemes[1].Name)

	page, err := os.ReadFile(htmlPath)
	require.NoError(t, err)
	assert.Equal(t, 14, strings.Count(string(page), "data-chart="), "Pebble adds its headline, reads, expiry and verdict")
}

// idkit compare > out.txt 2> err.txt: no carriage-return frames in either
// file; with --quiet nothing on stderr.
func TestCompareIntoFiles(t *testing.T) {
	t.Parallel()
	for _, quiet := range []bool{false, true} {
		dir := t.TempDir()
		out, err := os.Create(filepath.Join(dir, "out.txt"))
		require.NoError(t, err)
		errOut, err := os.Create(filepath.Join(dir, "err.txt"))
		require.NoError(t, err)
		args := []string{"compare", "-n", "1000", "--schemes", "counter", "--postgres", "", "--mysql", ""}
		if quiet {
			args = append(args, "--quiet")
		}
		code := cli.Run(args, out, errOut)
		require.NoError(t, out.Close())
		require.NoError(t, errOut.Close())
		stdout, err := os.ReadFile(out.Name())
		require.NoError(t, err)
		stderr, err := os.ReadFile(errOut.Name())
		require.NoError(t, err)
		require.Equal(t, 0, code, string(stderr))
		assert.Contains(t, string(stdout), "VERDICT")
		assert.NotContains(t, string(stdout), "\r")
		assert.NotContains(t, string(stderr), "\r")
		if quiet {
			assert.Empty(t, string(stderr), "--quiet")
		} else {
			assert.Contains(t, string(stderr), "counter: generation speed\n")
		}
	}
}

func TestCompareUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"compare", "-n", "0"}, "-n 0 out of range, want 1..=50000000"},
		{[]string{"compare", "--writers", "0"}, "--writers 0 out of range, want 1..=1024"},
		{[]string{"compare", "--writers", "x"}, `invalid value "x" for flag --writers`},
		{[]string{"compare", "--schemes", "uuidv9"}, `unknown scheme "uuidv9", want one of counter`},
		{[]string{"compare", "--bogus"}, "unknown flag --bogus"},
		{[]string{"compare", "extra"}, `unexpected argument "extra"`},
		{[]string{"compare", "--need", "fast"}, `--need: compare: bad constraint "fast": want one of 64bit, js-safe`},
		{[]string{"compare", "--need", "writers=0"}, `--need: compare: bad constraint "writers=0": want writers=1..1024`},
		{[]string{"compare", "--need", "writers=8", "--writers", "4"}, "--need writers=8 but --writers 4"},
		{[]string{"compare", "--engine", "oracle"}, `--engine "oracle", want one of bbolt, sqlite, pebble, postgres, mysql, myrocks, spider-range, spider-hash, or spider`},
		{[]string{"compare", "--checkpoint-every", "-1"}, "--checkpoint-every -1 out of range"},
		{[]string{"compare", "--grow", "-n", "1000"}, "--grow measures at every N up to --max-n; leave out -n"},
		{[]string{"compare", "--grow", "--max-n", "9999"}, "--max-n 9999 out of range, want 10000..=50000000"},
		{[]string{"compare", "--max-n", "100000"}, "--max-n is the largest N of --grow; add --grow"},
	} {
		code, stdout, stderr := clitest.Run(tt.args...)
		assert.Equal(t, 2, code, "%v", tt.args)
		assert.Empty(t, stdout, "%v", tt.args)
		assert.Contains(t, stderr, tt.msg, "%v", tt.args)
		assert.Contains(t, stderr, "usage: idkit compare", "%v", tt.args)
	}
}

func TestCompareBadOutputFile(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "missing", "r.json")
	code, stdout, stderr := clitest.Run("compare", "-n", "10", "--schemes", "counter", "--json", bad)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout, "fails before the run")
	assert.Contains(t, stderr, "idkit compare: open "+bad)
}

// --like takes a plain schema.table and a server to read it from; the
// errors come before anything is created.
func TestCompareLikeUsage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--postgres", "postgres://x", "--like", "orders"}, "no dot after the schema; want schema.table"},
		{[]string{"--postgres", "postgres://x", "--like", "a.b;drop table c"}, `";drop table c" after the table name`},
		{[]string{"--postgres", "", "--mysql", "", "--like", "public.orders"}, "--like public.orders needs --postgres DSN or --mysql DSN"},
		{[]string{"--postgres", "postgres://x", "--like", "public.orders", "--sample", "0"}, "--sample 0 out of range, want 1..=1000000"},
		{[]string{"--postgres", "postgres://x", "--scratch", "postgres://y"}, "--scratch is where the copies of a --like run go; add --like TABLE"},
		{[]string{"--postgres", "", "--mysql", "u@tcp(h:3306)/d", "--like", "d.t", "--scratch", "postgres://y"}, "--scratch is a PostgreSQL server: add --postgres DSN"},
		{[]string{"--postgres", "postgres://x", "--like", "a.b", "--scratch", "postgres://y", "--scratch", "postgresql://z"}, "a second PostgreSQL scratch server; give one per engine"},
		{[]string{"--postgres", "postgres://x", "--like", "a.b", "--scratch", "nonsense"}, "not a postgres:// URL, and not a MariaDB/MySQL DSN"},
		{[]string{"--postgres", "postgres://x", "--dry-run"}, "--dry-run says what a --like run would do; add --like TABLE"},
		{[]string{"--postgres", "postgres://x", "--max-load", "-1"}, "--max-load -1 out of range, want 1..=100000"},
		{[]string{"--postgres", "postgres://x", "--mysql", "u@tcp(h:3306)/d", "--max-lag", "1s"}, "a MariaDB/MySQL primary does not know its replicas' lag"},
		{[]string{"--postgres", "", "--mysql", "", "--max-load", "5"}, "--max-load and --max-lag throttle the PostgreSQL and MariaDB/MySQL loads"},
		{[]string{"--postgres", "postgres://x", "--like", "a.b", "--dry-run", "--html", "r.html"}, "--dry-run measures nothing: leave out --grow and --html"},
	} {
		code, stdout, stderr := clitest.Run(append([]string{"compare", "-n", "10"}, tt.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tt.args, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, tt.msg, tt.args)
	}
}

func TestCompareHelp(t *testing.T) {
	t.Parallel()
	code, stdout, _ := clitest.Run("help", "compare")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "usage: idkit compare [-n N | --grow [--max-n N]] [--writers K [--concurrent]] [--schemes LIST] [--postgres DSN] [--mysql DSN] [--need LIST] [--engine NAME [--shards N]] [--like TABLE [--scratch DSN] [--sample N] [--dry-run]] [--max-load N] [--max-lag D] [--json FILE] [--html FILE]")
	assert.Contains(t, stdout, "--like TABLE    load the keys into copies of your own table")
	assert.Contains(t, stdout, "pages dirtied\n        per 1,000 inserts")
	assert.Contains(t, stdout, "--need LIST     constraints of the verdict: 64bit, js-safe, sortable, unguessable, writers=K, rate=IDS_PER_SECOND")
	code, stdout, _ = clitest.Run("help")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "compare")
}

// TestCompareEngineWithoutServer: asking the verdict for a server engine
// without its DSN is a usage error that says how to name the server.
func TestCompareEngineWithoutServer(t *testing.T) {
	t.Setenv(compare.EnvPostgresDSN, "")
	t.Setenv(compare.EnvMySQLDSN, "")
	for engine, flag := range map[string]string{"postgres": "postgres", "mysql": "mysql", "myrocks": "mysql"} {
		code, _, stderr := clitest.Run("compare", "-n", "10", "--engine", engine)
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, "--engine "+engine+" needs --"+flag+" DSN")
	}
}

// TestCompareServers runs compare against the real PostgreSQL and MariaDB
// servers named by the environment, MariaDB with its MyRocks engine, as CI
// does, with a verdict on PostgreSQL's figures. It holds
// testenv.MyRocksLock, so that its MyRocks loads do not run beside the
// compare package's, which read the server-wide RocksDB counters.
func TestCompareServers(t *testing.T) {
	t.Parallel()
	for _, env := range []string{compare.EnvPostgresDSN, compare.EnvMySQLDSN} {
		testenv.Server(t, env, "database server", "(as .ci/run does)")
	}
	db, err := sql.Open("mysql", os.Getenv(compare.EnvMySQLDSN))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // after the lock is let go of
	var support string
	err = db.QueryRow("SELECT SUPPORT FROM information_schema.ENGINES WHERE ENGINE = 'ROCKSDB'").Scan(&support)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && support != "YES" && support != "DEFAULT") {
		testenv.Missing(t, "the MariaDB server has no ROCKSDB engine: install Debian's mariadb-plugin-rocksdb and restart the server (.ci/servers.sh need_myrocks does it)")
	}
	require.NoError(t, err, "the ROCKSDB engine's support")
	testenv.HoldLock(t, db, testenv.MyRocksLock, 10*time.Minute)
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := clitest.Run("compare", "-n", "3000", "--schemes", "counter,traceid,uuidv4",
		"--need", "64bit,writers=2", "--engine", "postgres", "--json", jsonPath)
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{
		"engines: bbolt, sqlite, pebble, postgres, mysql, myrocks",
		"LSM TREE: WRITES, READS AND EXPIRY IN MYROCKS — measured in this run (3,000 keys",
		"INSERT LOCALITY IN POSTGRESQL — measured in this run (3,000 keys", "dirtied/1k", "WAL B/insert", "leaf frag",
		"INSERT LOCALITY IN INNODB — measured in this run (3,000 keys", "written/1k", "redo B/insert", "splits/1k",
		"VERDICT — need 64bit,writers=2, engine postgres, 2 writer(s)",
		"1. traceid: pages dirtied", "rejected uuidv4: 128 bits, need 64bit (a BIGINT column)",
	} {
		assert.Contains(t, stdout, want)
	}
	b, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	var r compare.Report
	require.NoError(t, json.Unmarshal(b, &r))
	require.NotNil(t, r.Verdict)
	assert.Equal(t, "postgres", r.Verdict.Engine)
	assert.Equal(t, 2, r.Config.Writers, "writers=2 sets --writers")
	for _, s := range r.Schemes {
		for _, run := range s.Runs {
			var engines []string
			for _, e := range run.Engines {
				engines = append(engines, e.Engine)
			}
			assert.Subset(t, engines, []string{"sqlite", "pebble", "postgres", "mysql", "myrocks"}, "%s: a load on each engine but bbolt, which reports fills", s.Name)
		}
	}
}

// TestCompareSmallNWarning: a run with few keys per load and a scheme in
// no order warns that the verdict undervalues that scheme's cost; a run of
// ordered schemes, or with enough keys, does not.
func TestCompareSmallNWarning(t *testing.T) {
	t.Parallel()
	pick := func(list string) []compare.Scheme {
		s, err := compare.Select(list)
		require.NoError(t, err)
		return s
	}
	w := smallNWarning(5000, pick("traceid,uuid4"))
	assert.Contains(t, w, "-n 5000 is small")
	assert.Contains(t, w, "(uuidv4)")
	assert.Empty(t, smallNWarning(5000, pick("traceid,snowflake")), "ordered keys only")
	assert.Empty(t, smallNWarning(smallN, pick("uuidv4")), "enough keys")
}
