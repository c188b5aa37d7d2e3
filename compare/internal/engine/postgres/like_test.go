package postgres

import (
	"context"
	"testing"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/internal/testkit/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLikeTableShapesPostgres: a stored generated column, an expression
// index, a partial index and a unique date column are copied as they are;
// a partitioned table, and an expression index that holds for the key's
// type alone, are refused before any load.
func TestLikeTableShapesPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.Server(t, engine.EnvPostgresDSN, "database server", "(as .ci/run does)")
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) }) // after the cleanups below, which use it
	schema := "idkit_shapes_" + engine.RunSuffix()
	t.Cleanup(func() { conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	pgExec(t, conn,
		"CREATE SCHEMA "+schema,
		"CREATE TABLE "+schema+`.events (id bigint PRIMARY KEY, email text NOT NULL, day date NOT NULL UNIQUE,
			price numeric(10, 2) NOT NULL, total numeric(12, 2) GENERATED ALWAYS AS (price * 3) STORED, state text NOT NULL)`,
		"CREATE INDEX ON "+schema+".events (lower(email))",
		"CREATE INDEX ON "+schema+".events (total)",
		"CREATE INDEX ON "+schema+".events (state) WHERE state <> 'done'",
		"INSERT INTO "+schema+".events (id, email, day, price, state) SELECT i, 'User' || i || '@Example.com', date '1990-01-01' + i, i % 100, CASE WHEN i % 10 = 0 THEN 'open' ELSE 'done' END FROM generate_series(1, 2000) i",
		"ANALYZE "+schema+".events",
		"CREATE TABLE "+schema+".parted (id bigint, at date NOT NULL, PRIMARY KEY (id, at)) PARTITION BY RANGE (at)",
		"CREATE TABLE "+schema+".bykey (id bigint PRIMARY KEY, note text)",
		"CREATE INDEX ON "+schema+".bykey ((id % 7))",
		"INSERT INTO "+schema+".bykey SELECT i, 'x' FROM generate_series(1, 100) i",
	)

	e, err := Open(ctx, dsn, dsn, true, engine.Limits{})
	require.NoError(t, err)
	defer e.Close(context.Background())
	name, err := engine.ParseLike(schema + ".events")
	require.NoError(t, err)
	const n = 50_000 // more rows than the table's dates: each copy's must still differ
	lt, err := e.prepareLike(ctx, name, 0, n)
	require.NoError(t, err)
	assert.Equal(t, 2000, lt.Sampled, "a small table is sampled whole")
	assert.Equal(t, 25, lt.Reuse)

	// A copy with a uuid key, loaded with keys numbered up to n.
	for _, q := range e.like.Def.copyStatements(e.schema, "check_copy", "uuid") {
		_, err := e.conn.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	copyTable := e.schema + ".check_copy"
	for _, first := range []int{0, n - 1000} {
		keys := make([][16]byte, 1000)
		for i := range keys {
			keys[i] = [16]byte{0: byte(first >> 8), 1: byte(first), 14: byte(i >> 8), 15: byte(i)}
		}
		var plan []byte
		require.NoError(t, e.conn.QueryRow(ctx, e.likeInsert(copyTable, "uuid[]"), keys, first).Scan(&plan))
	}
	var rows, days, wrongTotals int
	require.NoError(t, e.conn.QueryRow(ctx, "SELECT count(*), count(DISTINCT day), count(*) FILTER (WHERE total IS DISTINCT FROM price * 3) FROM "+copyTable).
		Scan(&rows, &days, &wrongTotals))
	assert.Equal(t, 2000, rows)
	assert.Equal(t, 2000, days, "the unique date column: a date per row")
	assert.Zero(t, wrongTotals, "the generated column is computed as the server computes it")
	indexes, err := pgIndexes(ctx, e.conn, regclassOID(t, e.conn, copyTable))
	require.NoError(t, err)
	var names []string
	for _, ix := range indexes {
		names = append(names, pgIndexName(ix))
	}
	assert.ElementsMatch(t, []string{"primary key (id)", "(lower(email))", "unique (day)", "(state) WHERE (state <> 'done'::text)", "(total)"}, names,
		"every index of the table, expression and partial ones as they are")
	assert.Equal(t, indexNames(lt.Indexes), names, "in the order of the table's")

	for _, tt := range []struct{ table, msg string }{
		{"parted", "is a partitioned table"},
		{"bykey", "a copy with a uuid key (the key type of some schemes) fails"},
	} {
		e2, err := Open(ctx, dsn, dsn, true, engine.Limits{})
		require.NoError(t, err)
		name, err := engine.ParseLike(schema + "." + tt.table)
		require.NoError(t, err)
		_, err = e2.prepareLike(ctx, name, 0, 1000)
		require.ErrorIs(t, err, engine.ErrLike, tt.table)
		assert.Contains(t, err.Error(), tt.msg, tt.table)
		require.NoError(t, e2.Close(ctx))
	}
}

// pgExec runs statements on conn, failing the test on the first error.
func pgExec(t *testing.T, conn *pgx.Conn, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		_, err := conn.Exec(context.Background(), q)
		require.NoError(t, err, q)
	}
}

// regclassOID returns the oid of a table.
func regclassOID(t *testing.T, conn *pgx.Conn, table string) uint32 {
	t.Helper()
	var oid uint32
	require.NoError(t, conn.QueryRow(context.Background(), "SELECT $1::regclass::oid", table).Scan(&oid))
	return oid
}

func indexNames(ixs []engine.IndexFigures) []string {
	var out []string
	for _, ix := range ixs {
		out = append(out, ix.Name)
	}
	return out
}
