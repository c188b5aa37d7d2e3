package main

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// segmentStores are the server stores of segment blocks, each with the
// --segment-store URL of a schema, database or key prefix of the test's
// own.
var segmentStores = []struct {
	name string
	url  func(t *testing.T) string
}{
	{"postgres", postgresSegmentURL},
	{"mysql", mysqlSegmentURL},
	{"redis", redisSegmentURL},
}

// TestServeSegmentStores serves a segment tag from each server store,
// through a stop and a restart of serve: the IDs start at 1 on a fresh
// tag and the restarted server continues above them, with no duplicate.
func TestServeSegmentStores(t *testing.T) {
	t.Parallel()
	for _, tt := range segmentStores {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := tt.url(t)
			log := filepath.Join(t.TempDir(), "idkit.db")
			seen := map[string]bool{}
			var last int64
			for run := range 2 {
				url, stderr, stop := serveInProcess(t, "--schemes", "objectid", "--log", log,
					"--segment-store", store, "--segment-tag", "orders")
				var ids struct{ IDs []string }
				require.Equal(t, http.StatusOK, getJSON(t, url+"/v1/segment/orders?n=20", &ids), stderr.String())
				require.Len(t, ids.IDs, 20)
				if run == 0 {
					assert.Equal(t, "1", ids.IDs[0], "a fresh tag starts at 1")
				}
				for _, id := range ids.IDs {
					assert.False(t, seen[id], "ID %s issued twice", id)
					seen[id] = true
					v, err := strconv.ParseInt(id, 10, 64)
					require.NoError(t, err)
					assert.Greater(t, v, last, "IDs increase across restarts")
					last = v
				}
				require.Equal(t, 0, stop(), stderr.String())
			}
		})
	}
}

// TestServeSegmentStoreErrors: a store URL that cannot be used fails with
// one line naming the problem, and never repeats the password.
func TestServeSegmentStoreErrors(t *testing.T) {
	t.Parallel()
	const password = "hunter2-Secret"
	redisAddr := storetest.Server(t, "IDKIT_REDIS_ADDR", "Redis", "127.0.0.1:6379")
	for _, tt := range []struct {
		url, want string
	}{
		{"mysql://root:" + password + "@127.0.0.1:1/idkit", "--segment-store mysql"},
		{"mysql://root:" + password + "@%zz", "does not parse"},
		{"postgres://postgres:" + password + "@127.0.0.1:1/idkit?connect_timeout=5", "--segment-store postgres"},
		{"redis://:" + password + "@127.0.0.1:1", "--segment-store redis"},
		{"ftp://root:" + password + "@host", `unknown scheme "ftp"`},
		{"root:" + password + "@host", "want a postgres://, mysql:// or redis:// URL"},
	} {
		code, _, stderr := clitest.Run("serve", "--addr", "127.0.0.1:0", "--log", filepath.Join(t.TempDir(), "idkit.db"),
			"--schemes", "objectid", "--segment-tag", "t", "--segment-store", tt.url)
		assert.NotEqual(t, 0, code, tt.url)
		assert.Contains(t, stderr, tt.want, tt.url)
		assert.NotContains(t, stderr, password, "the password in the output")
	}

	// A Redis without appendfsync always can lose INCRBYs in a crash and
	// so repeat IDs: refused unless the URL accepts it.
	rc := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer rc.Close()
	fsync, err := rc.ConfigGet(context.Background(), "appendfsync").Result()
	require.NoError(t, err)
	aof, err := rc.ConfigGet(context.Background(), "appendonly").Result()
	require.NoError(t, err)
	if fsync["appendfsync"] != "always" || aof["appendonly"] != "yes" {
		code, _, stderr := clitest.Run("serve", "--addr", "127.0.0.1:0", "--log", filepath.Join(t.TempDir(), "idkit.db"),
			"--schemes", "objectid", "--segment-tag", "t", "--segment-store", "redis://"+redisAddr)
		assert.NotEqual(t, 0, code)
		assert.Contains(t, stderr, "not durable")
	}

	code, _, stderr := clitest.Run("serve", "--addr", "127.0.0.1:0", "--schemes", "objectid", "--segment-store", "redis://"+redisAddr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "without --segment-tag")
}

