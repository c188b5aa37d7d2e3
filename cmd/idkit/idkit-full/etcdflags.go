package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// etcdFlags reads the flags that say how to reach etcd, each falling back
// on its environment variable.
type etcdFlags struct{ *cli.EtcdFlags }

// setting is the value of one flag or of its environment variable.
type setting struct {
	value  string
	source string // "--etcd-cacert" or "$IDKIT_ETCD_CACERT", for messages
}

// get returns the flag called name if the command line sets it, or else
// the variable env.
func (f etcdFlags) get(name string, v *string, env string) setting {
	if cli.IsSet(f.FS, name) {
		return setting{*v, "--" + name}
	}
	if s := os.Getenv(env); s != "" {
		return setting{s, "$" + env}
	}
	return setting{"", "--" + name}
}

// etcdConfig is a client configuration and what the messages about it
// name.
type etcdConfig struct {
	clientv3.Config
	endpoints        string
	cacert, certPair setting // the CA file, and the certificate's
	user             string
}

// config returns the client configuration of endpoints (comma-separated)
// that the flags and the environment give.
func (f etcdFlags) config(endpoints string) (*etcdConfig, error) {
	var eps []string
	for _, ep := range strings.Split(endpoints, ",") {
		if ep = strings.TrimSpace(ep); ep != "" {
			eps = append(eps, ep)
		}
	}
	if len(eps) == 0 {
		return nil, cli.Usagef("--etcd %q names no endpoint, want host:port[,host:port...]", endpoints)
	}
	cfg := &etcdConfig{
		Config: clientv3.Config{
			Endpoints: eps,
			Logger:    quietLogger(),
			// A connection to a member that a partition or a dead host
			// took away answers nothing and reports no error: pings find
			// it within 7 s, under a claim's 10 s TTL, so that requests
			// and renewals move to the members that answer. 5 s is the
			// shortest interval etcd's servers accept by default
			// (--grpc-keepalive-min-time).
			DialKeepAliveTime:    5 * time.Second,
			DialKeepAliveTimeout: 2 * time.Second,
			DialOptions: []grpc.DialOption{
				// Reconnect to a member within 2 s of its return, not
				// after gRPC's default backoff of up to 2 minutes.
				grpc.WithConnectParams(grpc.ConnectParams{
					Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 2 * time.Second},
					MinConnectTimeout: 2 * time.Second,
				}),
			},
		},
		endpoints: endpoints,
	}
	var err error
	if cfg.DialTimeout, err = f.timeout(); err != nil {
		return nil, err
	}
	if cfg.TLS, err = f.tls(cfg); err != nil {
		return nil, err
	}
	for _, ep := range eps {
		if cfg.TLS == nil && (strings.HasPrefix(ep, "https://") || strings.HasPrefix(ep, "unixs://")) {
			cfg.TLS = &tls.Config{MinVersion: tls.VersionTLS12} // the system's CAs
		}
	}
	if cfg.TLS != nil {
		for _, ep := range eps {
			if strings.HasPrefix(ep, "http://") || strings.HasPrefix(ep, "unix://") {
				return nil, cli.Usagef("--etcd %s is plain, but TLS is asked for (an https:// endpoint, --etcd-cacert or --etcd-cert): want https://", ep)
			}
		}
	}
	if err := f.auth(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (f etcdFlags) timeout() (time.Duration, error) {
	d, source := *f.DialTimeout, "--etcd-dial-timeout"
	if s := os.Getenv(cli.EnvEtcdDialTimeout); s != "" && !cli.IsSet(f.FS, "etcd-dial-timeout") {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, cli.Usagef("$%s: %v", cli.EnvEtcdDialTimeout, err)
		}
		source = "$" + cli.EnvEtcdDialTimeout
	}
	if d <= 0 {
		return 0, cli.Usagef("%s %v: want a positive duration such as 5s", source, d)
	}
	return d, nil
}

