package main

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/internal/testkit/etcdtest"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// TestServeReclaims: serve on claimed nodes in a real embedded etcd loses
// its claims when their lease is revoked, answers 503 and fails /readyz,
// then claims nodes again by itself and serves again, with no ID issued
// twice.
func TestServeReclaims(t *testing.T) {
	t.Parallel()
	cluster := etcdtest.Start(t, 1)
	cli := cluster.Client()
	prefix := etcdtest.Prefix(t, cli)
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
	var rep struct{ Status string }
	testwait.Until(t, func() bool { return getJSON(t, url+"/readyz", &rep) == http.StatusServiceUnavailable }, "readyz 503 once the claims are lost")

	testwait.Until(t, func() bool { return getJSON(t, url+"/readyz", &rep) == http.StatusOK }, "readyz 200 once nodes are claimed again: "+stderr.String())
	testwait.Until(t, take, "IDs of both schemes again")
	assert.Contains(t, stderr.String(), "node claimed again")
}
