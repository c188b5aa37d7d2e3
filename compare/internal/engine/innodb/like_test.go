package innodb

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/internal/testkit/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLikeTableShapesMySQL: the same on MariaDB, with a virtual and a
// stored generated column, each indexed, and a check constraint (not
// copied); a partitioned table is refused before any load.
func TestLikeTableShapesMySQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.Server(t, engine.EnvMySQLDSN, "database server", "(as .ci/run does)")
	db, err := sql.Open("mysql", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // after the cleanups below, which use it
	database := "idkit_shapes_" + engine.RunSuffix()
	t.Cleanup(func() { db.Exec("DROP DATABASE IF EXISTS " + database) })
	myExec(t, db,
		"CREATE DATABASE "+database,
		"CREATE TABLE "+database+`.events (id BIGINT NOT NULL PRIMARY KEY, email VARCHAR(80) NOT NULL, day DATE NOT NULL, price DECIMAL(10, 2) NOT NULL,
			total DECIMAL(12, 2) AS (price * 3) STORED, domain VARCHAR(80) AS (SUBSTRING_INDEX(email, '@', -1)) VIRTUAL,
			UNIQUE KEY (day), KEY (total), KEY (domain), CONSTRAINT positive CHECK (price >= 0)) ENGINE=InnoDB`,
		"INSERT INTO "+database+".events (id, email, day, price) SELECT seq, CONCAT('user', seq, '@host', seq % 5, '.example'), DATE_ADD('1990-01-01', INTERVAL seq DAY), seq % 100 FROM seq_1_to_2000",
		"ANALYZE TABLE "+database+".events",
		"CREATE TABLE "+database+".parted (id BIGINT NOT NULL PRIMARY KEY) ENGINE=InnoDB PARTITION BY HASH (id) PARTITIONS 4",
	)

	e, err := Open(ctx, dsn, dsn, true, engine.Limits{})
	require.NoError(t, err)
	defer e.Close(context.Background())
	name, err := engine.ParseLike(database + ".events")
	require.NoError(t, err)
	const n = 50_000
	lt, err := e.prepareLike(ctx, name, 0, n)
	require.NoError(t, err)
	assert.Equal(t, 2000, lt.Sampled)

	copyTable := e.database + ".check_copy"
	create, err := e.like.Def.CopyStatement(copyTable, "BINARY(16)", "")
	require.NoError(t, err)
	_, err = e.conn.ExecContext(ctx, create)
	require.NoError(t, err, create)
	for _, first := range []int{0, n - 1000} {
		var batch [][2]any
		for i := range 1000 {
			batch = append(batch, [2]any{fmt.Sprintf("%08x%024x", first, i), first + i})
		}
		doc, err := json.Marshal(batch)
		require.NoError(t, err)
		_, err = e.conn.ExecContext(ctx, LikeInsert(e.like, e.database, copyTable, false), string(doc))
		require.NoError(t, err)
	}
	var rows, days, wrongTotals, domains int
	require.NoError(t, e.conn.QueryRowContext(ctx, `SELECT count(*), count(DISTINCT day), sum(total <> price * 3), count(DISTINCT domain)
		FROM `+copyTable).Scan(&rows, &days, &wrongTotals, &domains))
	assert.Equal(t, 2000, rows)
	assert.Equal(t, 2000, days, "the unique date column: a date per row")
	assert.Zero(t, wrongTotals, "the stored generated column is computed as the server computes it")
	assert.Equal(t, 5, domains, "the virtual column too")
	indexes, err := Indexes(ctx, e.conn, e.database, "check_copy")
	require.NoError(t, err)
	var names []string
	for _, ix := range indexes {
		names = append(names, ix.DisplayName())
	}
	assert.Equal(t, []string{"primary key (id)", "unique (day)", "(domain)", "(total)"}, names)

	for _, tt := range []struct{ table, msg string }{
		{"parted", "is partitioned (4 partitions)"},
	} {
		e2, err := Open(ctx, dsn, dsn, true, engine.Limits{})
		require.NoError(t, err)
		name, err := engine.ParseLike(database + "." + tt.table)
		require.NoError(t, err)
		_, err = e2.prepareLike(ctx, name, 0, 1000)
		require.ErrorIs(t, err, engine.ErrLike, tt.table)
		assert.Contains(t, err.Error(), tt.msg, tt.table)
		require.NoError(t, e2.Close(ctx))
	}
}

