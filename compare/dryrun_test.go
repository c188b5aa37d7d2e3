package compare

import (
	"context"
	"strings"
	"testing"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLikeDryRun: a dry run of --like on the table's own servers checks
// the rights, reads the table and says what the run would create, read
// and write, and creates nothing: no schema or database of the run's is
// there after it, and the table is unchanged. Its estimate of the log the
// loads write is within 2x of what the run then reports the server wrote.
// It does not run in parallel, so that the servers' log counts this
// package's runs alone.
func TestLikeDryRun(t *testing.T) {
	skipUnderRace(t)
	ctx := context.Background()
	pg, my, name := acceptServers(t, 20_000)
	pgDSN := serverDSN(t, engine.EnvPostgresDSN)
	var err error

	pgSchemas := func() []string {
		rows, err := pg.Query(ctx, "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'idkit\\_compare\\_%' ORDER BY 1")
		require.NoError(t, err)
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return names
	}
	myDatabases := func() []string {
		rows, err := my.Query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'idkit\\_compare\\_%' ORDER BY 1")
		require.NoError(t, err)
		defer rows.Close()
		var names []string
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			names = append(names, n)
		}
		return names
	}

	for _, eng := range []string{engine.Postgres, engine.MySQL} {
		t.Run(eng, func(t *testing.T) {
			o := likeOptions(t, eng, name+".orders")
			o.N = 10_000
			o.Schemes, err = scheme.Select("counter,uuidv4")
			require.NoError(t, err)
			before := map[string]sourceState{"postgres": pgSourceState(t, pg, name, "orders", "id"), "mysql": mySourceState(t, my, name, "orders")}
			schemas, databases := pgSchemas(), myDatabases()

			plan, err := DryRun(ctx, o)
			require.NoError(t, err)
			var text strings.Builder
			require.NoError(t, plan.WriteText(&text))
			t.Log(text.String())
			require.Len(t, plan.Servers, 1)
			s := plan.Servers[0]
			assert.Equal(t, eng, s.Engine)
			assert.Equal(t, "the source", s.Copies)
			assert.Equal(t, 2, s.Loads, "two schemes, one writer count")
			assert.Equal(t, 10_000, s.Rows)
			assert.Positive(t, s.SampleRows)
			assert.Contains(t, s.Creates, "idkit_compare_<random>")
			assert.Contains(t, text.String(), "it has created nothing and loaded nothing")

			assert.Equal(t, schemas, pgSchemas(), "the dry run created no schema")
			assert.Equal(t, databases, myDatabases(), "the dry run left no database")
			assert.Equal(t, before["postgres"], pgSourceState(t, pg, name, "orders", "id"))
			assert.Equal(t, before["mysql"], mySourceState(t, my, name, "orders"))

			r, err := Run(o)
			require.NoError(t, err)
			require.Len(t, r.Like, 1)
			real := r.Like[0].SourceLogBytes
			require.Positive(t, real)
			ratio := float64(s.LogBytes) / float64(real)
			t.Logf("%s: estimated %s, the run wrote %s: %.2fx", eng, engine.MiB(float64(s.LogBytes)), engine.MiB(float64(real)), ratio)
			assert.True(t, ratio >= 0.5 && ratio <= 2, "%s: the estimate %d bytes against the run's %d: %.2fx, want 0.5..2", eng, s.LogBytes, real, ratio)
		})
	}
	_, err = DryRun(ctx, Options{PostgresDSN: pgDSN})
	assert.ErrorIs(t, err, ErrOptions, "a dry run is of a --like run")
}
