package cli_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/instagram"
	"github.com/idkit/idkit/internal/testkit/testenv"
	"github.com/idkit/idkit/snowflake"
)

func TestSQLInstagram(t *testing.T) {
	t.Parallel()
	code, out, errOut := clitest.Run("sql", "instagram", "--shard", "5", "--schema", "shard5")
	require.Equal(t, 0, code, errOut)
	want, err := instagram.SQL(instagram.Options{Shard: 5, Schema: "shard5"})
	require.NoError(t, err)
	assert.Equal(t, want, out, "the command prints the library's SQL")
	assert.Contains(t, out, "CREATE OR REPLACE FUNCTION shard5.next_id(OUT result bigint)")
	assert.Contains(t, out, "shard_id int := 5;")
	assert.Empty(t, errOut)

	code, out, _ = clitest.Run("sql", "instagram")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "nextval('public.next_id_seq') % 1024", "the defaults")
}

func TestSQLUsage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"sql"}, "sql needs a kind: instagram"},
		{[]string{"sql", "flickr"}, `unknown kind "flickr", want instagram`},
		{[]string{"sql", "instagram", "--shard", "8192"}, "idkit sql: --shard 8192, want 0 to 8191;"},
		{[]string{"sql", "instagram", "--shard", "-1"}, "idkit sql: --shard -1, want 0 to 8191;"},
		{[]string{"sql", "instagram", "--schema", "Bad-Name"}, `idkit sql: --schema "Bad-Name", want`},
		{[]string{"sql", "instagram", "--shard", "x"}, `invalid value "x" for flag --shard`},
		{[]string{"sql", "instagram", "extra"}, `unexpected argument "extra"`},
	} {
		code, out, errOut := clitest.Run(tt.args...)
		assert.Equal(t, 2, code, "%q", tt.args)
		assert.Empty(t, out)
		assert.Contains(t, errOut, tt.msg, "%q", tt.args)
		clitest.AssertOneLine(t, errOut, tt.args)
	}
}

// TestSQLInstagramInstalls runs what the command prints on the real
// server and inspects an ID of the function with the command's own
// inspect.
func TestSQLInstagramInstalls(t *testing.T) {
	t.Parallel()
	dsn := testenv.Server(t, "IDKIT_POSTGRES_DSN", "PostgreSQL", "postgres://postgres@127.0.0.1:5432/test")
	b := make([]byte, 6)
	rand.Read(b)
	schema := "idkit_cli_insta_" + hex.EncodeToString(b)
	code, sql, errOut := clitest.Run("sql", "instagram", "--shard", "77", "--schema", schema)
	require.Equal(t, 0, code, errOut)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
		assert.NoError(t, err)
		conn.Close(context.Background())
	})
	_, err = conn.Exec(ctx, sql)
	require.NoError(t, err)
	var id int64
	require.NoError(t, conn.QueryRow(ctx, "SELECT "+schema+".next_id()").Scan(&id))
	assert.Equal(t, int64(77), snowflake.ID(id).Node(snowflake.Instagram())["shard"])

	code, out, errOut := clitest.Run("inspect", "snowflake", "--preset", "instagram", snowflake.ID(id).String())
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `(?m)^shard\s+77$`, out)
	assert.Regexp(t, `(?m)^sequence\s+1$`, out)
}
