package serve

import (
	"context"
	"crypto/tls"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/serve/internal/reload"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/objectid"
)

// serveTLS runs s on a local listener and returns its https URL.
func serveTLS(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go s.Serve(ln)
	return "https://" + ln.Addr().String()
}

// client returns an HTTPS client that trusts ca, presenting cert if given.
func client(ca *testcert.CA, cert *tls.Certificate, keepAlive bool) *http.Client {
	cfg := &tls.Config{RootCAs: ca.Pool()}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: !keepAlive}}
}

func call(t *testing.T, c *http.Client, url, token string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestTLSAndTokens: over HTTPS, /v1/ needs a bearer token from the token
// file while the probes and /metrics need none; a changed token file and a
// renewed certificate take effect without a restart, and a connection open
// across the renewal goes on.
func TestTLSAndTokens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 10, true)
	tokenFile := filepath.Join(dir, "tokens")
	const alice, bob = "alice-0123456789abcdef", "bob-0123456789abcdef"
	testcert.WriteFile(t, tokenFile, []byte("# clients\nalice "+alice+"\n"))
	clk := clock.NewFake(start)
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clk,
		TLS: &TLSFiles{CertFile: certFile, KeyFile: keyFile}, TokenFile: tokenFile})
	url := serveTLS(t, s)
	kept := client(ca, nil, true)

	for _, token := range []string{"", bob, alice + "x"} {
		resp := call(t, kept, url+"/v1/objectid", token)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "token %q", token)
		assert.Equal(t, `Bearer realm="idkit"`, resp.Header.Get("WWW-Authenticate"))
		assert.Contains(t, body(t, resp), "a valid bearer token is required")
	}
	resp := call(t, kept, url+"/v1/objectid?n=2", alice)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	req, err := http.NewRequest(http.MethodGet, url+"/v1/objectid", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "bearer "+alice)
	lower, err := kept.Do(req)
	require.NoError(t, err)
	lower.Body.Close()
	assert.Equal(t, http.StatusOK, lower.StatusCode, "the scheme's name in any case")
	assert.Equal(t, big.NewInt(10), resp.TLS.PeerCertificates[0].SerialNumber)
	for _, path := range []string{"/livez", "/readyz", "/metrics"} {
		assert.Equal(t, http.StatusOK, call(t, kept, url+path, "").StatusCode, path)
	}
	assert.Equal(t, http.StatusUnauthorized, call(t, kept, url+"/v1/objectid/6b04955eee2b263e1baa598c", "").StatusCode, "inspection needs a token too")

	// A new token file and a renewed certificate, looked at once the
	// reload interval has passed.
	testcert.WriteFile(t, tokenFile, []byte("bob "+bob+"\n"))
	ca.Issue(t, dir, "server", 11, true)
	clk.Advance(2 * reload.Interval)
	fresh := client(ca, nil, false)
	resp = call(t, fresh, url+"/v1/objectid", bob)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, big.NewInt(11), resp.TLS.PeerCertificates[0].SerialNumber, "a new connection gets the renewed certificate")
	assert.Equal(t, http.StatusUnauthorized, call(t, fresh, url+"/v1/objectid", alice).StatusCode, "alice's token is gone")
	resp = call(t, kept, url+"/v1/objectid", bob)
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the connection open across the renewal goes on")

	// A token file with no valid token left leaves no token valid.
	testcert.WriteFile(t, tokenFile, []byte("short\n"))
	clk.Advance(2 * reload.Interval)
	assert.Equal(t, http.StatusUnauthorized, call(t, fresh, url+"/v1/objectid", bob).StatusCode)
}

