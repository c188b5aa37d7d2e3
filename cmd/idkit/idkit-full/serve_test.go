package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

func TestServeUsageErrors(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "idkit.db")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--log", log}, "traceid needs --node (0 to 65535), or --etcd to claim one; --schemes leaves it out"},
		{[]string{"--log", log, "--schemes", "snowflake"}, "snowflake needs --node (0 to 1023) or the preset's fields (--datacenter (0 to 31) --worker (0 to 31))"},
		{[]string{"--node", "70000"}, "--node 70000 out of range for traceid, want 0 to 65535"},
		{[]string{"--node", "5000"}, "--node 5000 out of range for snowflake preset twitter, want 0 to 1023; give its fields"},
		{[]string{"--node", "1", "--worker", "40"}, "--worker 40 out of range for preset twitter, want 0 to 31"},
		{[]string{"--node", "1", "--machine", "4"}, "--machine: preset twitter has no field machine"},
		{[]string{"--node", "1", "--preset", "nope"}, `unknown --preset "nope"`},
		{[]string{"--node", "1", "--thread-bits", "17"}, "--thread-bits 17 out of range, want 0 to 16"},
		{[]string{"--schemes", "uuid"}, `--schemes: unknown scheme "uuid", want some of traceid, snowflake, decimalid, objectid`},
		{[]string{"--schemes", ","}, `--schemes "," names no scheme`},
		{[]string{"--schemes", "objectid", "--max-n", "0"}, "--max-n 0 out of range, want 1 to 1000000"},
		{[]string{"--schemes", "objectid", "--shutdown-timeout", "-1s"}, "--shutdown-timeout -1s is negative"},
		{[]string{"--schemes", "decimalid", "--launch", "100000"}, "--launch 100000 out of range, want 1 to 99999"},
		{[]string{"--schemes", "objectid", "extra"}, `unexpected argument "extra"`},
		{[]string{"--schemes", "objectid", "--log", log, "--etcd", "127.0.0.1:1"}, "give either --log or --etcd, not both"},
		{[]string{"--bogus"}, "unknown flag --bogus"},
		{[]string{"--schemes", "objectid", "--segment-tag", "a b"}, `invalid value "a b" for flag --segment-tag: segment: invalid: tag "a b" has byte ' ' at 1`},
		{[]string{"--schemes", "objectid", "--segment-tag", "a,a"}, `tag "a" given twice`},
		{[]string{"--schemes", "objectid", "--trusted-proxies", "10.0.0.0/8,proxy.internal"}, `"proxy.internal" is not an address or a prefix, want such as 10.0.0.5 or 10.0.0.0/8`},
		{[]string{"--schemes", "objectid", "--ids-per-node", "0"}, "--ids-per-node 0, want a positive number, or -1 for no limit"},
	}
	for _, tt := range tests {
		code, _, stderr := clitest.Run(append([]string{"serve"}, tt.args...)...)
		assert.Equal(t, 2, code, "%v: %s", tt.args, stderr)
		assert.Contains(t, stderr, tt.want, "%v", tt.args)
		clitest.AssertOneLine(t, stderr, tt.args)
	}

	// Errors that are not about the arguments exit 1.
	code, _, stderr := clitest.Run("serve", "--schemes", "decimalid", "--log", log)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "decimalid: no launch in "+log+" yet; record one with 'idkit launch begin --log "+log+"', or give --launch N")
	code, _, stderr = clitest.Run("serve", "--schemes", "objectid", "--log", log, "--addr", "256.0.0.1:1")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "256.0.0.1")
}

