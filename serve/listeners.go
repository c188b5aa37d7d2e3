package serve

import (
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/idkit/idkit/serve/internal/connlimit"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

// The listeners beside the main one: the probes', which answers an
// orchestrator's liveness and readiness probes whatever the main port's
// clients do, and the metrics', which a scraper reads. Each has a
// connection cap of its own (idle connections closed first, as on the
// main port) and timeouts shorter than the main port's.
const (
	// DefaultProbeMaxConns and DefaultMetricsMaxConns are the defaults
	// of Options.ProbeMaxConns and Options.MetricsMaxConns.
	DefaultProbeMaxConns   = 16
	DefaultMetricsMaxConns = 64
	// DefaultProbeMaxConnsPerClient is the default of
	// Options.ProbeMaxConnsPerClient: an orchestrator's prober holds one
	// or two connections to a server, from the address of its node.
	DefaultProbeMaxConnsPerClient = 4

	probeReadTimeout   = 2 * time.Second  // the request line and headers, and the request
	probeIdleTimeout   = 10 * time.Second // a kept-alive connection between probes
	metricsReadTimeout = 5 * time.Second
	metricsWriteTimout = 15 * time.Second
	metricsIdleTimeout = 30 * time.Second

	// openingEviction is how long a connection to the probe or metrics
	// listener may stay without a whole request before a new connection
	// at the cap, with none idle, closes it to take its room. A prober
	// or a scraper sends its request as it connects, in a millisecond or
	// a few with TLS; silent or trickling connections from many
	// addresses, each within its share, would otherwise fill the cap and
	// keep a probe waiting (up to the 2 s opening deadline each time).
	openingEviction = 50 * time.Millisecond
)

// probeWriteTimeout is how long a probe's answer may take: /readyz may
// wait ProbeTimeout for the store.
func (s *Server) probeWriteTimeout() time.Duration { return s.cfg.ProbeTimeout + 3*time.Second }

// ProbeHandler serves /livez and /readyz alone, needing no token and no
// client certificate; every other path is 404. ServeProbes serves it.
func (s *Server) ProbeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", s.handleLive)
	mux.HandleFunc("GET /readyz", s.handleHealth)
	mux.HandleFunc("/livez", methodNotAllowed)
	mux.HandleFunc("/readyz", methodNotAllowed)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such path %s; this listener serves /livez and /readyz", quote(r.URL.Path)))
	})
	return noBody(mux)
}

// metricsOnly serves /metrics alone; every other path is 404.
func (s *Server) metricsOnly() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.MetricsHandler())
	mux.HandleFunc("/metrics", methodNotAllowed)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no such path %s; this listener serves /metrics", quote(r.URL.Path)))
	})
	return noBody(mux)
}

// noBody refuses a request with a body, which no route reads, rather than
// leave it for the server to drain.
func noBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 {
			answerBeforeBody(w, r)
			writeError(w, http.StatusRequestEntityTooLarge, "a request takes no body")
			return
		}
		h.ServeHTTP(w, r)
	})
}

// ServeProbes serves ProbeHandler on l until Shutdown or Close, and then
// returns http.ErrServerClosed. It is for a listener of its own, such as
// the one a Kubernetes probe reaches: it asks no client certificate, is
// outside Limits.MaxConns with a cap of its own (Options.ProbeMaxConns),
// and has short timeouts: 2 s to read a request, ProbeTimeout and 3 s to
// answer, 10 s idle. With Options.TLS it speaks HTTPS with the server's
// certificate, the last that loaded even after a failed reload, so that
// /readyz can say why the main port refuses handshakes.
func (s *Server) ServeProbes(l net.Listener) error {
	hs := &http.Server{
		Handler:           s.ProbeHandler(),
		ReadHeaderTimeout: probeReadTimeout,
		ReadTimeout:       probeReadTimeout,
		WriteTimeout:      s.probeWriteTimeout(),
		IdleTimeout:       probeIdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		ErrorLog:          s.errorLog,
	}
	if s.tls != nil {
		hs.TLSConfig = s.tls.probes
	}
	return s.serve(hs, l, "probes", connlimit.Limits{
		Max: s.cfg.ProbeMaxConns, PerClient: s.cfg.ProbeMaxConnsPerClient, Busy: s.cfg.ProbeMaxConnsPerClient,
		Opening: probeReadTimeout, EvictOpening: openingEviction, Proxies: s.cfg.ProxyProtocol,
	})
}

