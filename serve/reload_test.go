package serve

import (
	"crypto/tls"
	"log/slog"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/idkit/idkit/serve/internal/reload"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/objectid"
)

// TestTokenRevocation: a token that is not in the token file's last
// readable version gets 401 once the reload interval has passed, whether
// the file lost its line to an edit with a bad line in it, was emptied or
// was deleted. A bad line is skipped, named by its number in the log, and
// the other lines apply; a file with no token left makes /readyz 503 with
// the reason; the last reload's result is a metric.
func TestTokenRevocation(t *testing.T) {
	t.Parallel()
	const alice, bob, carol = "alice-0123456789abcdef", "bob-0123456789abcdef", "carol-0123456789abcdef"
	for _, tt := range []struct {
		name   string
		change func(t *testing.T, path string)
		// kept is the token that stays valid, if any; logged is a part
		// of the log the change must leave.
		kept, logged, ready, metric string
	}{
		{"a bad line", func(t *testing.T, path string) {
			testcert.WriteFile(t, path, []byte("# clients\nbob "+bob+"\ncarol short\n"))
		}, bob, "line 3: a token of 5 characters, want 16 or more", "ok",
			`idkit_config_reload_skipped_parts{files="tokens"} 1`},
		{"emptied", func(t *testing.T, path string) {
			testcert.WriteFile(t, path, nil)
		}, "", "holds no token", "nothing valid in the file, nothing in use",
			`idkit_config_reloads_total{files="tokens",result="failed"} 1`},
		{"deleted", func(t *testing.T, path string) {
			require.NoError(t, os.Remove(path))
		}, "", "no such file", "file missing, nothing in use",
			`idkit_config_reloads_total{files="tokens",result="failed"} 1`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tokenFile := filepath.Join(t.TempDir(), "tokens")
			testcert.WriteFile(t, tokenFile, []byte("alice "+alice+"\nbob "+bob+"\ncarol "+carol+"\n"))
			clk := clock.NewFake(start)
			var log syncBuffer
			s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clk, TokenFile: tokenFile,
				Logger: slog.New(slog.NewTextHandler(&log, nil))})
			for _, token := range []string{alice, bob, carol} {
				require.Equal(t, http.StatusOK, get(t, s, "/v1/objectid", "Authorization", "Bearer "+token).StatusCode, token)
			}
			assertMetric(t, body(t, get(t, s, "/metrics")), `idkit_config_reload_successful{files="tokens"} 1`)

			tt.change(t, tokenFile)
			clk.Advance(reload.Interval)
			for _, token := range []string{alice, bob, carol} {
				want := http.StatusUnauthorized
				if token == tt.kept {
					want = http.StatusOK
				}
				assert.Equal(t, want, get(t, s, "/v1/objectid", "Authorization", "Bearer "+token).StatusCode, token)
			}
			assert.Contains(t, log.String(), tt.logged)
			assert.NotContains(t, log.String(), "short", "a token in the log")

			code, rep := getHealth(t, s)
			assert.Equal(t, tt.ready, rep.Checks["tokens"])
			if tt.kept == "" {
				assert.Equal(t, http.StatusServiceUnavailable, code)
				assert.Contains(t, rep.Error, "tokens: "+tt.ready)
			} else {
				assert.Equal(t, http.StatusOK, code)
			}
			metrics := body(t, get(t, s, "/metrics"))
			assertMetric(t, metrics, `idkit_config_reload_successful{files="tokens"} 0`)
			assertMetric(t, metrics, tt.metric)

			// Written again, the file applies again.
			testcert.WriteFile(t, tokenFile, []byte("alice "+alice+"\n"))
			clk.Advance(reload.Interval)
			assert.Equal(t, http.StatusOK, get(t, s, "/v1/objectid", "Authorization", "Bearer "+alice).StatusCode)
			code, _ = getHealth(t, s)
			assert.Equal(t, http.StatusOK, code)
			assertMetric(t, body(t, get(t, s, "/metrics")), `idkit_config_reload_successful{files="tokens"} 1`)
		})
	}
}

// TestTokenRotationSameLengthAndTime: a token rotated in place by a
// line of the same length, the file's modification time set back to what
// it was (as cp -p or rsync -t leaves it), is revoked at the next look at
// the file, a second later on the server's clock; so is one rotated by a
// rename to a file of the same size and time (a new inode).
func TestTokenRotationSameLengthAndTime(t *testing.T) {
	t.Parallel()
	const old, rotated = "alice-0123456789abcdef", "alice-fedcba9876543210"
	for _, tt := range []struct {
		name  string
		write func(t *testing.T, path string, b []byte)
	}{
		{"in place", func(t *testing.T, path string, b []byte) {
			require.NoError(t, os.WriteFile(path, b, 0o600))
		}},
		{"renamed over", func(t *testing.T, path string, b []byte) {
			testcert.WriteFile(t, path, b)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tokenFile := filepath.Join(t.TempDir(), "tokens")
			testcert.WriteFile(t, tokenFile, []byte("alice "+old+"\n"))
			fi, err := os.Stat(tokenFile)
			require.NoError(t, err)
			clk := clock.NewFake(start)
			s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clk, TokenFile: tokenFile})
			require.Equal(t, http.StatusOK, get(t, s, "/v1/objectid", "Authorization", "Bearer "+old).StatusCode)

			tt.write(t, tokenFile, []byte("alice "+rotated+"\n"))
			require.NoError(t, os.Chtimes(tokenFile, fi.ModTime(), fi.ModTime()))
			now, err := os.Stat(tokenFile)
			require.NoError(t, err)
			require.Equal(t, fi.Size(), now.Size())
			require.Equal(t, fi.ModTime(), now.ModTime(), "the rotation keeps the modification time")

			clk.Advance(reload.Interval)
			assert.Equal(t, http.StatusUnauthorized, get(t, s, "/v1/objectid", "Authorization", "Bearer "+old).StatusCode, "the rotated-out token")
			assert.Equal(t, http.StatusOK, get(t, s, "/v1/objectid", "Authorization", "Bearer "+rotated).StatusCode, "the new token")
		})
	}
}

