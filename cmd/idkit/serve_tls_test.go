package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testcert"
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
		code, _, stderr := idkit(append([]string{"serve", "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db")}, args...)...)
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
		code, _, stderr := idkit(append([]string{"serve", "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db")}, args...)...)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, "want a positive number, or -1 for no limit")
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
		code, _, stderr := idkit(append([]string{"serve", "--schemes", "objectid", "--log", filepath.Join(dir, "idkit.db")}, args...)...)
		assert.Equal(t, 2, code, stderr)
	}
}
