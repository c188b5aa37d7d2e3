package scheme

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/internal/testkit/testenv"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/fleet/fleettest"
)

// TestSegmentRowsNeedServers: without a server address only the bbolt row
// exists; each address adds the rows of its store.
func TestSegmentRowsNeedServers(t *testing.T) {
	t.Parallel()
	names := func(env map[string]string) []string {
		var out []string
		for _, s := range (scratch{getenv: func(k string) string { return env[k] }, dir: t.TempDir()}).schemes() {
			out = append(out, s.Name)
		}
		return out
	}
	assert.Equal(t, []string{"segment-bbolt", "segment-bbolt-fixed"}, names(nil))
	assert.Equal(t, []string{"segment-bbolt", "segment-bbolt-fixed", "segment-redis", "segment-redis-fixed", "redis-incr"}, names(map[string]string{EnvRedisAddr: "127.0.0.1:6379"}))
	assert.Equal(t, []string{"segment-bbolt", "segment-bbolt-fixed", "segment-postgres", "segment-postgres-fixed", "segment-postgres-fetch",
		"segment-mysql", "segment-mysql-fixed", "segment-mysql-fetch", "segment-redis", "segment-redis-fixed", "redis-incr",
		"segment-etcd", "segment-etcd-fixed", "segment-etcd-fetch"},
		names(map[string]string{engine.EnvPostgresDSN: "x", engine.EnvMySQLDSN: "y", EnvRedisAddr: "z", EnvEtcdEndpoints: "http://e1,http://e2"}))

	// The registry holds the rows of the servers named as the process
	// started, and the bbolt row always.
	_, err := Lookup("segment-bbolt")
	assert.NoError(t, err)
	_, err = Lookup("redis-incr")
	assert.Equal(t, os.Getenv(EnvRedisAddr) == "", err != nil, "redis-incr registered exactly when %s is set", EnvRedisAddr)
}

// TestSegmentScratchRemoved: closing a row's store removes the file,
// database or key made for it.
func TestSegmentScratchRemoved(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, sc scratchStore, gone func() bool) {
		t.Helper()
		b, err := sc.store.ReserveBlock(context.Background(), sc.tag, segmentStep)
		require.NoError(t, err)
		require.EqualValues(t, 1, b.First)
		require.False(t, gone(), "%s is there while the store is open", sc.where)
		require.NoError(t, sc.close())
		assert.True(t, gone(), "%s is left after close", sc.where)
	}
	t.Run("bbolt", func(t *testing.T) {
		sc, err := openBolt(t.TempDir())
		require.NoError(t, err)
		check(t, sc, func() bool { _, err := os.Stat(sc.where); return errors.Is(err, fs.ErrNotExist) })
	})
	t.Run("mysql", func(t *testing.T) {
		dsn := testenv.Server(t, engine.EnvMySQLDSN, "MariaDB", "'root@tcp(127.0.0.1:3306)/test'")
		sc, err := openMySQLScratch(dsn)
		require.NoError(t, err)
		cfg, err := mysql.ParseDSN(dsn)
		require.NoError(t, err)
		db, err := sql.Open("mysql", cfg.FormatDSN())
		require.NoError(t, err)
		defer db.Close()
		check(t, sc, func() bool {
			var n int
			require.NoError(t, db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", sc.where).Scan(&n))
			return n == 0
		})
	})
	t.Run("etcd", func(t *testing.T) {
		cluster := fleettest.Start(t, 1)
		sc, err := openEtcdScratch([]string{cluster.Endpoint(0)})
		require.NoError(t, err)
		cli := cluster.Client()
		check(t, sc, func() bool {
			resp, err := cli.Get(context.Background(), sc.where, clientv3.WithPrefix(), clientv3.WithCountOnly())
			require.NoError(t, err)
			return resp.Count == 0
		})
	})
	t.Run("redis", func(t *testing.T) {
		addr := testenv.Server(t, EnvRedisAddr, "Redis", "127.0.0.1:6379")
		s, tag, err := openRedisScratch(addr)
		require.NoError(t, err)
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		check(t, scratchStore{s, tag, s.Key(tag), func() error { return closeRedisScratch(addr, s, tag) }}, func() bool {
			n, err := c.Exists(context.Background(), s.Key(tag)).Result()
			require.NoError(t, err)
			return n == 0
		})
	})
}

// TestSegmentFetchRow: the fetch rows' speed generators, one block
// reservation per ID, give unique keys across writers.
func TestSegmentFetchRow(t *testing.T) {
	t.Parallel()
	for _, s := range segmentScratch(t) {
		if s.Keys == nil {
			continue
		}
		t.Run(s.Name, func(t *testing.T) {
			gens, err := s.New(2)
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, CloseGenerators(gens)) })
			seen := map[string]bool{}
			for i := range 50 {
				k, err := gens[i%2].Next(nil)
				require.NoError(t, err)
				require.False(t, seen[string(k)], "key %x twice", k)
				seen[string(k)] = true
			}
		})
	}
}

// TestSegmentStoreDown: a row whose server cannot be reached fails with
// the store's error, never issuing a key.
func TestSegmentStoreDown(t *testing.T) {
	t.Parallel()
	down := scratch{getenv: func(k string) string {
		return map[string]string{
			engine.EnvPostgresDSN: "postgres://nobody@127.0.0.1:1/none?connect_timeout=5",
			engine.EnvMySQLDSN:    "nobody@tcp(127.0.0.1:1)/none?timeout=5s",
			EnvRedisAddr:          "127.0.0.1:1",
			EnvEtcdEndpoints:      "http://127.0.0.1:1",
		}[k]
	}, dir: t.TempDir()}
	schemes := down.schemes()[2:]
	require.Len(t, schemes, 12)
	for _, s := range schemes {
		_, err := s.New(1)
		assert.Error(t, err, s.Name)
		assert.ErrorContains(t, err, "compare: "+s.Name+": ", s.Name)
		if strings.HasPrefix(s.Name, "segment-etcd") {
			assert.ErrorContains(t, err, "etcd at http://127.0.0.1:1: ", s.Name)
		}
	}
}

// segmentScratch returns the rows of the servers of the environment, with
// their bbolt files in the test's directory; the etcd rows run on a
// member that fleettest starts unless $IDKIT_ETCD_ENDPOINTS names a
// cluster.
func segmentScratch(t *testing.T) []Scheme {
	t.Helper()
	etcd := os.Getenv(EnvEtcdEndpoints)
	if etcd == "" {
		etcd = fleettest.Start(t, 1).Endpoint(0)
	}
	getenv := func(k string) string {
		if k == EnvEtcdEndpoints {
			return etcd
		}
		return os.Getenv(k)
	}
	schemes := SegmentSchemes(getenv, t.TempDir())
	if len(schemes) == 3 {
		t.Logf("only the bbolt row: set %s, %s and %s to measure the servers' rows", engine.EnvPostgresDSN, engine.EnvMySQLDSN, EnvRedisAddr)
	}
	return schemes
}
