package myrocks

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/internal/testkit/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMyRocksPassesOverTablesLeftBehind: a table in a column family of
// the pool that no run is loading, as a killed run leaves one, keeps the
// load out of that column family, so that its rows count in no load's
// figures, and the table is left as it was.
func TestMyRocksPassesOverTablesLeftBehind(t *testing.T) {
	dsn := rocksDSN(t)
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	database := "idkit_rocksleft_" + engine.RunSuffix()
	t.Cleanup(func() { db.Exec("DROP DATABASE IF EXISTS " + database) })
	first := myrocksCFPref + "0"
	for _, q := range []string{
		"CREATE DATABASE " + database,
		"CREATE TABLE " + database + ".left_behind (id BIGINT NOT NULL, PRIMARY KEY (id) COMMENT 'cfname=" + first + "') ENGINE=ROCKSDB",
		"INSERT INTO " + database + ".left_behind SELECT seq FROM seq_1_to_1000",
	} {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}

	ctx := context.Background()
	e, skipped, err := Open(ctx, dsn)
	require.NoError(t, err)
	require.NotNil(t, e, skipped)
	defer func() { require.NoError(t, e.Close(ctx)) }()
	cf, err := e.takeCF(ctx)
	require.NoError(t, err)
	defer e.releaseCF(cf)
	assert.NotEqual(t, first, cf, "the column family that holds a table is passed over")
	var cfOfTable string
	require.NoError(t, db.QueryRow("SELECT CF FROM information_schema.ROCKSDB_DDL WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'left_behind'", database).Scan(&cfOfTable))
	assert.Equal(t, first, cfOfTable)
	var rows int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM "+database+".left_behind").Scan(&rows))
	assert.Equal(t, 1000, rows, "the table left behind is left as it was")
}

// rocksDSN returns the MariaDB server's DSN when it has the ROCKSDB
// engine, and holds the lock that every test that loads MyRocks holds
// while it runs (testenv.MyRocksLock), as compare's tests do.
func rocksDSN(t *testing.T) string {
	t.Helper()
	dsn := testenv.Server(t, engine.EnvMySQLDSN, "database server", "(as .ci/run does)")
	e, skipped, err := Open(context.Background(), dsn)
	require.NoError(t, err)
	if e == nil {
		testenv.Missing(t, skipped+" (.ci/servers.sh need_myrocks does it)")
	}
	require.NoError(t, e.Close(context.Background()))
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // after the lock is let go of
	testenv.HoldLock(t, db, testenv.MyRocksLock, 10*time.Minute)
	return dsn
}
