package serve

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/idkit/idkit/serve/internal/reload"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/safefile"
)

// TLSFiles are the files of a server that speaks HTTPS. They are read
// again when one of them changes, appears or goes (looked at once a
// second at most), so that a renewed certificate takes effect
// without a restart or a dropped connection. A certificate and key that
// do not load (a file deleted, emptied, half copied, or a key that does
// not match) are logged and counted, and the last pair that loaded stays
// in use: a certificate is not a credential that a reload revokes, and
// dropping it would fail every new handshake while a copy is under way.
// A CA bundle fails closed instead, since taking a CA out is how a
// client is revoked: it is read block by block, a block that does not
// parse is skipped and logged, and a bundle with no certificate left
// trusts no client. Connections already open go on.
type TLSFiles struct {
	// CertFile and KeyFile are the PEM certificate chain and private key.
	CertFile, KeyFile string
	// ClientCAFile, when set, is a PEM bundle of the CAs whose client
	// certificates are accepted: every client must present one (mutual
	// TLS), which then authenticates it as the bearer tokens do.
	ClientCAFile string
}

// certificate serves the key pair of files, reloaded as they change; a
// pair that does not load leaves the last one in use.
type certificate struct {
	files TLSFiles
	w     *reload.Watched
	mu    sync.Mutex
	cert  *tls.Certificate // the last pair that loaded
}

func (c *certificate) load() ([]string, error) {
	cert, err := tls.LoadX509KeyPair(c.files.CertFile, c.files.KeyFile)
	if err != nil {
		return nil, reload.KeptError{Err: err}
	}
	c.mu.Lock()
	c.cert = &cert
	c.mu.Unlock()
	return nil, nil
}

// get returns the certificate in use.
func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.w.Refresh()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cert, nil
}

// clientCAs is the pool of CAs whose client certificates are accepted,
// reloaded as the bundle changes. config is the TLS configuration that
// requires them, rebuilt at each reload.
type clientCAs struct {
	path   string
	base   *tls.Config
	w      *reload.Watched
	config atomic.Pointer[tls.Config]
}

// load reads the bundle block by block; blocks that do not parse are
// skipped. With none left, the pool is empty and no client is accepted.
func (c *clientCAs) load() (skipped []string, err error) {
	pool := x509.NewCertPool()
	b, err := safefile.ReadFile(c.path) // no link, no other user's file
	n := 0
	if err == nil {
		nl := []byte("\n")
		rest := b
		for {
			at := 1 + bytes.Count(b[:len(b)-len(rest)], nl) // the line the block begins on
			if i := bytes.Index(rest, []byte("-----BEGIN")); i >= 0 {
				at += bytes.Count(rest[:i], nl)
			}
			var block *pem.Block
			if block, rest = pem.Decode(rest); block == nil {
				break
			}
			if block.Type != "CERTIFICATE" {
				skipped = append(skipped, fmt.Sprintf("%s line %d: a PEM block of type %q, want CERTIFICATE", c.path, at, block.Type))
				continue
			}
			cert, perr := x509.ParseCertificate(block.Bytes)
			if perr != nil {
				skipped = append(skipped, fmt.Sprintf("%s line %d: %v", c.path, at, perr))
				continue
			}
			pool.AddCert(cert)
			n++
		}
		if n == 0 {
			err = fmt.Errorf("%s holds no PEM certificate: %w", c.path, reload.ErrNothingValid)
		}
	}
	cfg := c.base.Clone()
	cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	if err != nil {
		cfg.ClientCAs = x509.NewCertPool() // trusts no client
	}
	c.config.Store(cfg)
	return skipped, err
}

// forClient is the server's GetConfigForClient: the configuration with
// the CAs of the bundle's last load.
func (c *clientCAs) forClient(*tls.ClientHelloInfo) (*tls.Config, error) {
	c.w.Refresh()
	return c.config.Load(), nil
}

