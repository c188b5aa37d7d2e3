package serve

import (
	"bufio"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/objectid"
)

// freePort returns a listener on a free local port and its address.
func freePort(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln, ln.Addr().String()
}

// served runs serve on ln in the background; the test's end checks that it
// stopped with http.ErrServerClosed.
func served(t *testing.T, s *Server, serve func(net.Listener) error, ln net.Listener) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		err := testwait.Recv(t, done, "the end of a listener's Serve")
		assert.True(t, errors.Is(err, http.ErrServerClosed), "Serve returned %v", err)
	})
}

// keepIdle sends one request on a new connection to addr from the
// loopback address from, reads the answer and leaves the connection open
// and idle; it is closed when the test ends.
func keepIdle(t testing.TB, from, addr, path string) {
	t.Helper()
	c := dialFrom(t, from, addr)
	resp, err := roundTrip(c, bufio.NewReader(c), path)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, path)
}

// TestProbesAndMetricsListeners: the probe listener serves /livez and
// /readyz alone, the metrics listener /metrics alone; neither needs a
// token.
func TestProbesAndMetricsListeners(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	testcert.WriteFile(t, tokenFile, []byte("alice alice-0123456789abcdef\n"))
	s := newServer(t, Options{ObjectID: &objectid.Options{}, TokenFile: tokenFile, SeparateMetrics: true})
	pln, probes := freePort(t)
	mln, metrics := freePort(t)
	served(t, s, s.ServeProbes, pln)
	served(t, s, s.ServeMetrics, mln)
	c := &http.Client{Timeout: testwait.Bound}
	for _, tt := range []struct {
		url  string
		want int
	}{
		{"http://" + probes + "/livez", http.StatusOK},
		{"http://" + probes + "/readyz", http.StatusOK},
		{"http://" + probes + "/healthz", http.StatusNotFound},
		{"http://" + probes + "/metrics", http.StatusNotFound},
		{"http://" + probes + "/v1/objectid", http.StatusNotFound},
		{"http://" + metrics + "/metrics", http.StatusOK},
		{"http://" + metrics + "/livez", http.StatusNotFound},
		{"http://" + metrics + "/v1/objectid", http.StatusNotFound},
		{"http://" + metrics + "/", http.StatusNotFound},
	} {
		resp, err := c.Get(tt.url)
		require.NoError(t, err, tt.url)
		resp.Body.Close()
		assert.Equal(t, tt.want, resp.StatusCode, tt.url)
	}
	resp, err := c.Post("http://"+probes+"/livez", "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "a probe with a body")
}

// TestProbesAnswerWhileListenersAreFull: a few hundred idle connections to
// the metrics listener and MaxConns idle connections to the main port,
// from four addresses, leave /livez on the probe listener answering, and a new client of the
// main port is served, taking the room of an idle connection. (A few
// hundred rather than thousands keeps the test fast: past its cap the
// metrics listener accepts nothing more, so the number beyond the cap
// changes only the kernel's backlog, not the server.)
func TestProbesAnswerWhileListenersAreFull(t *testing.T) {
	t.Parallel()
	const maxConns, metricsConns = 20, 300
	s := newServer(t, Options{ObjectID: &objectid.Options{}, SeparateMetrics: true, Limits: Limits{MaxConns: maxConns}})
	ln, main := freePort(t)
	pln, probes := freePort(t)
	mln, metrics := freePort(t)
	served(t, s, s.Serve, ln)
	served(t, s, s.ServeProbes, pln)
	served(t, s, s.ServeMetrics, mln)

	// The metrics listener's room taken by idle kept-alive connections,
	// and then by connections that send nothing, far past its cap.
	for range DefaultMetricsMaxConns / 2 {
		keepIdle(t, "127.0.0.1", metrics, "/metrics")
	}
	for range metricsConns {
		c, err := net.Dial("tcp", metrics)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
	}
	for i := range maxConns { // from four addresses, each at its share
		keepIdle(t, "127.0.0."+itoa(2+i%4), main, "/livez")
	}
	scrape := func() string { return body(t, get(t, s.metricsOnly(), "/metrics")) }
	// The count of open connections comes and goes at the cap: an
	// eviction's room is taken only once the server has let the evicted
	// connection go, and the silent ones are closed to make room for the
	// next once they are 50 ms old, or time out. Every idle one evicted
	// is what proves the listener full: it evicts at its cap only, the
	// idle connections before the silent ones.
	testwait.Until(t, func() bool {
		return metricOr0(scrape(), `idkit_connections_evicted_total{listener="metrics"}`) >= DefaultMetricsMaxConns/2
	}, "the metrics listener at its cap, every idle connection evicted")
	m := scrape()
	assertMetric(t, m, `idkit_connections_open{listener="main"} 20`)

	c := &http.Client{Timeout: testwait.Bound, Transport: &http.Transport{DisableKeepAlives: true}}
	for _, path := range []string{"/livez", "/readyz"} {
		resp, err := c.Get("http://" + probes + path)
		require.NoError(t, err, "%s on the probe listener", path)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
	}
	resp, err := c.Get("http://" + main + "/v1/objectid")
	require.NoError(t, err, "a new client of the main port")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	m = scrape()
	assertMetric(t, m, `idkit_connections_evicted_total{listener="main"} 1`)
	assert.LessOrEqual(t, metricValue(t, m, `idkit_connections_open{listener="metrics"}`), float64(DefaultMetricsMaxConns), "the metrics listener within its cap")
}

// TestProbesWithoutClientCertificate: with a client CA, the main port
// refuses a client without a certificate while the probe listener
// answers it, over HTTPS.
func TestProbesWithoutClientCertificate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 10, true)
	caFile := ca.WriteCA(t, dir, "clients")
	s := newServer(t, Options{ObjectID: &objectid.Options{},
		TLS: &TLSFiles{CertFile: certFile, KeyFile: keyFile, ClientCAFile: caFile}})
	ln, main := freePort(t)
	pln, probes := freePort(t)
	served(t, s, s.Serve, ln)
	served(t, s, s.ServeProbes, pln)

	noCert := client(ca, nil, false)
	_, err := noCert.Get("https://" + main + "/livez")
	assert.Error(t, err, "the main port without a client certificate")
	for _, path := range []string{"/livez", "/readyz"} {
		resp := call(t, noCert, "https://"+probes+path, "")
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Equal(t, int64(10), resp.TLS.PeerCertificates[0].SerialNumber.Int64())
	}
	// A Kubernetes probe verifies no server certificate either.
	k8s := &http.Client{Timeout: testwait.Bound, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := k8s.Get("https://" + probes + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestFileLimit: a limit on open files below what the listeners may hold
// is an error that names both numbers and the caps.
func TestFileLimit(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Limits: Limits{MaxConns: 1000}})
	need := s.Descriptors()
	assert.Equal(t, 1000+DefaultProbeMaxConns+DefaultMetricsMaxConns+6, need)
	err := checkFileLimit(need+50, 1024, true, s.cfg)
	require.ErrorIs(t, err, ErrFileLimit)
	assert.Contains(t, err.Error(), "it is 1024, and the server may hold 1136 descriptors: 1000 connections on the main port, 16 on the probe listener, 64 on the metrics listener, 56 for files")
	assert.NoError(t, checkFileLimit(need+50, uint64(need+50), true, s.cfg))
	assert.NoError(t, checkFileLimit(need+50, 0, false, s.cfg), "a limit not known")
	assert.Zero(t, newServer(t, Options{ObjectID: &objectid.Options{}, Limits: Limits{MaxConns: -1}}).Descriptors(), "no cap")
}