// ServeMetrics serves the metrics on l, at /metrics alone (404 elsewhere),
// until Shutdown or Close, and then returns http.ErrServerClosed. It needs
// no token and speaks plain HTTP; it has a connection cap of its own
// (Options.MetricsMaxConns, idle connections closed first) and timeouts:
// 5 s to read a request, 15 s to answer, 30 s idle. Use it with
// Options.SeparateMetrics.
func (s *Server) ServeMetrics(l net.Listener) error {
	hs := &http.Server{
		Handler:           s.metricsOnly(),
		ReadHeaderTimeout: metricsReadTimeout,
		ReadTimeout:       metricsReadTimeout,
		WriteTimeout:      metricsWriteTimout,
		IdleTimeout:       metricsIdleTimeout,
		MaxHeaderBytes:    s.cfg.MaxHeaderBytes,
		ErrorLog:          s.errorLog,
	}
	return s.serve(hs, l, "metrics", connlimit.Limits{Max: s.cfg.MetricsMaxConns, Opening: metricsReadTimeout, EvictOpening: openingEviction})
}

// serve runs hs on l, its connections limited by lim, until Shutdown or
// Close.
func (s *Server) serve(hs *http.Server, l net.Listener, name string, lim connlimit.Limits) error {
	s.mu.Lock()
	if s.draining.Load() {
		s.mu.Unlock()
		l.Close()
		return http.ErrServerClosed
	}
	s.servers = append(s.servers, hs)
	s.mu.Unlock()
	cl := connlimit.New(lim, s.m.evicted.WithLabelValues(name), s.m.refused.WithLabelValues(name), s.m.timedOut.WithLabelValues(name),
		s.m.conns.WithLabelValues(name), s.m.idle.WithLabelValues(name))
	hs.ConnState = cl.ConnState
	hs.ConnContext = connlimit.WithConn
	hs.Handler = connlimit.EndsOpening(hs.Handler)
	l = cl.Listener(l)
	if hs.TLSConfig != nil {
		return hs.ServeTLS(l, "", "") // the certificate comes from TLSConfig
	}
	return hs.Serve(l)
}

// Descriptors returns the most file descriptors the connections of the
// server's listeners may hold: the caps of the main, probe and metrics
// listeners, and one waiting connection and the listening socket of
// each. It is 0 when the main port has no cap (Limits.MaxConns < 0).
// The files and stores a program opens come on top.
func (s *Server) Descriptors() int {
	if s.cfg.Limits.MaxConns < 0 {
		return 0
	}
	return s.cfg.Limits.MaxConns + s.cfg.ProbeMaxConns + s.cfg.MetricsMaxConns + 3*2
}

// ErrFileLimit is the error of CheckFileLimit: the process may not open
// as many files as the server's listeners may hold connections.
var ErrFileLimit = errkind.New(idkit.ErrInvalid, "serve: the limit on open files (RLIMIT_NOFILE) is below the connection caps")

// CheckFileLimit checks that the process may open the descriptors the
// server's listeners may hold (Descriptors) and reserve more, for the
// program's files and stores. It returns an error of ErrFileLimit that
// says both numbers when the soft RLIMIT_NOFILE is lower (Go raises the
// soft limit to the hard one at start), and nil when the limit is enough
// or not known on this system, or when the main port has no cap.
func (s *Server) CheckFileLimit(reserve int) error {
	need := s.Descriptors()
	if need == 0 {
		return nil
	}
	limit, ok := fileLimit()
	return checkFileLimit(need+reserve, limit, ok, s.cfg)
}

func checkFileLimit(need int, limit uint64, known bool, c Options) error {
	if !known || limit >= uint64(need) {
		return nil
	}
	return fmt.Errorf("%w: it is %d, and the server may hold %d descriptors: %d connections on the main port, %d on the probe listener, %d on the metrics listener, %d for files, stores and listening sockets; raise the limit (ulimit -n, systemd's LimitNOFILE=) or lower the caps",
		ErrFileLimit, limit, need, c.Limits.MaxConns, c.ProbeMaxConns, c.MetricsMaxConns, need-c.Limits.MaxConns-c.ProbeMaxConns-c.MetricsMaxConns)
}