// TestCertificateReloadKeepsTheLastPair: a certificate and key that do
// not load (the certificate deleted; then a new certificate copied
// before its key, so that the pair does not match) leave the last pair
// that loaded in use, so that new handshakes go on, /readyz stays 200 and
// the failed reloads are counted; the new pair is in use once both files
// are copied.
func TestCertificateReloadKeepsTheLastPair(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 10, true)
	clk := clock.NewFake(start)
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clk, TLS: &TLSFiles{CertFile: certFile, KeyFile: keyFile}})
	url := serveTLS(t, s)
	serial := func() *big.Int {
		return call(t, client(ca, nil, false), url+"/livez", "").TLS.PeerCertificates[0].SerialNumber
	}
	require.Equal(t, big.NewInt(10), serial())

	require.NoError(t, os.Remove(certFile))
	clk.Advance(reload.Interval)
	assert.Equal(t, big.NewInt(10), serial(), "the last pair, with the certificate deleted")
	code, rep := getHealth(t, s)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ok", rep.Checks["certificate"])

	// A new certificate copied before its key: the pair does not match.
	newDir := t.TempDir()
	newCert, newKey := ca.Issue(t, newDir, "server", 12, true)
	b, err := os.ReadFile(newCert)
	require.NoError(t, err)
	testcert.WriteFile(t, certFile, b)
	clk.Advance(reload.Interval)
	assert.Equal(t, big.NewInt(10), serial(), "the last pair, with a certificate that does not match its key")
	m := body(t, get(t, s.metricsOnly(), "/metrics"))
	assertMetric(t, m, `idkit_config_reloads_total{files="certificate",result="failed"} 2`)
	assertMetric(t, m, `idkit_config_reload_successful{files="certificate"} 0`)

	b, err = os.ReadFile(newKey)
	require.NoError(t, err)
	testcert.WriteFile(t, keyFile, b)
	clk.Advance(reload.Interval)
	assert.Equal(t, big.NewInt(12), serial(), "the new pair, once its key is copied")
	m = body(t, get(t, s.metricsOnly(), "/metrics"))
	assertMetric(t, m, `idkit_config_reload_successful{files="certificate"} 1`)
}

// TestClientCAReloadFailsClosed: a CA taken out of the client CA bundle is
// no longer trusted within the reload interval, a block that does not
// parse is skipped while the others apply, and an emptied bundle trusts
// no client.
func TestClientCAReloadFailsClosed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca, other := testcert.NewCA(t), testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 10, true)
	caFile := filepath.Join(dir, "clients.pem")
	testcert.WriteFile(t, caFile, append(append([]byte{}, ca.PEM...), other.PEM...))
	clk := clock.NewFake(start)
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clk,
		TLS: &TLSFiles{CertFile: certFile, KeyFile: keyFile, ClientCAFile: caFile}})
	url := serveTLS(t, s)
	pair := func(ca *testcert.CA, name string, serial int64) *tls.Certificate {
		c, k := ca.Issue(t, dir, name, serial, false)
		p, err := tls.LoadX509KeyPair(c, k)
		require.NoError(t, err)
		return &p
	}
	app, stranger := pair(ca, "app", 20), pair(other, "stranger", 21)
	for _, cert := range []*tls.Certificate{app, stranger} {
		require.Equal(t, http.StatusOK, call(t, client(ca, cert, false), url+"/v1/objectid", "").StatusCode)
	}

	// other's CA goes; a block that does not parse is skipped.
	bad := []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
	testcert.WriteFile(t, caFile, append(append([]byte{}, ca.PEM...), bad...))
	clk.Advance(reload.Interval)
	assert.Equal(t, http.StatusOK, call(t, client(ca, app, false), url+"/v1/objectid", "").StatusCode)
	_, err := client(ca, stranger, false).Get(url + "/v1/objectid")
	assert.Error(t, err, "a certificate of the CA taken out")
	assertMetric(t, body(t, get(t, s, "/metrics")), `idkit_config_reload_skipped_parts{files="client_ca"} 1`)

	testcert.WriteFile(t, caFile, []byte("# none\n"))
	clk.Advance(reload.Interval)
	_, err = client(ca, app, false).Get(url + "/v1/objectid")
	assert.Error(t, err, "an emptied bundle trusts no client")
	code, rep := getHealth(t, s)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "nothing valid in the file, nothing in use", rep.Checks["client_ca"])
}
