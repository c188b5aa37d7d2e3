package serve

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit/serve/internal/tlslog"

	"github.com/idkit/idkit/serve/internal/connlimit"
	"github.com/idkit/idkit/serve/internal/ratelimit"
	"github.com/idkit/idkit/serve/internal/reload"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

// Store is what the server keeps in a launch log: the high-water marks of
// traceid and snowflake and decimalid's generator ids. launchlog.Log (a
// bbolt file) and fleet.Log (etcd) implement it, and Launches and
// segment.BlockStore as well.
type Store interface {
	store.HighWater
	store.Generators
}

// Launches reads the record of a launch from the launch log, for
// inspecting a DecimalId. launchlog.Log and fleet.Log implement it.
type Launches interface {
	Get(ctx context.Context, id int) (store.Launch, error)
}

// Options configures a Server. A nil scheme option means that scheme is not
// served; at least one must be set.
type Options struct {
	// TraceID, Snowflake, DecimalID and ObjectID are the options of the
	// generators to serve. Where a field is zero, New fills it in: Clock
	// from Clock, Store (or decimalid's Source) from Store, Logger from
	// Logger. A traceid or snowflake generator on a Claim keeps its marks
	// in the claim instead.
	TraceID   *traceid.Options
	Snowflake *snowflake.Options
	DecimalID *decimalid.Options
	ObjectID  *objectid.Options
	// Segments are segment allocators to serve, one per tag, at
	// /v1/segment/{tag}. Where a Store is nil, New uses Blocks, counting
	// its errors; a nil Clock means Clock.
	Segments []segment.Options

	// Store keeps high-water marks and generator ids; see Store. The
	// server counts its errors (idkit_store_errors_total) and reads it for
	// /healthz; while its last write failed, /healthz fails and writes the
	// mark "serve/healthz" at each probe, ready again once one lands. Nil
	// means none: traceid and snowflake then only skip the
	// tick they start in, which is safe only while the clock is not
	// stepped back between runs, and decimalid needs a Source of its own.
	Store Store
	// Blocks reserves the blocks of the Segments that have no Store of
	// their own: usually the same launch log as Store, or a
	// segment/pgstore, mysqlstore or redisstore Store. Nil means each
	// segment needs its own.
	Blocks segment.BlockStore
	// Launches, when set, adds the launch's record to the inspection of a
	// DecimalId: usually the same launch log as Store. Nil means the
	// inspection shows the ID's fields only.
	Launches Launches

	// MaxN is the most IDs one request may ask for, 1 to 1,000,000. Zero
	// means 10,000.
	MaxN int
	// Clock is the source of time for the generators, for inspecting
	// TraceIds (whose second wraps) and for how long a store probe is
	// trusted. Nil means the system clock.
	Clock clock.Clock
	// Logger receives the generators' records of clock anomalies and one
	// record per failed request with status 503. Nil means none.
	Logger *slog.Logger

	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout set the
	// http.Server's timeouts for Serve. Zero means 5 s, 10 s, 30 s and
	// 120 s; the write timeout covers a request that waits for the next
	// second. A connection's deadlines are kept in memory and enforced by
	// a sweep of the listener's connections every 50 ms, so a timeout
	// ends a connection no sooner than it falls and at most 50 ms later,
	// and a request moves no runtime timer.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers. Zero means 8 KiB.
	MaxHeaderBytes int
	// ProbeInterval is how long /healthz trusts the last store probe, and
	// ProbeTimeout how long it waits for one. Zero means 1 s and 2 s.
	ProbeInterval, ProbeTimeout time.Duration

	// TLS, when set, makes Serve speak HTTPS only, with the certificate
	// reloaded as its files change and, with a client CA, mutual TLS; see
	// TLSFiles.
	TLS *TLSFiles
	// TokenFile, when set, is a file of bearer tokens, one a line (see
	// the package documentation), read again when it changes, once a
	// second at most: every request to /v1/ must present one
	// (Authorization: Bearer TOKEN), or a verified client certificate, or
	// get 401. /livez, /readyz, /healthz and /metrics need none. New
	// refuses a file with a bad line or no token; a reload skips a bad
	// line, logging its number, and a file deleted, emptied or unreadable
	// leaves no token valid and /readyz 503.
	TokenFile string
	// SeparateMetrics takes /metrics off the server's own routes, for a
	// program that serves the metrics on a listener of its own
	// (ServeMetrics, or MetricsHandler).
	SeparateMetrics bool
	// ProbeMaxConns and MetricsMaxConns are the connection caps of
	// ServeProbes and ServeMetrics, which are outside Limits.MaxConns.
	// Zero means DefaultProbeMaxConns (16) and DefaultMetricsMaxConns
	// (64).
	ProbeMaxConns, MetricsMaxConns int
	// ProbeMaxConnsPerClient is the most connections one client address
	// may hold on ServeProbes, busy or idle, 1 to ProbeMaxConns: at it, a
	// new connection of the address closes the address's connection idle
	// longest, or is closed at once when none is idle, so that one
	// address cannot take the probe listener from the orchestrator. Zero
	// means DefaultProbeMaxConnsPerClient (4, or ProbeMaxConns if lower);
	// negative means no share.
	ProbeMaxConnsPerClient int
	// Limits bound what one client, and all clients together, may take;
	// the zero value means the defaults. See Limits.
	Limits Limits
	// TrustedProxies are the proxies (load balancers, ingress
	// controllers) whose X-Forwarded-For header names the client of a
	// request that presents neither a token nor a client certificate. A
	// request from any other address is its remote host's, whatever its
	// headers say. Nil means none: behind a proxy, every such client is
	// the proxy's address and shares one set of limits.
	TrustedProxies []netip.Prefix
	// ProxyProtocol are the proxies (TCP load balancers such as HAProxy
	// with send-proxy-v2) whose connections to Serve and ServeProbes may
	// begin with a PROXY protocol header, version 1 or 2, that names the
	// client: such a connection is that client's, for its connection
	// share, its limits, X-Forwarded-For and the logs, as if the client
	// had connected itself. A connection from one of them without a
	// header is the proxy's own (a health check); a header from any
	// other address is not read as one, and the request fails. Nil means
	// none: behind a proxy that passes TLS through, every client is the
	// proxy's address.
	ProxyProtocol []netip.Prefix
	// Claims, when set, gives traceid and snowflake their nodes: New
	// claims one for each (their Options.Claim must then be nil and Node
	// 0), and once a claim is lost the server claims again in the
	// background and goes on with a new generator, ready again without a
	// restart. Meanwhile the scheme answers 503 and /readyz fails. The
	// metrics idkit_node_claims_lost_total and
	// idkit_node_claims_reclaimed_total count each loss and each node
	// claimed again, so that a scrape sees a loss however short.
	Claims Reclaim
}

