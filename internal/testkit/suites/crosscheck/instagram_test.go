package crosscheck

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/testkit/testenv"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/instagram"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/snowflake"
)

const instagramDSN = "IDKIT_POSTGRES_DSN"

// The tests of Instagram's next_id() in a real PostgreSQL, beside the Go
// preset.

// install connects to the test server, installs next_id() for shard in a
// schema of the test's own (dropped when it ends) and returns the
// connection and the schema.
func installInstagram(t *testing.T, shard int) (*pgx.Conn, string) {
	t.Helper()
	dsn := testenv.Server(t, instagramDSN, "PostgreSQL", "postgres://postgres@127.0.0.1:5432/test")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "idkit_insta_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		assert.NoError(t, err)
		conn.Close(context.Background())
	})
	sql, err := instagram.SQL(instagram.Options{Shard: shard, Schema: schema})
	require.NoError(t, err)
	_, err = conn.Exec(ctx, sql) // the simple protocol runs the whole script
	require.NoError(t, err)
	return conn, schema
}

// TestInstagramDecode: 10,000 IDs of the PL/pgSQL function decode with the Go
// preset to the shard installed, the sequence's values modulo 1024 and
// the time of the call, and compose back to themselves.
func TestInstagramDecode(t *testing.T) {
	t.Parallel()
	const n, shard = 10_000, 5
	conn, schema := installInstagram(t, shard)
	ctx := context.Background()
	before := time.Now().Add(-time.Second) // the server's clock is this host's
	rows, err := conn.Query(ctx, "SELECT "+schema+".next_id() FROM generate_series(1, $1)", n)
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	after := time.Now().Add(time.Second)
	require.Len(t, ids, n)

	l := instagram.Layout()
	seen := make(map[int64]bool, n)
	for i, v := range ids {
		require.Positive(t, v)
		require.False(t, seen[v], "ID %d repeats", v)
		seen[v] = true
		id := snowflake.ID(v)
		assert.Equal(t, map[string]int64{"shard": shard}, id.Node(l), "ID %d", i)
		require.Equal(t, int64(i+1)%1024, id.Sequence(l), "ID %d: nextval %d %% 1024", i, i+1)
		at := id.Time(l)
		require.True(t, !at.Before(before) && at.Before(after), "ID %d: time %v outside the call", i, at)
		back, err := l.Compose(snowflake.Parts{Time: at, Node: id.Node(l), Sequence: id.Sequence(l)})
		require.NoError(t, err)
		require.Equal(t, id, back)
	}
	// Within one session the times never go back.
	for i := 1; i < n; i++ {
		require.GreaterOrEqual(t, snowflake.ID(ids[i]).Tick(l), snowflake.ID(ids[i-1]).Tick(l))
	}
}

// TestInstagramNoCollisionWithGo: IDs the function issues for shard 5 while Go
// generators issue IDs of the same preset for shards 4, 6 and 8191 never
// coincide, and each decodes to its own shard.
func TestInstagramNoCollisionWithGo(t *testing.T) {
	t.Parallel()
	const n = 10_000
	conn, schema := installInstagram(t, 5)
	l := instagram.Layout()
	type result struct {
		shard int64
		ids   []int64
	}
	results := make(chan result, 4)
	for _, shard := range []int64{4, 6, instagram.MaxShard} {
		go func() {
			g, err := snowflake.New(context.Background(), snowflake.Options{Layout: l, Node: map[string]int64{"shard": shard}})
			if !assert.NoError(t, err) {
				results <- result{shard, nil}
				return
			}
			ids := make([]int64, n)
			for i := range ids {
				id, err := g.Next()
				if !assert.NoError(t, err) {
					break
				}
				ids[i] = int64(id)
			}
			results <- result{shard, ids}
		}()
	}
	rows, err := conn.Query(context.Background(), "SELECT "+schema+".next_id() FROM generate_series(1, $1)", n)
	require.NoError(t, err)
	sqlIDs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	require.NoError(t, err)
	results <- result{5, sqlIDs}

	seen := map[int64]int64{}
	for range 4 {
		r := testwait.Recv(t, results, "IDs of a shard")
		require.Len(t, r.ids, n, "shard %d", r.shard)
		for _, v := range r.ids {
			if other, dup := seen[v]; dup {
				t.Fatalf("ID %d from shards %d and %d", v, other, r.shard)
			}
			seen[v] = r.shard
			require.Equal(t, r.shard, snowflake.ID(v).Node(l)["shard"])
		}
	}
	assert.Len(t, seen, 4*n)
}

// TestInstagramShardBounds installs the first and last shard.
func TestInstagramShardBounds(t *testing.T) {
	t.Parallel()
	for _, shard := range []int{0, instagram.MaxShard} {
		conn, schema := installInstagram(t, shard)
		var v int64
		require.NoError(t, conn.QueryRow(context.Background(), "SELECT "+schema+".next_id()").Scan(&v))
		assert.Equal(t, int64(shard), snowflake.ID(v).Node(instagram.Layout())["shard"])
		assert.Positive(t, v)
	}
}