// tls returns the TLS configuration that the flags ask for, or nil for
// none.
func (f etcdFlags) tls(cfg *etcdConfig) (*tls.Config, error) {
	cfg.cacert = f.get("etcd-cacert", f.CACert, cli.EnvEtcdCACert)
	cert := f.get("etcd-cert", f.Cert, cli.EnvEtcdCert)
	key := f.get("etcd-key", f.Key, cli.EnvEtcdKey)
	cfg.certPair = setting{cert.value, cert.source + " and " + key.source}
	switch {
	case cert.value != "" && key.value == "":
		return nil, cli.Usagef("%s without --etcd-key: give the certificate's private key too", cert.source)
	case key.value != "" && cert.value == "":
		return nil, cli.Usagef("%s without --etcd-cert: give the certificate too", key.source)
	case cfg.cacert.value == "" && cert.value == "":
		return nil, nil // plain, or https:// with the system's CAs
	}
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.cacert.value != "" {
		pem, err := os.ReadFile(cfg.cacert.value)
		if err != nil {
			return nil, fmt.Errorf("etcd: %s: %w", cfg.cacert.source, err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd: %s %s holds no PEM certificate", cfg.cacert.source, cfg.cacert.value)
		}
	}
	if cert.value != "" {
		pair, err := tls.LoadX509KeyPair(cert.value, key.value)
		if err != nil {
			return nil, fmt.Errorf("etcd: %s: %w", cfg.certPair.source, err)
		}
		t.Certificates = []tls.Certificate{pair}
	}
	return t, nil
}

// auth sets the user and password that the flags give.
func (f etcdFlags) auth(cfg *etcdConfig) error {
	user := f.get("etcd-user", f.User, cli.EnvEtcdUser)
	var password setting
	if cli.IsSet(f.FS, "etcd-password-file") {
		b, err := os.ReadFile(*f.PasswordFile)
		if err != nil {
			return fmt.Errorf("etcd: --etcd-password-file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		password = setting{strings.TrimSuffix(line, "\r"), "--etcd-password-file " + *f.PasswordFile}
		if password.value == "" {
			return cli.Usagef("%s: the first line is empty, want the password", password.source)
		}
	} else if s := os.Getenv(cli.EnvEtcdPassword); s != "" {
		password = setting{s, "$" + cli.EnvEtcdPassword}
	}
	switch {
	case user.value == "" && password.value == "":
		return nil
	case user.value == "":
		return cli.Usagef("a password (%s) but no user: give --etcd-user NAME", password.source)
	case strings.Contains(user.value, ":"):
		// etcdctl reads "--user name:password"; this name may hold one,
		// which no message may show.
		return cli.Usagef("%s holds a colon: want the user name only, with the password in --etcd-password-file or $%s", user.source, cli.EnvEtcdPassword)
	case password.value == "":
		return cli.Usagef("%s %s has no password: give --etcd-password-file FILE or $%s", user.source, user.value, cli.EnvEtcdPassword)
	}
	cfg.Username, cfg.Password, cfg.user = user.value, password.value, user.value
	return nil
}

// dialEtcd returns a client of endpoints as conn says, closed when the
// command ends, once etcd answered it within the dial timeout. etcd's
// client tries a connection that fails (a TLS handshake, say) again and
// again, and a request that waits for it ends at its deadline with no
// word of why: so the first request has the dial timeout for its
// deadline, and the client's connections tell what went wrong, for an
// error that names the problem.
func dialEtcd(c *cli.Console, endpoints string, conn etcdFlags) (*clientv3.Client, error) {
	cfg, err := conn.config(endpoints)
	if err != nil {
		return nil, err
	}
	watch := &connWatch{}
	cfg.DialOptions = append(cfg.DialOptions, grpc.WithTransportCredentials(watch.creds(cfg.TLS)))
	// With a user, New authenticates within the dial timeout: its answer
	// is the first.
	client, err := clientv3.New(cfg.Config)
	if err != nil {
		return nil, cfg.explain(err, watch.err())
	}
	if cfg.Username == "" {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.DialTimeout)
		// A key that no one needs to read, as etcdctl's health check
		// reads: a refusal is an answer too.
		_, err = client.Get(ctx, "health", clientv3.WithSerializable(), clientv3.WithCountOnly())
		cancel()
		if err != nil && !errors.Is(err, rpctypes.ErrPermissionDenied) {
			err = cfg.explain(err, watch.err())
			client.Close()
			return nil, err
		}
	}
	c.AtExit(func() { client.Close() })
	return client, nil
}

// explain returns err, the error of the first request to etcd, as one
// line that names the problem and what to check. connErr is the last
// error of a connection to etcd, if any.
func (cfg *etcdConfig) explain(err, connErr error) error {
	switch {
	case errors.Is(err, rpctypes.ErrAuthFailed):
		return fmt.Errorf("etcd: authentication failed for user %s (check --etcd-user and the password)", cfg.user)
	case errors.Is(err, rpctypes.ErrUserEmpty), errors.Is(err, rpctypes.ErrInvalidAuthToken):
		return errors.New("etcd: authentication required (give --etcd-user, and --etcd-password-file or $" + cli.EnvEtcdPassword + ")")
	}
	var (
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		notTLS    tls.RecordHeaderError
		remote    *net.OpError
	)
	switch {
	case connErr == nil:
	case errors.Is(connErr, errNoClientCert):
		return errors.New("etcd: TLS: the server requires a client certificate (give --etcd-cert and --etcd-key)")
	case errors.As(connErr, &unknownCA):
		return fmt.Errorf("etcd: TLS: certificate signed by unknown authority (check %s)", cfg.cacert.source)
	case errors.As(connErr, &hostname):
		return fmt.Errorf("etcd: TLS: %v (check the endpoints)", hostname.Error())
	case errors.As(connErr, &invalid):
		return fmt.Errorf("etcd: TLS: etcd's %v", invalid.Error())
	case errors.As(connErr, &notTLS):
		return fmt.Errorf("etcd: TLS: %s does not speak TLS (want http:// endpoints, without --etcd-cacert and --etcd-cert)", cfg.endpoints)
	case errors.As(connErr, &remote) && remote.Op == "remote error":
		// The server's TLS alert: after the handshake in TLS 1.3, when
		// the client's first read meets it.
		switch alert := remote.Err.Error(); alert {
		case "tls: certificate required":
			return errors.New("etcd: TLS: the server requires a client certificate (give --etcd-cert and --etcd-key)")
		case "tls: bad certificate":
			if cfg.certPair.value == "" { // TLS 1.2's refusal of a client without one
				return errors.New("etcd: TLS: the server requires a client certificate (give --etcd-cert and --etcd-key)")
			}
			fallthrough
		case "tls: unknown certificate authority", "tls: unsupported certificate",
			"tls: revoked certificate", "tls: expired certificate", "tls: unknown certificate":
			return fmt.Errorf("etcd: TLS: the server refused the client certificate: %s (check %s)",
				strings.TrimPrefix(alert, "tls: "), cfg.certPair.source)
		default:
			return fmt.Errorf("etcd: TLS: the server refused the connection: %s", alert)
		}
	}
	switch code := status.Code(err); {
	case code == codes.DeadlineExceeded, code == codes.Unavailable, errors.Is(err, context.DeadlineExceeded):
		why := "no answer"
		if connErr != nil {
			why = cli.OneLine(connErr.Error())
			if cfg.TLS == nil && errors.Is(connErr, io.EOF) {
				why += "; does it want TLS (https:// endpoints, --etcd-cacert)?"
			}
		}
		return fmt.Errorf("etcd %s: %s within %v (--etcd-dial-timeout)", cfg.endpoints, why, cfg.DialTimeout)
	}
	return fmt.Errorf("etcd %s: %w", cfg.endpoints, err)
}

// connWatch keeps the error of the connections to etcd that says most
// of why they fail: of a TLS handshake, or of the first read or write on
// a connection, where the server's refusal of the client's certificate
// shows in TLS 1.3.
type connWatch struct {
	mu   sync.Mutex
	last error
}

// errNoClientCert is a connection's error when the server asked for a
// client certificate, the client had none, and the server hung up.
var errNoClientCert = errors.New("remote error: tls: certificate required")

func (w *connWatch) record(err error) {
	if errors.Is(err, net.ErrClosed) {
		return // closed by the client, which knows why
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.last == nil || telling(err) || !telling(w.last) {
		w.last = err
	}
}

func (w *connWatch) err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// telling reports whether err says why TLS failed: a certificate that
// does not verify, or the server's alert.
func telling(err error) bool {
	var (
		verify *tls.CertificateVerificationError
		remote *net.OpError
		notTLS tls.RecordHeaderError
	)
	return errors.Is(err, errNoClientCert) || errors.As(err, &verify) || errors.As(err, &notTLS) ||
		errors.As(err, &remote) && remote.Op == "remote error"
}

// creds returns the transport credentials of tlsCfg (insecure ones for
// nil) that report to w.
func (w *connWatch) creds(tlsCfg *tls.Config) credentials.TransportCredentials {
	if tlsCfg == nil {
		return watchedCreds{TransportCredentials: insecure.NewCredentials(), w: w}
	}
	return watchedCreds{TransportCredentials: credentials.NewTLS(tlsCfg), tls: tlsCfg, w: w}
}

type watchedCreds struct {
	credentials.TransportCredentials
	tls *tls.Config // nil for insecure credentials
	w   *connWatch
}

func (c watchedCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	wc := &watchedConn{w: c.w, firstRead: make(chan struct{})}
	inner := c.TransportCredentials
	if c.tls != nil {
		// Credentials of this connection's own, which tell it whether
		// the server asked for a client certificate that the client
		// lacks.
		cfg := c.tls.Clone()
		certs := cfg.Certificates
		cfg.Certificates = nil
		cfg.GetClientCertificate = func(req *tls.CertificateRequestInfo) (*tls.Certificate, error) {
			for i := range certs {
				if req.SupportsCertificate(&certs[i]) == nil {
					return &certs[i], nil
				}
			}
			wc.noCert.Store(true)
			return &tls.Certificate{}, nil // none: the server decides
		}
		inner = credentials.NewTLS(cfg)
	}
	conn, info, err := inner.ClientHandshake(ctx, authority, raw)
	if err != nil {
		wc.failed(err)
		return nil, nil, err
	}
	wc.Conn = conn
	return wc, info, nil
}

func (c watchedCreds) Clone() credentials.TransportCredentials {
	c.TransportCredentials = c.TransportCredentials.Clone()
	return c
}

// readGrace is how long a write that failed before the server said a word
// waits for the first read, which may bring the server's reason (a TLS
// alert), before the client closes the connection.
const readGrace = 250 * time.Millisecond

// watchedConn reports its error to w if it fails before the server sent
// a byte.
type watchedConn struct {
	net.Conn
	w         *connWatch
	noCert    atomic.Bool   // the server asked for a client certificate, and there was none
	answered  atomic.Bool   // a read returned bytes
	firstRead chan struct{} // closed when the first read returns
	once      sync.Once
}

func (c *watchedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.answered.Store(true)
	} else if err != nil && !c.answered.Load() {
		c.failed(err)
	}
	c.once.Do(func() { close(c.firstRead) })
	return n, err
}

func (c *watchedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil && !c.answered.Load() {
		t := time.NewTimer(readGrace)
		select {
		case <-c.firstRead:
		case <-t.C:
		}
		t.Stop()
		c.failed(err)
	}
	return n, err
}

func (c *watchedConn) failed(err error) {
	if c.noCert.Load() && !telling(err) {
		err = errNoClientCert
	}
	c.w.record(err)
}