// TestMySQLSampleIsUniform: the sample of a table is spread over all of
// it, not drawn from its first rows.
func TestMySQLSampleIsUniform(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := Open(ctx, testenv.Server(t, engine.EnvMySQLDSN, "database server", "(as .ci/run does)"), "", false, engine.Limits{})
	require.NoError(t, err)
	defer e.Close(context.Background())
	table := e.database + ".seqs"
	for _, q := range []string{
		"CREATE TABLE " + table + " (id BIGINT NOT NULL PRIMARY KEY, label VARCHAR(20) NOT NULL, raw VARBINARY(8)) ENGINE=InnoDB",
		"INSERT INTO " + table + " SELECT seq, CONCAT('é', seq), UNHEX('00ff') FROM seq_1_to_10000",
	} {
		_, err := e.conn.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	sampled, err := readMySQLSample(ctx, e.conn, table, "CAST(id AS DOUBLE)", "NULL", "id, label, raw", 0.4, 2000)
	require.NoError(t, err)
	require.Len(t, sampled, 2000)
	var sum, top int64
	seen := map[string]bool{}
	var rows [][]any
	for _, r := range sampled {
		row := r.Row
		rows = append(rows, row)
		assert.Equal(t, fmt.Sprint(row[0]), fmt.Sprint(r.Key), "the key that orders the row")
		assert.True(t, math.IsNaN(r.At), "no time column")
		text := fmt.Sprint(row[0])
		id, err := strconv.ParseInt(text, 10, 64)
		require.NoError(t, err)
		sum += id
		top = max(top, id)
		assert.Equal(t, "é"+text, row[1], "text comes back as text")
		assert.Equal(t, []byte{0, 0xff}, row[2], "bytes stay bytes")
		seen[text] = true
	}
	assert.Len(t, seen, 2000, "no row twice")
	mean := float64(sum) / 2000
	assert.InDelta(t, 5000, mean, 500, "the mean id of a uniform sample of 1..10,000 (standard error about 65)")
	assert.Greater(t, top, int64(9500), "the sample reaches the end of the table")

	sample := e.database + ".sample_copy"
	_, err = e.conn.ExecContext(ctx, "CREATE TABLE "+sample+" (idkit_row BIGINT NOT NULL, id BIGINT, label VARCHAR(20), raw VARBINARY(8)) ENGINE=InnoDB")
	require.NoError(t, err)
	require.NoError(t, writeMySQLSample(ctx, e.conn, sample, rows))
	var n, labels int
	require.NoError(t, e.conn.QueryRowContext(ctx, "SELECT count(*), count(DISTINCT label) FROM "+sample+" WHERE raw = UNHEX('00ff') AND label LIKE 'é%'").Scan(&n, &labels))
	assert.Equal(t, 2000, n)
	assert.Equal(t, 2000, labels)
}

// myExec runs statements on db, failing the test on the first error.
func myExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		_, err := db.Exec(q)
		require.NoError(t, err, q)
	}
}

// TestMyRocksCopyStatement: a MyRocks copy keeps every index in the load's
// column family, in place of the one the table's comment named.
func TestMyRocksCopyStatement(t *testing.T) {
	src := &Like{key: "id", create: "CREATE TABLE `t` (\n" +
		"  `id` bigint(20) NOT NULL,\n" +
		"  `email` varchar(64) DEFAULT NULL,\n" +
		"  `note` varchar(20) DEFAULT NULL COMMENT 'a column''s comment',\n" +
		"  PRIMARY KEY (`id`) COMMENT 'cfname=app_cf',\n" +
		"  UNIQUE KEY `email` (`email`),\n" +
		"  KEY `note` (`note`) COMMENT 'rev:cf_it''s'\n" +
		") ENGINE=ROCKSDB AUTO_INCREMENT=9 DEFAULT CHARSET=utf8mb4"}
	got, err := src.CopyStatement("db.c", "BINARY(16)", "idkit_compare_3")
	require.NoError(t, err)
	assert.Equal(t, "CREATE TABLE db.c (\n"+
		"  `id` BINARY(16) NOT NULL,\n"+
		"  `email` varchar(64) DEFAULT NULL,\n"+
		"  `note` varchar(20) DEFAULT NULL COMMENT 'a column''s comment',\n"+
		"  PRIMARY KEY (`id`) COMMENT 'cfname=idkit_compare_3',\n"+
		"  UNIQUE KEY `email` (`email`) COMMENT 'cfname=idkit_compare_3',\n"+
		"  KEY `note` (`note`) COMMENT 'cfname=idkit_compare_3'\n"+
		") ENGINE=ROCKSDB DEFAULT CHARSET=utf8mb4", got)
}
