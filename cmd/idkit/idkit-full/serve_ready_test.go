package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/segment/pgstore"
)

// TestServeReadySegmentStoreRefused serves a segment tag from a real
// PostgreSQL as a role of its own, then revokes the role's right to
// update the blocks: /readyz turns 503 naming the tag's store and the kind
// of failure, before the blocks in hand run out, and 200 again once the
// grant is back, without a restart.
func TestServeReadySegmentStoreRefused(t *testing.T) {
	t.Parallel()
	dsn := storetest.Server(t, "IDKIT_POSTGRES_DSN", "PostgreSQL", "postgres://postgres@127.0.0.1:5432/test")
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	schema := "idkit_ready_" + storetest.Suffix(t)
	role := schema + "_serve"
	exec := func(sql string) {
		t.Helper()
		_, err := pool.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	exec("CREATE SCHEMA " + schema)
	t.Cleanup(func() {
		for _, sql := range []string{"DROP SCHEMA " + schema + " CASCADE", "DROP ROLE IF EXISTS " + role} {
			_, err := pool.Exec(context.Background(), sql)
			assert.NoError(t, err, sql)
		}
	})
	// The table is the administrator's; the server's role may only read
	// and advance its rows.
	admin, err := pgstore.Open(ctx, dsn, pgstore.Options{Table: schema + "." + pgstore.DefaultTable})
	require.NoError(t, err)
	admin.Close()
	exec("CREATE ROLE " + role + " LOGIN")
	exec("GRANT USAGE, CREATE ON SCHEMA " + schema + " TO " + role)
	exec("GRANT SELECT, INSERT, UPDATE ON " + schema + "." + pgstore.DefaultTable + " TO " + role)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.User(role)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()

	base, stderr, stop := serveInProcess(t, "--schemes", "objectid", "--log", filepath.Join(t.TempDir(), "idkit.db"),
		"--segment-store", u.String(), "--segment-tag", "order", "--ids-per-client", "-1")
	defer stop()
	type report struct {
		Status string
		Checks map[string]string
	}
	var rep report
	require.Equal(t, http.StatusOK, getJSON(t, base+"/readyz", &rep), stderr.String())
	assert.Equal(t, "ok", rep.Checks["segment/order store"])

	exec("REVOKE UPDATE ON " + schema + "." + pgstore.DefaultTable + " FROM " + role)
	served := 0
	testwait.Until(t, func() bool {
		var ids struct{ IDs []string }
		if getJSON(t, base+"/v1/segment/order?n=1000", &ids) == http.StatusOK {
			served += len(ids.IDs)
		}
		rep = report{}
		return getJSON(t, base+"/readyz", &rep) == http.StatusServiceUnavailable
	}, "readyz 503 once the role may no longer advance the blocks")
	assert.Equal(t, "fail", rep.Status)
	assert.Equal(t, "refused", rep.Checks["segment/order store"], "a missing privilege is a refusal, not an outage")
	assert.Positive(t, served, "IDs in hand are served while the store refuses")
	assert.Contains(t, stderr.String(), "permission denied", "the store's own error goes to the log")

	exec("GRANT UPDATE ON " + schema + "." + pgstore.DefaultTable + " TO " + role)
	testwait.Until(t, func() bool {
		rep = report{}
		return getJSON(t, base+"/readyz", &rep) == http.StatusOK
	}, fmt.Sprintf("readyz 200 once the grant is back (last: %v)", rep.Checks))
	var ids struct{ IDs []string }
	require.Equal(t, http.StatusOK, getJSON(t, base+"/v1/segment/order?n=10", &ids))
	assert.Len(t, ids.IDs, 10)
}
