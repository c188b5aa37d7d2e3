package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testcert"
)

// TestServeShutdownEtcdDown stops a server whose etcd is cut off: the
// error names the release of the node claims that failed, not requests
// in flight, of which there are none.
func TestServeShutdownEtcdDown(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	prefix := fleettest.Prefix(t, cluster.Client())
	proxy := tcpproxy.New(t, cluster.Endpoint(0))
	url, stderr, stop := serveInProcess(t, "--schemes", "traceid", "--etcd", proxy.Endpoint(), "--etcd-prefix", prefix)
	var ids struct{ IDs []string }
	require.Equal(t, http.StatusOK, getJSON(t, url+"/v1/traceid?n=2", &ids), stderr.String())
	proxy.Cut()
	code := stop()
	t.Log(stderr.String())
	assert.Equal(t, 1, code)
	assert.NotContains(t, stderr.String(), "in flight")
}

// TestServeEtcdForeignClientCert starts serve with a client certificate
// of a CA that etcd does not accept, with and without claiming nodes
// there: it fails at once with one line that names the refused
// certificate and the flags to check.
func TestServeEtcdForeignClientCert(t *testing.T) {
	t.Parallel()
	s := startTLS(t)
	for _, schemes := range [][]string{
		{"--schemes", "traceid"},
		{"--schemes", "objectid", "--etcd-user", "deploy", "--etcd-password-file", s.passwordFile},
	} {
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--etcd", s.endpoint, "--etcd-prefix", s.prefix,
			"--etcd-cacert", s.ca, "--etcd-cert", s.otherCert, "--etcd-key", s.otherKey,
			"--etcd-dial-timeout", failDialTimeout.String()}, schemes...)
		code, stdout, stderr, took := idkitBounded(t, args...)
		requireOneLineFailure(t, code, stdout, stderr, took,
			"etcd: TLS: the server refused the client certificate: unknown certificate authority (check --etcd-cert and --etcd-key)")
	}
}

// TestServeExposureWarnings: serve warns at start when its main port is
// open to other hosts without credentials, or takes bearer tokens over
// plain HTTP there; on loopback, or with TLS and credentials, it says
// nothing.
func TestServeExposureWarnings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	testcert.WriteFile(t, tokens, []byte("app 0123456789abcdef0123\n"))
	ca := testcert.NewCA(t)
	cert, key := ca.Issue(t, dir, "localhost", 1, true)
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"loopback", nil, nil},
		{"loopback with tokens over HTTP", []string{"--token-file", tokens}, nil},
		{"all addresses", []string{"--addr", "0.0.0.0:0"},
			[]string{"idkit serve: warning: listening on all addresses (", "without --token-file or --tls-client-ca: any client that reaches the port may take IDs"}},
		{"all addresses with tokens over HTTP", []string{"--addr", "0.0.0.0:0", "--token-file", tokens},
			[]string{"idkit serve: warning: --token-file without --tls-cert on all addresses (", "bearer tokens cross the network in plain text"}},
		{"all addresses with tokens over HTTPS", []string{"--addr", "0.0.0.0:0", "--token-file", tokens, "--tls-cert", cert, "--tls-key", key}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, stop := serveInProcess(t, append([]string{"--schemes", "objectid", "--log", filepath.Join(t.TempDir(), "idkit.db")}, tt.args...)...)
			require.Equal(t, 0, stop(), stderr.String())
			for _, w := range tt.want {
				assert.Contains(t, stderr.String(), w)
			}
			assert.Equal(t, len(tt.want) > 0, strings.Contains(stderr.String(), "warning"), "%s", stderr.String())
			assert.Equal(t, min(len(tt.want), 1), strings.Count(stderr.String(), "warning"), "one warning a cause: %s", stderr.String())
		})
	}
}

// TestServeRefusesALinkedLog: serve given a launch log through a
// symbolic link exits 1 at start with one line naming the link and the
// fix, rather than start and answer every request 503.
func TestServeRefusesALinkedLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "idkit.db")
	code, _, stderr := clitest.Run("launch", "begin", "--log", real, "--ticket", "T-1")
	require.Equal(t, 0, code, stderr)
	link := filepath.Join(dir, "link.db")
	require.NoError(t, os.Symlink(real, link))
	code, stdout, stderr, took := idkitBounded(t, "serve", "--addr", "127.0.0.1:0", "--node", "1", "--log", link)
	t.Logf("took %v: %s", took.Round(time.Millisecond), stderr)
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	assert.Contains(t, stderr, link+" is a symbolic link; name the file itself")
	assert.Less(t, took, time.Second)
}