// DefaultMaxN is the default of Options.MaxN.
const DefaultMaxN = 10_000

// maxMaxN bounds Options.MaxN: a request's response stays below about 30 MB.
const maxMaxN = 1_000_000

// Server issues and explains IDs over HTTP, and over gRPC and Connect on
// the same port (see rpcHandler). It is an http.Handler; Serve
// runs it in an http.Server with the configured timeouts, Shutdown
// stops that gracefully and Close at once. A Server is safe for
// concurrent use.
type Server struct {
	cfg      Options
	clk      clock.Clock
	mux      *http.ServeMux
	rpc      http.Handler // the RPC services; see rpcHandler
	schemes  map[string]*scheme
	names    []string // scheme names in the order of Options
	reg      *prometheus.Registry
	m        *metrics
	store    *countingStore // nil without Options.Store
	logFile  *logFile       // the launch log's file, where the store can tell; nil else
	health   *health
	draining atomic.Bool
	drained  chan struct{} // closed once draining is set; see drain
	drainOne sync.Once
	tls      *serverTLS        // nil for plain HTTP
	tokens   *tokens           // nil without Options.TokenFile
	watched  []*reload.Watched // the files reloaded as they change: certificate, client CAs, tokens
	limits   *ratelimit.Limiter
	streams  *connlimit.StreamShares

	closers   []func() error // of the generators and allocators, run once by Shutdown or Close
	closeOnce sync.Once
	closeErr  error

	errorLog *log.Logger // the http.Servers' own errors; see handshakeLog

	mu      sync.Mutex
	servers []*http.Server // started by Serve, ServeProbes and ServeMetrics
}