// postgresSegmentURL returns a --segment-store URL on a schema of the
// test's own, dropped when it ends.
func postgresSegmentURL(t *testing.T) string {
	dsn := storetest.Server(t, "IDKIT_POSTGRES_DSN", "PostgreSQL", "postgres://postgres@127.0.0.1:5432/test")
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	schema := "idkit_serve_" + storetest.Suffix(t)
	_, err = pool.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := pool.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
		assert.NoError(t, err)
		pool.Close()
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}

// mysqlSegmentURL returns a --segment-store URL on a database of the
// test's own, dropped when it ends.
func mysqlSegmentURL(t *testing.T) string {
	cfg, err := mysql.ParseDSN(storetest.Server(t, "IDKIT_MYSQL_DSN", "MariaDB/MySQL", "'root@tcp(127.0.0.1:3306)/test'"))
	require.NoError(t, err)
	root, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	name := "idkit_serve_" + storetest.Suffix(t)
	_, err = root.Exec("CREATE DATABASE " + name)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := root.Exec("DROP DATABASE " + name)
		assert.NoError(t, err)
		root.Close()
	})
	cfg.DBName = name
	return "mysql://" + cfg.FormatDSN()
}

// redisSegmentURL returns a --segment-store URL with a key prefix of the
// test's own, whose keys are deleted when it ends. It accepts a server
// without appendfsync always, as the test server runs.
func redisSegmentURL(t *testing.T) string {
	addr := storetest.Server(t, "IDKIT_REDIS_ADDR", "Redis", "127.0.0.1:6379")
	prefix := "idkit-test-" + storetest.Suffix(t) + ":"
	client := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() {
		ctx := context.Background()
		keys, err := client.Keys(ctx, prefix+"*").Result()
		assert.NoError(t, err)
		if len(keys) > 0 {
			assert.NoError(t, client.Del(ctx, keys...).Err())
		}
		client.Close()
	})
	return "redis://" + addr + "?allow_volatile=true&prefix=" + prefix
}

// TestServeSegmentStoresKilled runs the real binary on each server store,
// SIGKILLs it while clients take IDs of a segment tag, and restarts it,
// twice: no ID is issued twice.
func TestServeSegmentStoresKilled(t *testing.T) {
	t.Parallel()
	bin := clitest.Build(t, "github.com/idkit/idkit/cmd/idkit/idkit-full")
	for _, tt := range segmentStores {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := []string{envSegmentStore + "=" + tt.url(t)}
			log := filepath.Join(t.TempDir(), "idkit.db")
			seen := &served{ids: map[string]map[string]string{}}
			for run := range 3 {
				s := startServer(t, bin, env, "--schemes", "objectid", "--log", log, "--segment-tag", "orders")
				name := "run " + strconv.Itoa(run)
				stop := make(chan struct{})
				done := make(chan int, 2)
				for range 2 {
					go func() {
						n := 0
						for {
							select {
							case <-stop:
								done <- n
								return
							default:
							}
							ids, err := s.fetch("segment/orders", 100, run%2 == 0)
							if err != nil {
								done <- n // the kill cut a request off
								return
							}
							seen.add(name, "segment/orders", ids)
							n += len(ids)
						}
					}()
				}
				testwait.Until(t, func() bool {
					seen.mu.Lock()
					defer seen.mu.Unlock()
					return len(seen.ids["segment/orders"]) >= (run+1)*1000
				}, "IDs from "+name)
				if run < 2 {
					s.stop(t, syscall.SIGKILL)
				}
				close(stop)
				for range 2 {
					testwait.Recv(t, done, "a client's end")
				}
				if run == 2 {
					s.stop(t, syscall.SIGTERM)
				}
			}
			assert.Empty(t, seen.repeats, "IDs issued twice")
		})
	}
}
