// Package testenv gives tests the real servers and tools they need: it
// returns what the environment names, and when that is missing, skips
// the test, or fails it under CI=true (as .ci/run sets), so that a suite
// cannot pass in CI by skipping its servers.
package testenv

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"os"
	"os/exec"
	"testing"
	"time"
)

// CI reports whether the tests run in CI, where a missing server or tool
// is a failure.
func CI() bool { return os.Getenv("CI") == "true" }

// Server returns the address in the environment variable env. If env is
// empty, it skips t with one line saying how to set it (for example
// "IDKIT_MYSQL_DSN='root@tcp(127.0.0.1:3306)/test'"), or fails t under
// CI=true.
func Server(t testing.TB, env, what, example string) string {
	t.Helper()
	addr := os.Getenv(env)
	if addr == "" {
		missing(t, "no "+what+": set "+env+"="+example+" to run")
	}
	return addr
}

// Tool returns the path of the program name, or skips t (fails it under
// CI=true) when it is not on PATH.
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		missing(t, "no "+name+" on PATH: "+install)
	}
	return bin
}

// Missing skips t with msg, which says what is missing and how to get it,
// or fails t under CI=true.
func Missing(t testing.TB, msg string) {
	t.Helper()
	missing(t, msg)
}

func missing(t testing.TB, msg string) {
	t.Helper()
	if CI() {
		t.Fatal(msg + " (CI=true makes this a failure)")
	}
	t.Skip(msg)
}

// MyRocksLock is the MariaDB user lock that a test holds while it loads
// MyRocks on the server that IDKIT_MYSQL_DSN names: compare's loads read
// the server-wide RocksDB counters, which every session's MyRocks writes
// add to, so that one package's load would disturb another's figures
// when go test runs the packages at once.
const MyRocksLock = "idkit_test_myrocks"

// HoldLock takes MariaDB's user lock name (GET_LOCK) on a connection of
// db's own, waiting up to wait while another session holds it, and holds
// it until t and its subtests end: for tests in different processes that
// must not use a server at the same time. db must stay open until then.
func HoldLock(t testing.TB, db *sql.DB, name string, wait time.Duration) {
	t.Helper()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("a connection to hold the lock %s: %v", name, err)
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", name, wait.Seconds()).Scan(&got); err != nil {
		conn.Close()
		t.Fatalf("GET_LOCK(%q): %v", name, err)
	}
	if got.Int64 != 1 {
		conn.Close()
		t.Fatalf("the lock %s not granted within %v: another test of this server held it all that time", name, wait)
	}
	t.Cleanup(func() {
		// The connection goes back to db's pool: the lock must be let go
		// of, or it would stay with the pool's session.
		if _, err := conn.ExecContext(ctx, "SELECT RELEASE_LOCK(?)", name); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn }) // closes the session, and with it the lock
		}
		conn.Close()
	})
}