// New builds the generators that c names and returns a Server for them.
func New(ctx context.Context, c Options) (*Server, error) {
	if c.MaxN == 0 {
		c.MaxN = DefaultMaxN
	}
	if c.MaxN < 1 || c.MaxN > maxMaxN {
		return nil, fmt.Errorf("%w: Options.MaxN %d out of range, want 1 to %d", ErrInvalid, c.MaxN, maxMaxN)
	}
	for _, d := range []struct {
		name string
		v    *time.Duration
		def  time.Duration
	}{
		{"ReadHeaderTimeout", &c.ReadHeaderTimeout, 5 * time.Second},
		{"ReadTimeout", &c.ReadTimeout, 10 * time.Second},
		{"WriteTimeout", &c.WriteTimeout, 30 * time.Second},
		{"IdleTimeout", &c.IdleTimeout, 120 * time.Second},
		{"ProbeInterval", &c.ProbeInterval, time.Second},
		{"ProbeTimeout", &c.ProbeTimeout, 2 * time.Second},
	} {
		if *d.v < 0 {
			return nil, fmt.Errorf("%w: Options.%s %v is negative, want 0 (the default, %v) or more", ErrInvalid, d.name, *d.v, d.def)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if c.MaxHeaderBytes < 0 {
		return nil, fmt.Errorf("%w: Options.MaxHeaderBytes %d is negative, want 0 (the default, 8192) or more", ErrInvalid, c.MaxHeaderBytes)
	}
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = 8 << 10
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"ProbeMaxConns", &c.ProbeMaxConns, DefaultProbeMaxConns},
		{"MetricsMaxConns", &c.MetricsMaxConns, DefaultMetricsMaxConns},
	} {
		if *f.v < 0 {
			return nil, fmt.Errorf("%w: Options.%s %d is negative, want 0 (the default, %d) or more", ErrInvalid, f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	switch {
	case c.ProbeMaxConnsPerClient == 0:
		c.ProbeMaxConnsPerClient = min(DefaultProbeMaxConnsPerClient, c.ProbeMaxConns)
	case c.ProbeMaxConnsPerClient > c.ProbeMaxConns:
		return nil, fmt.Errorf("%w: Options.ProbeMaxConnsPerClient %d out of range, want 1 to ProbeMaxConns (%d), 0 for the default (%d) or negative for no share",
			ErrInvalid, c.ProbeMaxConnsPerClient, c.ProbeMaxConns, DefaultProbeMaxConnsPerClient)
	case c.ProbeMaxConnsPerClient < 0:
		c.ProbeMaxConnsPerClient = 0
	}
	if err := c.Limits.check(); err != nil {
		return nil, err
	}
	var err error
	if c.TrustedProxies, err = checkPrefixes("TrustedProxies", c.TrustedProxies); err != nil {
		return nil, err
	}
	if c.ProxyProtocol, err = checkPrefixes("ProxyProtocol", c.ProxyProtocol); err != nil {
		return nil, err
	}
	if c.Clock == nil {
		c.Clock = clock.System()
	}
	s := &Server{cfg: c, clk: c.Clock, schemes: make(map[string]*scheme), reg: prometheus.NewRegistry(), drained: make(chan struct{})}
	if c.TLS != nil {
		cfg, err := tlsConfig(*c.TLS, c.Clock, c.Logger)
		if err != nil {
			return nil, err
		}
		s.tls = cfg
		s.watched = append(s.watched, cfg.watched...)
	}
	if c.TokenFile != "" {
		t, err := newTokens(c.TokenFile, c.Clock, c.Logger)
		if err != nil {
			return nil, err
		}
		s.tokens = t
		s.watched = append(s.watched, t.w)
	}
	s.limits = ratelimit.NewLimiter(c.Limits.IDsPerSecond, c.Limits.RequestsPerSecond, c.Limits.NodeIDsPerSecond, c.MaxN)
	s.streams = connlimit.NewStreamShares(c.Limits.MaxStreamsPerClient)
	s.m = newMetrics(s.reg)
	s.errorLog = tlslog.NewErrorLog(c.Logger, c.Clock, s.m.handshakes)
	if c.Store != nil {
		s.store = &countingStore{Store: c.Store, errors: s.m.storeErrors}
	}
	s.logFile = newLogFile(c.Store)
	var list []*scheme
	for _, build := range []func(context.Context) (*scheme, error){
		optional(c.TraceID, s.traceIDScheme),
		optional(c.Snowflake, s.snowflakeScheme),
		optional(c.DecimalID, s.decimalIDScheme),
		optional(c.ObjectID, s.objectIDScheme),
	} {
		sc, err := build(ctx)
		if err != nil {
			s.close()
			return nil, err
		}
		if sc != nil {
			list = append(list, sc)
		}
	}
	for _, o := range c.Segments {
		sc, err := s.segmentScheme(ctx, o)
		if err != nil {
			s.close()
			return nil, err
		}
		list = append(list, sc)
	}
	if len(list) == 0 {
		s.close()
		return nil, fmt.Errorf("%w: Options names no scheme to serve, want at least one of TraceID, Snowflake, DecimalID, ObjectID, Segments", ErrInvalid)
	}
	for _, sc := range list {
		if s.schemes[sc.name] != nil {
			s.close()
			return nil, fmt.Errorf("%w: %s is served twice", ErrInvalid, sc.name)
		}
		s.add(sc)
	}
	s.health = newHealth(s)
	s.m.register(s)
	s.routes()
	s.rpc = s.rpcHandler()
	return s, nil
}

// checkPrefixes returns a copy of the prefixes of Options.name, masked,
// or an error naming one that is not valid.
func checkPrefixes(name string, list []netip.Prefix) ([]netip.Prefix, error) {
	list = slices.Clone(list)
	for i, p := range list {
		if !p.IsValid() {
			return nil, fmt.Errorf("%w: Options.%s[%d] is not a valid prefix, want an address and a length such as 10.0.0.0/8", ErrInvalid, name, i)
		}
		list[i] = p.Masked()
	}
	return list, nil
}

// optional returns a function that builds the scheme of options o with
// build, or returns a nil scheme if o is nil: a scheme not configured.
func optional[O any](o *O, build func(context.Context, O) (*scheme, error)) func(context.Context) (*scheme, error) {
	return func(ctx context.Context) (*scheme, error) {
		if o == nil {
			return nil, nil
		}
		return build(ctx, *o)
	}
}

// add registers sc.
func (s *Server) add(sc *scheme) {
	sc.bind(s.m)
	s.limits.AddScheme(sc.name)
	s.schemes[sc.name] = sc
	s.names = append(s.names, sc.name)
}

// MetricsHandler serves the server's metrics, as /metrics does: for a
// listener of their own (see Options.SeparateMetrics). It needs no token.
func (s *Server) MetricsHandler() http.Handler { return s.m.handler(s.reg) }

// Schemes returns the names of the schemes served, as they appear in paths.
func (s *Server) Schemes() []string { return slices.Clone(s.names) }

// Registry returns the registry of the server's metrics, which /metrics
// serves; a program may register metrics of its own in it.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client, ok := s.streams.Take(r)
	if !ok {
		s.m.streamsRefused.Inc()
		s.streams.TooManyStreams(w)
		return
	}
	defer s.streams.Give(client)
	s.serveHTTP(w, r)
}

// serveHTTP serves one request within its client's share.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if isRPC(r.URL.Path) {
		s.rpc.ServeHTTP(w, r)
		return
	}
	// No route reads a body; one that is sent is refused rather than left
	// for the server to drain.
	if r.ContentLength != 0 {
		answerBeforeBody(w, r)
		writeError(w, http.StatusRequestEntityTooLarge, "a request takes no body")
		return
	}
	if name, ok := idsRoute(r); ok {
		s.handleIDs(w, r, name)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// idsRoute matches the route of nearly every request, GET (or HEAD)
// /v1/{scheme}, as the multiplexer would, without its pattern matching:
// it returns the scheme's name for a clean path of one segment after
// /v1/ with nothing escaped in it, and leaves every other request to the
// multiplexer.
func idsRoute(r *http.Request) (string, bool) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead || r.URL.RawPath != "" {
		return "", false
	}
	name, ok := strings.CutPrefix(r.URL.Path, "/v1/")
	if !ok || name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
		return "", false
	}
	return name, true
}