// aeadSuites are the TLS 1.2 cipher suites offered: ECDHE with AES-GCM or
// ChaCha20-Poly1305 only, no CBC. (TLS 1.3's suites are all AEAD and not
// configurable.)
var aeadSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// serverTLS holds the server's TLS configurations: the main port's, and
// the probe listener's, which asks for no client certificate, so that
// /readyz can say why the main port refuses a client.
type serverTLS struct {
	main, probes *tls.Config
	watched      []*reload.Watched
}

// tlsConfig returns the server's TLS configuration for files: TLS 1.2 at
// least with AEAD suites only, the certificate reloaded as it changes,
// and client certificates required when a client CA is given.
func tlsConfig(files TLSFiles, clk clock.Clock, logger *slog.Logger) (*serverTLS, error) {
	if files.CertFile == "" || files.KeyFile == "" {
		return nil, fmt.Errorf("%w: Options.TLS needs CertFile and KeyFile", ErrInvalid)
	}
	c := &certificate{files: files}
	w, err := reload.NewWatched("certificate", []string{files.CertFile, files.KeyFile}, clk, logger, c.load)
	if err != nil {
		return nil, fmt.Errorf("%w: Options.TLS: %w", ErrInvalid, err)
	}
	c.w = w
	st := &serverTLS{watched: []*reload.Watched{w}}
	st.main = &tls.Config{
		MinVersion:     tls.VersionTLS12,
		CipherSuites:   aeadSuites,
		GetCertificate: c.get,
		NextProtos:     []string{"h2", "http/1.1"},
	}
	st.probes = st.main.Clone()
	if files.ClientCAFile != "" {
		ca := &clientCAs{path: files.ClientCAFile, base: st.main.Clone()}
		w, err := reload.NewWatched("client_ca", []string{files.ClientCAFile}, clk, logger, ca.load)
		if err != nil {
			return nil, fmt.Errorf("%w: Options.TLS.ClientCAFile: %w", ErrInvalid, err)
		}
		ca.w = w
		st.watched = append(st.watched, w)
		// Every handshake takes the configuration of the bundle's last
		// load; this one requires a client certificate too, for a
		// program that reads it.
		st.main.ClientCAs, st.main.ClientAuth = ca.config.Load().ClientCAs, tls.RequireAndVerifyClientCert
		st.main.GetConfigForClient = ca.forClient
	}
	return st, nil
}

// tokens are the bearer tokens a client may present, from a file with one
// token a line, optionally after the client's name and a space ("alice
// 8f0c..."); blank lines and lines starting with # are skipped. Only their
// SHA-256 sums are kept, and a presented token is compared with every one
// in constant time. A line that is not a valid token is skipped and
// logged, naming its number; a file that is deleted, emptied or
// unreadable leaves no token valid.
type tokens struct {
	path string
	w    *reload.Watched
	// set is the file's tokens as last loaded, replaced whole on a reload
	// so that a request reads it without a lock.
	set atomic.Pointer[tokenSet]
}

// tokenSet holds the sums of the tokens, in the file's order, and the
// clients they name ("token NAME", as authenticate returns them).
type tokenSet struct {
	sums  [][sha256.Size]byte
	names []string
}

// newTokens reads the token file at path.
func newTokens(path string, clk clock.Clock, logger *slog.Logger) (*tokens, error) {
	t := &tokens{path: path}
	w, err := reload.NewWatched("tokens", []string{path}, clk, logger, t.load)
	if err != nil {
		return nil, fmt.Errorf("%w: Options.TokenFile: %w", ErrInvalid, err)
	}
	t.w = w
	return t, nil
}