// TestMutualTLS: with a client CA, a client without a certificate of that
// CA cannot connect, and one with it needs no token.
func TestMutualTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, other := testcert.NewCA(t), testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 10, true)
	caFile := filepath.Join(dir, "clients.pem")
	testcert.WriteFile(t, caFile, ca.PEM)
	tokenFile := filepath.Join(dir, "tokens")
	testcert.WriteFile(t, tokenFile, []byte("alice alice-0123456789abcdef\n"))
	s := newServer(t, Options{ObjectID: &objectid.Options{}, TokenFile: tokenFile,
		TLS: &TLSFiles{CertFile: certFile, KeyFile: keyFile, ClientCAFile: caFile}})
	url := serveTLS(t, s)

	_, err := client(ca, nil, false).Get(url + "/livez")
	assert.Error(t, err, "a client without a certificate")
	strangerCert, strangerKey := other.Issue(t, dir, "stranger", 20, false)
	stranger, err := tls.LoadX509KeyPair(strangerCert, strangerKey)
	require.NoError(t, err)
	_, err = client(ca, &stranger, false).Get(url + "/livez")
	assert.Error(t, err, "a client certificate of another CA")

	appCert, appKey := ca.Issue(t, dir, "app", 21, false)
	app, err := tls.LoadX509KeyPair(appCert, appKey)
	require.NoError(t, err)
	resp := call(t, client(ca, &app, false), url+"/v1/objectid", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the certificate authenticates the client")
}

func TestAccessOptionErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 10, true)
	short := filepath.Join(dir, "short")
	testcert.WriteFile(t, short, []byte("alice abc\n"))
	empty := filepath.Join(dir, "empty")
	testcert.WriteFile(t, empty, []byte("# none yet\n"))
	notPEM := filepath.Join(dir, "ca.txt")
	testcert.WriteFile(t, notPEM, []byte("not a certificate"))
	for _, tt := range []struct {
		o    Options
		want string
	}{
		{Options{TokenFile: short}, "line 1: a token of 3 characters, want 16 or more"},
		{Options{TokenFile: empty}, "holds no token"},
		{Options{TokenFile: filepath.Join(dir, "missing")}, "no such file"},
		{Options{TLS: &TLSFiles{CertFile: certFile}}, "needs CertFile and KeyFile"},
		{Options{TLS: &TLSFiles{CertFile: keyFile, KeyFile: keyFile}}, "Options.TLS"},
		{Options{TLS: &TLSFiles{CertFile: certFile, KeyFile: keyFile, ClientCAFile: notPEM}}, "holds no PEM certificate"},
	} {
		tt.o.ObjectID = &objectid.Options{}
		_, err := New(context.Background(), tt.o)
		require.ErrorIs(t, err, ErrInvalid, tt.want)
		assert.Contains(t, err.Error(), tt.want)
		assert.False(t, strings.Contains(err.Error(), "abc"), "the token in the error")
	}
}

// TestSeparateMetrics: /metrics leaves the server's routes for a listener
// of its own.
func TestSeparateMetrics(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{ObjectID: &objectid.Options{}, SeparateMetrics: true})
	assert.Equal(t, http.StatusNotFound, get(t, s, "/metrics").StatusCode)
	rec := get(t, s.MetricsHandler(), "/metrics")
	assert.Equal(t, http.StatusOK, rec.StatusCode)
	assert.Contains(t, body(t, rec), "idkit_ids_issued_total")
}

// TestReloadUnderLoad: clients keep asking for IDs over kept and new
// connections while the certificate is renewed and the token file
// rewritten (their token kept), and not one request fails.
func TestReloadUnderLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 10, true)
	tokenFile := filepath.Join(dir, "tokens")
	const token = "steady-0123456789abcdef"
	testcert.WriteFile(t, tokenFile, []byte("steady "+token+"\n"))
	clk := clock.NewFake(start)
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clk, Limits: Limits{IDsPerSecond: -1, RequestsPerSecond: -1, NodeIDsPerSecond: -1},
		TLS: &TLSFiles{CertFile: certFile, KeyFile: keyFile}, TokenFile: tokenFile})
	url := serveTLS(t, s)

	stop := make(chan struct{})
	type result struct{ ok, failed int }
	results := make(chan result, 4)
	for i := range 4 {
		c := client(ca, nil, i%2 == 0) // half keep their connections, half dial anew
		go func() {
			var r result
			defer func() { results <- r }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodGet, url+"/v1/objectid?n=10", nil)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := c.Do(req)
				if err != nil || resp.StatusCode != http.StatusOK {
					r.failed++
				} else {
					r.ok++
				}
				if resp != nil {
					resp.Body.Close()
				}
			}
		}()
	}
	for i := range 5 {
		ca.Issue(t, dir, "server", int64(20+i), true)
		testcert.WriteFile(t, tokenFile, []byte("steady "+token+"\nother"+strconv.Itoa(i)+" other-0123456789abcdef"+strconv.Itoa(i)+"\n"))
		clk.Advance(2 * reload.Interval)
		resp := call(t, client(ca, nil, false), url+"/v1/objectid", token)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, big.NewInt(int64(20+i)), resp.TLS.PeerCertificates[0].SerialNumber, "renewal %d in use", i)
	}
	close(stop)
	var total result
	for range 4 {
		r := testwait.Recv(t, results, "a client's tally")
		total.ok += r.ok
		total.failed += r.failed
	}
	assert.Zero(t, total.failed, "requests failed across the reloads (%d served)", total.ok)
	assert.Positive(t, total.ok)
}