// Serve accepts connections on l and serves them with the configured
// timeouts until Shutdown; it then returns http.ErrServerClosed. At
// Limits.MaxConns connections open, a new client makes room by closing
// the connection idle longest; with none idle it waits. At
// Limits.MaxConnsPerClient connections from one address, a new one of
// that address closes the address's connection idle longest, or is
// closed at once if none is idle; so is a new one of an address that
// holds Limits.MaxBusyConnsPerClient connections that are not idle. A
// new connection must send its first request's header (TLS handshake
// and PROXY header included) within ReadHeaderTimeout of its accept, or
// it is closed.
func (s *Server) Serve(l net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.ReadTimeout,
		WriteTimeout:      s.cfg.WriteTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		ErrorLog:          s.errorLog,
	}
	hs.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: MaxStreamsPerConn}
	if s.tls == nil {
		// gRPC clients speak HTTP/2 with prior knowledge (h2c) to a
		// plain-text server; HTTP/1.1 clients are served as before.
		hs.Protocols = new(http.Protocols)
		hs.Protocols.SetHTTP1(true)
		hs.Protocols.SetUnencryptedHTTP2(true)
	} else {
		hs.TLSConfig = s.tls.main
	}
	return s.serve(hs, l, "main", connlimit.Limits{
		Max: s.cfg.Limits.MaxConns, PerClient: max(0, s.cfg.Limits.MaxConnsPerClient), Busy: max(0, s.cfg.Limits.MaxBusyConnsPerClient),
		Opening: s.cfg.ReadHeaderTimeout, Proxies: s.cfg.ProxyProtocol,
	})
}

