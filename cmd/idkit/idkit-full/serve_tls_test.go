package main

import (
	"bufio"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// TestServeTLSTokensMetrics runs serve as production does: HTTPS, bearer
// tokens, and /metrics on a listener of its own that needs no token.
func TestServeTLSTokensMetrics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 2, true)
	tokenFile := filepath.Join(dir, "tokens")
	const token = "ci-0123456789abcdef0123"
	testcert.WriteFile(t, tokenFile, []byte("ci "+token+"\n"))
	url, stderr, stop := serveInProcess(t, "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db"),
		"--tls-cert", certFile, "--tls-key", keyFile, "--token-file", tokenFile, "--metrics-addr", "127.0.0.1:0")
	defer stop()
	require.Regexp(t, `^https://`, url)
	metrics := regexp.MustCompile(`metrics on (http://\S+)`).FindStringSubmatch(stderr.String())
	require.Len(t, metrics, 2, stderr.String())

	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	get := func(url, token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, _ := get(url+"/v1/objectid", "")
	assert.Equal(t, http.StatusUnauthorized, code, "/v1/ without a token")
	code, _ = get(url+"/v1/objectid?n=3", token)
	assert.Equal(t, http.StatusOK, code)
	code, _ = get(url+"/metrics", token)
	assert.Equal(t, http.StatusNotFound, code, "/metrics is on its own listener")
	code, body := get(metrics[1], "")
	assert.Equal(t, http.StatusOK, code, "/metrics needs no token")
	assert.Contains(t, body, `idkit_ids_issued_total{scheme="objectid"} 3`)

	resp, err := http.Get("http://" + url[len("https://"):] + "/v1/objectid")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP on the TLS port")

	for _, args := range [][]string{
		{"--tls-cert", certFile},
		{"--tls-client-ca", certFile},
	} {
		code, _, stderr := clitest.Run(append([]string{"serve", "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db")}, args...)...)
		assert.Equal(t, 2, code, stderr)
	}
}

// TestServeLimits: --ids-per-client answers 429 past a client's IDs a
// second; bad limits are usage errors.
func TestServeLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url, _, stop := serveInProcess(t, "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db"),
		"--ids-per-client", "1", "--max-n", "10") // 10 at once, then 1 a second
	defer stop()
	var ids struct{ IDs []string }
	require.Equal(t, http.StatusOK, getJSON(t, url+"/v1/objectid?n=10", &ids))
	resp, err := http.Get(url + "/v1/objectid?n=10")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))

	for _, args := range [][]string{{"--ids-per-client", "0"}, {"--max-conns", "-5"}, {"--requests-per-client", "-2"}} {
		code, _, stderr := clitest.Run(append([]string{"serve", "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db")}, args...)...)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, "want a positive number, or -1 for no limit")
	}
}

// TestServeMaxConnsPerClient: with --max-conns-per-client 1, an address
// whose one connection is busy has its next one closed at once, while
// another address is served; values out of range are usage errors that
// name the range.
func TestServeMaxConnsPerClient(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url, stderr, stop := serveInProcess(t, "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db"),
		"--max-conns", "8", "--max-conns-per-client", "1")
	defer func() { assert.Zero(t, stop(), stderr.String()) }()
	addr := strings.TrimPrefix(url, "http://")
	from := func(ip string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: testwait.Bound}
		c, err := d.Dial("tcp", addr)
		require.NoError(t, err, "dial from %s", ip)
		t.Cleanup(func() { c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(testwait.Bound)))
		return c
	}
	busy := from("127.0.0.2")
	_, err := busy.Write([]byte("GET /livez HTTP/1.1\r\nHo")) // half a request
	require.NoError(t, err)
	// The address's next connection (accepted after the first: the
	// kernel queues them in order) is closed at once.
	_, err = from("127.0.0.2").Read(make([]byte, 1))
	require.Error(t, err, "a second connection from 127.0.0.2")
	assert.False(t, errors.Is(err, os.ErrDeadlineExceeded), "a second connection from 127.0.0.2 closed at once, not left waiting: %v", err)
	_, err = busy.Write([]byte("st: x\r\n\r\n"))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	require.NoError(t, err, "the busy connection is served")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	other := from("127.0.0.3")
	_, err = other.Write([]byte("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	resp, err = http.ReadResponse(bufio.NewReader(other), nil)
	require.NoError(t, err, "another address is served")
	m, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Regexp(t, `idkit_connections_refused_total\{listener="main"\} [1-9]`, string(m))

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-conns-per-client", "0"}, "--max-conns-per-client 0 out of range, want 1 to 4096 (--max-conns), or -1 for no limit"},
		{[]string{"--max-conns", "10", "--max-conns-per-client", "11"}, "--max-conns-per-client 11 out of range, want 1 to 10 (--max-conns), or -1 for no limit"},
		{[]string{"--max-conns", "-1", "--max-conns-per-client", "-3"}, "--max-conns-per-client -3 out of range, want 1 or more, or -1 for no limit"},
	} {
		code, _, stderr := clitest.Run(append([]string{"serve", "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db")}, tt.args...)...)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, tt.want)
	}
}

// TestServeProbeAndMetricsAddr: --probe-addr answers /livez and /readyz to
// a client without a certificate while the main port requires one
// (--tls-client-ca), and serves nothing else; --metrics-addr serves
// /metrics alone; bad values of the new flags are usage errors.
func TestServeProbeAndMetricsAddr(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 2, true)
	caFile := ca.WriteCA(t, dir, "clients")
	url, stderr, stop := serveInProcess(t, "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db"),
		"--tls-cert", certFile, "--tls-key", keyFile, "--tls-client-ca", caFile,
		"--probe-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--metrics-max-conns", "8", "--idle-timeout", "30s")
	defer func() { assert.Zero(t, stop(), stderr.String()) }()
	probes := regexp.MustCompile(`probes on (https://\S+)/livez`).FindStringSubmatch(stderr.String())
	require.Len(t, probes, 2, stderr.String())
	metrics := regexp.MustCompile(`metrics on (http://\S+)/metrics`).FindStringSubmatch(stderr.String())
	require.Len(t, metrics, 2, stderr.String())

	noCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	status := func(c *http.Client, url string) int {
		resp, err := c.Get(url)
		require.NoError(t, err, url)
		resp.Body.Close()
		return resp.StatusCode
	}
	_, err := noCert.Get(url + "/livez")
	assert.Error(t, err, "the main port without a client certificate")
	assert.Equal(t, http.StatusOK, status(noCert, probes[1]+"/livez"))
	assert.Equal(t, http.StatusOK, status(noCert, probes[1]+"/readyz"))
	assert.Equal(t, http.StatusNotFound, status(noCert, probes[1]+"/v1/objectid"))
	assert.Equal(t, http.StatusNotFound, status(noCert, probes[1]+"/metrics"))
	assert.Equal(t, http.StatusOK, status(http.DefaultClient, metrics[1]+"/metrics"))
	assert.Equal(t, http.StatusNotFound, status(http.DefaultClient, metrics[1]+"/livez"))

	for _, args := range [][]string{{"--idle-timeout", "0s"}, {"--metrics-max-conns", "0"}} {
		code, _, stderr := clitest.Run(append([]string{"serve", "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db")}, args...)...)
		assert.Equal(t, 2, code, stderr)
	}
}
