package serve

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/idkit/idkit/clock"
)

// TLSFiles are the files of a server that speaks HTTPS. The certificate
// and key are read again when either file changes (looked at once a
// ReloadInterval at most), so that a renewed certificate takes effect
// without a restart or a dropped connection; a pair that does not load
// leaves the old one in use, and is logged.
type TLSFiles struct {
	// CertFile and KeyFile are the PEM certificate chain and private key.
	CertFile, KeyFile string
	// ClientCAFile, when set, is a PEM bundle of the CAs whose client
	// certificates are accepted: every client must present one (mutual
	// TLS), which then authenticates it as the bearer tokens do.
	ClientCAFile string
}

// reloadInterval is how often, at most, the server looks at its TLS and
// token files for changes, on its clock.
const reloadInterval = time.Second

// watched is a file read again when its size or modification time changes.
type watched struct {
	path    string
	clk     clock.Clock
	logger  *slog.Logger
	load    func() error // reads the file; on error the old contents stay
	mu      sync.Mutex
	checked time.Time // when the file was last looked at
	mod     time.Time
	size    int64
}

// refresh reloads the file if it changed, looking at most once a
// reloadInterval.
func (w *watched) refresh() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clk.Now()
	if !w.checked.IsZero() && now.Sub(w.checked) < reloadInterval && now.After(w.checked) {
		return
	}
	w.checked = now
	fi, err := os.Stat(w.path)
	if err != nil || (fi.ModTime().Equal(w.mod) && fi.Size() == w.size) {
		return
	}
	if err := w.load(); err != nil {
		if w.logger != nil {
			w.logger.Warn("serve: reload failed; the previous contents stay in use", "file", w.path, "err", err)
		}
		return
	}
	w.mod, w.size = fi.ModTime(), fi.Size()
}

// certificate serves the key pair of files, reloaded as they change.
type certificate struct {
	files   TLSFiles
	watched []*watched
	mu      sync.Mutex
	cert    *tls.Certificate
}

func (c *certificate) load() error {
	cert, err := tls.LoadX509KeyPair(c.files.CertFile, c.files.KeyFile)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.cert = &cert
	c.mu.Unlock()
	return nil
}

func (c *certificate) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	for _, w := range c.watched {
		w.refresh()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cert, nil
}

// tlsConfig returns the server's TLS configuration for files: TLS 1.2 at
// least, the certificate reloaded as it changes, and client certificates
// required when a client CA is given.
func tlsConfig(files TLSFiles, clk clock.Clock, logger *slog.Logger) (*tls.Config, error) {
	if files.CertFile == "" || files.KeyFile == "" {
		return nil, fmt.Errorf("%w: Options.TLS needs CertFile and KeyFile", ErrInvalid)
	}
	c := &certificate{files: files}
	if err := c.load(); err != nil {
		return nil, fmt.Errorf("%w: Options.TLS: %w", ErrInvalid, err)
	}
	for _, path := range []string{files.CertFile, files.KeyFile} {
		w := &watched{path: path, clk: clk, logger: logger, load: c.load}
		if fi, err := os.Stat(path); err == nil {
			w.mod, w.size, w.checked = fi.ModTime(), fi.Size(), clk.Now()
		}
		c.watched = append(c.watched, w)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.get}
	if files.ClientCAFile != "" {
		pem, err := os.ReadFile(files.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: Options.TLS.ClientCAFile: %w", ErrInvalid, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: Options.TLS.ClientCAFile %s holds no PEM certificate", ErrInvalid, files.ClientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// tokens are the bearer tokens a client may present, from a file with one
// token a line, optionally after the client's name and a space ("alice
// 8f0c..."); blank lines and lines starting with # are skipped. Only their
// SHA-256 sums are kept, and a presented token is compared with every one
// in constant time.
type tokens struct {
	w  *watched
	mu sync.Mutex
	// sums and names of the tokens, in the file's order.
	sums  [][sha256.Size]byte
	names []string
}

// newTokens reads the token file at path.
func newTokens(path string, clk clock.Clock, logger *slog.Logger) (*tokens, error) {
	t := &tokens{}
	t.w = &watched{path: path, clk: clk, logger: logger, load: t.load}
	if err := t.load(); err != nil {
		return nil, fmt.Errorf("%w: Options.TokenFile: %w", ErrInvalid, err)
	}
	if fi, err := os.Stat(path); err == nil {
		t.w.mod, t.w.size, t.w.checked = fi.ModTime(), fi.Size(), clk.Now()
	}
	return t, nil
}

func (t *tokens) load() error {
	b, err := os.ReadFile(t.w.path)
	if err != nil {
		return err
	}
	var sums [][sha256.Size]byte
	var names []string
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
			return fmt.Errorf("%s line %d: a token of %d characters, want 16 or more", t.w.path, n, len(token))
		}
		sums = append(sums, sha256.Sum256([]byte(token)))
		names = append(names, name)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(sums) == 0 {
		return fmt.Errorf("%s holds no token", t.w.path)
	}
	t.mu.Lock()
	t.sums, t.names = sums, names
	t.mu.Unlock()
	return nil
}

// client returns the name of the client whose token r presents, or "" if
// it presents none that is valid.
func (t *tokens) client(r *http.Request) string {
	t.w.refresh()
	auth := r.Header.Get("Authorization")
	const scheme = "bearer " // compared without case, as RFC 7235 has it
	if len(auth) <= len(scheme) || !strings.EqualFold(auth[:len(scheme)], scheme) {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(auth[len(scheme):])))
	t.mu.Lock()
	defer t.mu.Unlock()
	found := -1
	for i := range t.sums {
		if subtle.ConstantTimeCompare(sum[:], t.sums[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return ""
	}
	return t.names[found]
}

// errUnauthorized is the answer to a request without a valid credential.
var errUnauthorized = errors.New("a valid bearer token is required: Authorization: Bearer TOKEN")

// authenticate returns the client a request comes from: the name of its
// token, the subject of its verified client certificate, or, with neither
// configured, its remote host. ok is false when tokens are required and
// the request presents no valid one (and no verified certificate).
func (s *Server) authenticate(r *http.Request) (client string, ok bool) {
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
		return "cert " + r.TLS.VerifiedChains[0][0].Subject.String(), true
	}
	if s.tokens != nil {
		if name := s.tokens.client(r); name != "" {
			return "token " + name, true
		}
		return "", false
	}
	host := r.RemoteAddr
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	return "addr " + host, true
}

// writeUnauthorized answers 401 with the challenge a client needs.
func writeUnauthorized(w http.ResponseWriter) int {
	w.Header().Set("WWW-Authenticate", `Bearer realm="idkit"`)
	return writeError(w, http.StatusUnauthorized, errUnauthorized.Error())
}