// Shutdown stops the server gracefully: /healthz reports 503 from now on,
// Serve, ServeProbes and ServeMetrics stop accepting connections, and
// Shutdown waits for the requests in flight to finish, or for ctx to end
// (then it returns ctx's error and the remaining connections stay open
// until the caller exits). Either way it then closes the generators and
// segment allocators, whose unused IDs are lost: a request still running
// gets an error. Its error says which of the two failed: requests still
// in flight, or a generator or node claim that did not close (a claim
// whose store does not answer). It may be called more than once.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.drain()
	servers := slices.Clone(s.servers)
	s.mu.Unlock()
	var inFlight error
	for _, hs := range servers {
		if err := hs.Shutdown(ctx); err != nil && inFlight == nil {
			inFlight = fmt.Errorf("serve: requests still in flight when the wait for them ended: %w", err)
		}
	}
	return joinLine(inFlight, s.closeError())
}

// closeError closes what New opened, once, and says what failed to close.
func (s *Server) closeError() error {
	if err := s.close(); err != nil {
		return fmt.Errorf("serve: closing the generators and releasing their node claims: %w", err)
	}
	return nil
}

// Close stops the server at once, as net/http's Server.Close does:
// /healthz reports 503 from now on, and the listeners and connections of
// Serve, ServeProbes and ServeMetrics close, requests in flight included,
// without waiting for them. It then closes the generators and segment
// allocators, whose unused IDs are lost: a request still running gets an
// error of kind idkit.ErrClosed. It may be called more than once, and
// after Shutdown.
func (s *Server) Close() error {
	s.mu.Lock()
	s.drain()
	servers := slices.Clone(s.servers)
	s.mu.Unlock()
	var errs []error
	for _, hs := range servers {
		if err := hs.Close(); err != nil && !errors.Is(err, net.ErrClosed) { // not closed before
			errs = append(errs, fmt.Errorf("serve: closing the listeners: %w", err))
		}
	}
	return joinLine(append(errs, s.closeError())...)
}

