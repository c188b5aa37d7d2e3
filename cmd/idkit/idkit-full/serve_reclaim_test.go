package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// TestServeReclaims: serve on claimed nodes in a real etcd loses
// its claims when their lease is revoked, then claims nodes again by
// itself and serves again, with no ID issued twice. The server claims
// again within moments, so the 503s in between may come and go between
// two requests: the test waits for the counts of claims lost and nodes
// claimed again on /metrics, which no loss escapes. (TestReclaim in
// package serve checks the 503s, on a claim that stays lost.)
func TestServeReclaims(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	cli := cluster.Client()
	prefix := fleettest.Prefix(t, cli)
	url, stderr, stop := serveInProcess(t, "--schemes", "traceid,snowflake", "--etcd", cluster.Endpoint(0), "--etcd-prefix", prefix)
	defer stop()
	seen := map[string]bool{}
	take := func() bool {
		ok := true
		for _, scheme := range []string{"traceid", "snowflake"} {
			var ids struct{ IDs []string }
			if getJSON(t, url+"/v1/"+scheme+"?n=50", &ids) != http.StatusOK {
				ok = false
				continue
			}
			for _, id := range ids.IDs {
				assert.False(t, seen[scheme+id], "%s %s issued twice", scheme, id)
				seen[scheme+id] = true
			}
		}
		return ok
	}
	testwait.Until(t, take, "IDs of both schemes")
	schemes := []string{"traceid", "snowflake"}
	for _, scheme := range schemes {
		assert.Zero(t, counter(t, url, "idkit_node_claims_lost_total", scheme), "%s claims lost before the revocation", scheme)
	}

	// Revoke the leases of the claims under the test's prefix.
	ctx := context.Background()
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix())
	require.NoError(t, err)
	revoked := map[clientv3.LeaseID]bool{}
	for _, kv := range resp.Kvs {
		if id := clientv3.LeaseID(kv.Lease); id != 0 && !revoked[id] {
			_, err := cli.Revoke(ctx, id)
			require.NoError(t, err)
			revoked[id] = true
		}
	}
	require.NotEmpty(t, revoked, "no claim lease under %s", prefix)
	for _, scheme := range schemes {
		testwait.Until(t, func() bool { return counter(t, url, "idkit_node_claims_reclaimed_total", scheme) >= 1 },
			scheme+"'s node claimed again")
		assert.Equal(t, 1.0, counter(t, url, "idkit_node_claims_lost_total", scheme), "%s claims lost", scheme)
	}

	var rep struct{ Status string }
	testwait.Until(t, func() bool { return getJSON(t, url+"/readyz", &rep) == http.StatusOK }, "readyz 200 once nodes are claimed again")
	testwait.Until(t, take, "IDs of both schemes again")
	// The log line comes just after the counter.
	testwait.Until(t, func() bool { return strings.Contains(stderr.String(), "node claimed again") }, "the re-claim logged")
}

// counter returns the value of the metric name{scheme="scheme"} on the
// server at url, failing t if it has none.
func counter(t *testing.T, url, name, scheme string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	prefix := name + `{scheme="` + scheme + `"} `
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			require.NoError(t, err, line)
			return f
		}
	}
	t.Fatalf("no %s on /metrics", strings.TrimSpace(prefix))
	return 0
}