// syncBuffer is a bytes.Buffer safe for concurrent use: the server writes
// to stderr while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveInProcess runs "idkit serve args" in this process until the
// returned stop is called, and returns its base URL.
func serveInProcess(t *testing.T, args ...string) (url string, stderr *syncBuffer, stop func() int) {
	t.Helper()
	stderr = new(syncBuffer)
	c := &cli.Console{Stdout: io.Discard, Stderr: stderr, Clock: clock.System()}
	ctx, cancel := context.WithCancel(context.Background())
	serveStops.Store(c, ctx)
	done := make(chan int, 1)
	go func() { done <- c.Run(append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)) }()
	testwait.Until(t, func() bool {
		return strings.Contains(stderr.String(), "listening on ") || len(done) > 0
	}, "serve listening")
	require.Empty(t, done, "serve ended: %s", stderr.String())
	line := stderr.String()[strings.Index(stderr.String(), "listening on ")+len("listening on "):]
	url = strings.Fields(line)[0]
	return url, stderr, func() int {
		cancel()
		code := testwait.Recv(t, done, "serve's exit after its context was cancelled")
		serveStops.Delete(c)
		return code
	}
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NoError(t, json.NewDecoder(resp.Body).Decode(v))
	return resp.StatusCode
}

func TestServeInProcess(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "idkit.db")
	url, stderr, stop := serveInProcess(t, "--node", "7", "--log", log, "--preset", "sonyflake", "--max-n", "50", "--segment-tag", "order,invoice")
	// Without a launch, decimalid is left out by default, with a note.
	assert.Contains(t, stderr.String(), "idkit serve: decimalid not served: no launch in "+log+" yet")
	assert.Contains(t, stderr.String(), "(traceid, snowflake, objectid, segment/order, segment/invoice)")

	var ids struct{ IDs []string }
	require.Equal(t, http.StatusOK, getJSON(t, url+"/v1/snowflake?n=50", &ids))
	require.Len(t, ids.IDs, 50)
	var parts map[string]any
	require.Equal(t, http.StatusOK, getJSON(t, url+"/v1/snowflake/"+ids.IDs[0], &parts))
	assert.Equal(t, "sonyflake", parts["preset"])
	assert.Equal(t, float64(7), parts["machine"])
	var e struct{ Error string }
	require.Equal(t, http.StatusBadRequest, getJSON(t, url+"/v1/traceid?n=51", &e))
	assert.Equal(t, `n "51" out of range, want 1 to 50`, e.Error)
	require.Equal(t, http.StatusNotFound, getJSON(t, url+"/v1/decimalid", &e))
	require.Equal(t, http.StatusOK, getJSON(t, url+"/v1/segment/invoice?n=3", &ids))
	assert.Equal(t, []string{"1", "2", "3"}, ids.IDs, "a new tag starts at 1")

	assert.Equal(t, 0, stop())
	assert.Contains(t, stderr.String(), "idkit serve: stopped")
	_, err := http.Get(url + "/healthz")
	assert.Error(t, err, "the server still listens")
}

// TestServeFleet serves on nodes claimed in a real etcd, with the
// launch log there, and releases the nodes when it stops.
func TestServeFleet(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	cli := cluster.Client()
	etcd := []string{"--etcd", cluster.Endpoint(0), "--etcd-prefix", fleettest.Prefix(t, cli)}
	code, _, stderr := clitest.Run(append([]string{"launch", "begin", "--ticket", "F-1"}, etcd...)...)
	require.Equal(t, 0, code, stderr)

	url, _, stop := serveInProcess(t, append([]string{"--datacenter", "3", "--inspect-launches"}, etcd...)...)
	var health struct {
		Status string
		Checks map[string]string
	}
	require.Equal(t, http.StatusOK, getJSON(t, url+"/healthz", &health))
	assert.Equal(t, map[string]string{"traceid node claim": "ok", "snowflake node claim": "ok", "store": "ok"}, health.Checks)
	var ids struct{ IDs []string }
	for _, scheme := range []string{"traceid", "snowflake", "decimalid", "objectid"} {
		require.Equal(t, http.StatusOK, getJSON(t, url+"/v1/"+scheme+"?n=3", &ids), scheme)
		require.Len(t, ids.IDs, 3)
	}
	var parts map[string]any
	require.Equal(t, http.StatusOK, getJSON(t, url+"/v1/snowflake/"+firstID(t, url, "snowflake"), &parts))
	assert.Equal(t, float64(3), parts["datacenter"], "the claim keeps the datacenter given")
	require.Equal(t, http.StatusOK, getJSON(t, url+"/v1/decimalid/"+firstID(t, url, "decimalid"), &parts))
	assert.Equal(t, "F-1", parts["ticket"])

	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(b), `idkit_node_claim_held{scheme="traceid"} 1`)
	assert.Contains(t, string(b), `idkit_node_claim_node{scheme="snowflake"} 96`) // datacenter 3, worker 0

	code, stdout, stderr := clitest.Run(append([]string{"nodes"}, etcd...)...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "traceid")
	assert.Contains(t, stdout, "snowflake/twitter")

	require.Equal(t, 0, stop())
	code, stdout, stderr = clitest.Run(append([]string{"nodes"}, etcd...)...)
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "traceid", "the claims are released")
}