// TestTLSSuitesAndHandshakeLog: TLS 1.2 offers AEAD suites only, and
// failed handshakes are counted, with one log line for many.
func TestTLSSuitesAndHandshakeLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 10, true)
	var log syncBuffer
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clock.NewFake(start),
		Logger: slog.New(slog.NewTextHandler(&log, nil)), TLS: &TLSFiles{CertFile: certFile, KeyFile: keyFile}})
	url := serveTLS(t, s)
	tls12 := func(suite uint16) *http.Client {
		return &http.Client{Timeout: testwait.Bound, Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{
			RootCAs: ca.Pool(), MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite}}}}
	}
	for _, suite := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256} {
		resp := call(t, tls12(suite), url+"/livez", "")
		assert.Equal(t, http.StatusOK, resp.StatusCode, tls.CipherSuiteName(suite))
	}
	const failures = 5
	for range failures {
		_, err := tls12(tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA).Get(url + "/livez")
		assert.Error(t, err, "a CBC suite")
	}
	testwait.Until(t, func() bool {
		return strings.Contains(body(t, get(t, s, "/metrics")), "idkit_tls_handshake_errors_total 5\n")
	}, "5 failed handshakes counted")
	// A failure is counted just before it is logged.
	testwait.Until(t, func() bool { return strings.Contains(log.String(), "TLS handshakes failed") }, "failed handshakes logged")
	assert.Equal(t, 1, strings.Count(log.String(), "TLS handshakes failed"), "one log line for many:\n%s", log.String())
}

// TestTokenFileOwners: a token file reached through a symbolic link of
// this user or root is read, as a Kubernetes secret volume's are; a link
// that another user owns, or a token file that every user may write, is
// refused at start, saying why.
func TestTokenFileOwners(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "tokens")
	testcert.WriteFile(t, tokenFile, []byte("alice alice-0123456789abcdef\n"))
	link := filepath.Join(dir, "tokens.link")
	require.NoError(t, os.Symlink(tokenFile, link))
	s, err := New(context.Background(), Options{ObjectID: &objectid.Options{}, Clock: clock.NewFake(start), TokenFile: link})
	require.NoError(t, err, "a link of this user")
	require.NoError(t, s.Close())

	if os.Geteuid() == 0 { // changing a link's owner takes root
		planted := filepath.Join(dir, "planted")
		require.NoError(t, os.Symlink(tokenFile, planted))
		require.NoError(t, os.Lchown(planted, 65534, 65534))
		_, err = New(context.Background(), Options{ObjectID: &objectid.Options{}, Clock: clock.NewFake(start), TokenFile: planted})
		require.Error(t, err)
		assert.ErrorContains(t, err, planted+" is a symbolic link owned by uid 65534")
	}

	require.NoError(t, os.Chmod(tokenFile, 0o666))
	_, err = New(context.Background(), Options{ObjectID: &objectid.Options{}, Clock: clock.NewFake(start), TokenFile: tokenFile})
	require.Error(t, err)
	assert.ErrorContains(t, err, "is writable by every user")
}