// drain makes the server report not ready from now on, and ends the
// health watches, which would otherwise keep Shutdown waiting.
func (s *Server) drain() {
	s.draining.Store(true)
	s.drainOne.Do(func() { close(s.drained) })
}

// close closes what New opened, once, and returns what closing it
// returned.
func (s *Server) close() error {
	s.closeOnce.Do(func() {
		var errs []error
		for _, c := range s.closers {
			errs = append(errs, c())
		}
		s.closeErr = joinLine(errs...)
	})
	return s.closeErr
}

// routes builds the request multiplexer. Every pattern has a twin without
// a method, so that other methods get a JSON 405 rather than the
// multiplexer's text.
func (s *Server) routes() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/{scheme}", func(w http.ResponseWriter, r *http.Request) {
		s.handleIDs(w, r, r.PathValue("scheme"))
	})
	mux.HandleFunc("GET /v1/{scheme}/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.handleInspect(w, r, r.PathValue("scheme"))
	})
	mux.HandleFunc("GET /v1/segment/{tag}", func(w http.ResponseWriter, r *http.Request) {
		s.handleIDs(w, r, "segment/"+r.PathValue("tag"))
	})
	mux.HandleFunc("GET /v1/segment/{tag}/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.handleInspect(w, r, "segment/"+r.PathValue("tag"))
	})
	mux.HandleFunc("GET /openapi.json", s.handleOpenAPI)
	mux.HandleFunc("GET /livez", s.handleLive)
	mux.HandleFunc("GET /readyz", s.handleHealth)
	mux.HandleFunc("GET /healthz", s.handleHealth)
	if !s.cfg.SeparateMetrics {
		mux.Handle("GET /metrics", s.m.handler(s.reg))
	}
	// (Other methods on /v1/segment/{tag} reach the twin of /v1/{scheme}/{id}.)
	twins := []string{"/v1/{scheme}", "/v1/{scheme}/{id}", "/v1/segment/{tag}/{id}", "/openapi.json", "/livez", "/readyz", "/healthz"}
	if !s.cfg.SeparateMetrics {
		twins = append(twins, "/metrics")
	}
	for _, p := range twins {
		mux.HandleFunc(p, methodNotAllowed)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such path %s; the paths are /v1/{scheme}, /v1/{scheme}/{id}, /livez, /readyz and /metrics", quote(r.URL.Path)))
	})
	s.mux = mux
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", "GET, HEAD")
	writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s, want GET", clip(r.Method), clip(r.URL.Path)))
}

// lookup returns the scheme called name, or writes a 404. The answer does
// not list the schemes and tags served: a client is told what it asked
// for is not here, not what else is.
func (s *Server) lookup(w http.ResponseWriter, name string) *scheme {
	if sc := s.schemes[name]; sc != nil {
		return sc
	}
	if tag, ok := strings.CutPrefix(name, "segment/"); ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("unknown segment tag %s", quote(tag)))
		return nil
	}
	if name == "segment" {
		writeError(w, http.StatusNotFound, "segment IDs are at /v1/segment/{tag}")
		return nil
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("unknown scheme %s", quote(name)))
	return nil
}

// joinLine joins the errors that are not nil, as errors.Join does, but on
// one line: a command prints the error as its one line of failure.
func joinLine(errs ...error) error {
	var list []error
	for _, err := range errs {
		if err != nil {
			list = append(list, err)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	return lineErrors(list)
}

// lineErrors are errors joined with "; ".
type lineErrors []error

func (e lineErrors) Error() string {
	var b strings.Builder
	for i, err := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e lineErrors) Unwrap() []error { return e }