func (t *tokens) load() (skipped []string, err error) {
	var sums [][sha256.Size]byte
	var names []string
	defer func() { t.set.Store(&tokenSet{sums: sums, names: names}) }()
	b, err := safefile.ReadFile(t.path) // no link, no other user's file
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, token, ok := strings.Cut(line, " ")
		if !ok {
			name, token = fmt.Sprintf("token on line %d", n), line
		}
		token = strings.TrimSpace(token)
		if len(token) < 16 {
			skipped = append(skipped, fmt.Sprintf("%s line %d: a token of %d characters, want 16 or more", t.path, n, len(token)))
			continue
		}
		sums = append(sums, sha256.Sum256([]byte(token)))
		names = append(names, "token "+name)
	}
	if err := sc.Err(); err != nil {
		sums, names = nil, nil
		return skipped, fmt.Errorf("%s: %w", t.path, err)
	}
	if len(sums) == 0 {
		return skipped, fmt.Errorf("%s holds no token: %w", t.path, reload.ErrNothingValid)
	}
	return skipped, nil
}

// client returns the client whose token r presents ("token NAME"), or ""
// if it presents none that is valid.
func (t *tokens) client(r *http.Request) string {
	t.w.Refresh()
	auth := r.Header.Get("Authorization")
	const scheme = "bearer " // compared without case, as RFC 7235 has it
	if len(auth) <= len(scheme) || !strings.EqualFold(auth[:len(scheme)], scheme) {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(auth[len(scheme):])))
	set := t.set.Load() // stored by load, which newTokens runs first
	found := -1
	for i := range set.sums {
		if subtle.ConstantTimeCompare(sum[:], set.sums[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return ""
	}
	return set.names[found]
}

// errUnauthorized is the answer to a request without a valid credential.
var errUnauthorized = errors.New("a valid bearer token is required: Authorization: Bearer TOKEN")

// authenticate returns the client a request comes from: the name of its
// token, the subject of its verified client certificate, or, with neither
// configured, its remote host (see remoteClient). ok is false when tokens
// are required and the request presents no valid one (and no verified
// certificate).
func (s *Server) authenticate(r *http.Request) (client string, ok bool) {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		return "cert " + r.TLS.VerifiedChains[0][0].Subject.String(), true
	}
	if s.tokens != nil {
		if client := s.tokens.client(r); client != "" {
			return client, true
		}
		return "", false
	}
	return "addr " + s.remoteClient(r), true
}

// remoteClient returns the address a request comes from: its remote
// host, or, when that is one of Options.TrustedProxies, the address
// X-Forwarded-For names before the trusted proxies. The header is read
// from the right, as each proxy appends the address it was called from:
// the first address that is not a trusted proxy is the client, and an
// entry that is not an address ends the search at the proxy that added
// it. Only a trusted proxy's header is believed, so that a client cannot
// pass for another by sending one.
func (s *Server) remoteClient(r *http.Request) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		host := r.RemoteAddr
		if i := strings.LastIndexByte(host, ':'); i >= 0 {
			host = host[:i]
		}
		return host
	}
	addr := ap.Addr().Unmap()
	if !s.trusted(addr) {
		return addr.String()
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		list := hops[i]
		for list != "" {
			var hop string
			if j := strings.LastIndexByte(list, ','); j >= 0 {
				list, hop = list[:j], list[j+1:]
			} else {
				list, hop = "", list
			}
			hop = strings.TrimSpace(hop)
			if hop == "" {
				continue
			}
			a, ok := parseHop(hop)
			if !ok {
				return addr.String()
			}
			addr = a
			if !s.trusted(addr) {
				return addr.String()
			}
		}
	}
	return addr.String()
}

// parseHop reads one entry of X-Forwarded-For: an address, with or
// without a port ("192.0.2.1", "192.0.2.1:4711", "[2001:db8::1]:4711").
func parseHop(hop string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(hop); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(hop); err == nil {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// trusted reports whether addr is one of Options.TrustedProxies.
func (s *Server) trusted(addr netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// writeUnauthorized answers 401 with the challenge a client needs.
func writeUnauthorized(w http.ResponseWriter) int {
	w.Header().Set("WWW-Authenticate", `Bearer realm="idkit"`)
	return writeError(w, http.StatusUnauthorized, errUnauthorized.Error())
}