func firstID(t *testing.T, url, scheme string) string {
	t.Helper()
	var ids struct{ IDs []string }
	require.Equal(t, http.StatusOK, getJSON(t, url+"/v1/"+scheme, &ids))
	return ids.IDs[0]
}

// TestServeInspectMatchesCLI checks that GET /v1/{scheme}/{id} answers
// exactly what "idkit inspect SCHEME ID --json" prints.
func TestServeInspectMatchesCLI(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "idkit.db")
	code, _, stderr := clitest.Run("launch", "begin", "--log", log, "--ticket", "REL-9", "--by", "ci", "--note", `a "quoted" note`)
	require.Equal(t, 0, code, stderr)
	url, _, stop := serveInProcess(t, "--node", "7", "--log", log, "--preset", "discord", "--thread-bits", "3", "--inspect-launches")
	defer stop()
	const at = "2026-11-23T12:00:00Z"
	for _, tt := range []struct {
		scheme string
		cli    []string // flags of inspect
		query  string
	}{
		{"traceid", []string{"--at", at, "--thread-bits", "3"}, "?at=" + at},
		{"snowflake", []string{"--preset", "discord"}, ""},
		{"decimalid", []string{"--log", log}, ""},
		{"objectid", nil, ""},
	} {
		id := firstID(t, url, tt.scheme)
		code, want, stderr := clitest.Run(append([]string{"inspect", tt.scheme, id, "--json"}, tt.cli...)...)
		require.Equal(t, 0, code, stderr)
		resp, err := http.Get(url + "/v1/" + tt.scheme + "/" + id + tt.query)
		require.NoError(t, err)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, want, string(got), tt.scheme)
	}
}

// TestServeHealthStoreCut cuts the server off from a real etcd holding its
// launch log: /healthz turns 503 naming the store, and 200 again once the
// connection is restored.
func TestServeHealthStoreCut(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	prefix := fleettest.Prefix(t, cluster.Client())
	code, _, stderr := clitest.Run("launch", "begin", "--etcd", cluster.Endpoint(0), "--etcd-prefix", prefix)
	require.Equal(t, 0, code, stderr)
	proxy := tcpproxy.New(t, cluster.Endpoint(0))
	url, _, stop := serveInProcess(t, "--schemes", "decimalid,objectid", "--etcd", proxy.Endpoint(), "--etcd-prefix", prefix)
	defer stop()

	type report struct {
		Status, Error string
		Checks        map[string]string
	}
	var rep report
	require.Equal(t, http.StatusOK, getJSON(t, url+"/healthz", &rep))
	assert.Equal(t, "ok", rep.Checks["store"])

	proxy.Cut()
	testwait.Until(t, func() bool {
		rep = report{}
		return getJSON(t, url+"/healthz", &rep) == http.StatusServiceUnavailable
	}, "healthz 503 with the store cut off")
	assert.Equal(t, "fail", rep.Status)
	assert.Contains(t, rep.Error, "store: ")
	// IDs already fetched from etcd (decimalid's generator id) go on.
	var ids struct{ IDs []string }
	assert.Equal(t, http.StatusOK, getJSON(t, url+"/v1/decimalid?n=3", &ids))

	proxy.Restore()
	testwait.Until(t, func() bool {
		return getJSON(t, url+"/healthz", &rep) == http.StatusOK
	}, "healthz 200 with the store back")
}
