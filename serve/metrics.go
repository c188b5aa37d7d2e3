package serve

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/serve/internal/reload"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// latencyBuckets are the request latency histogram's upper bounds, in
// seconds: 25µs to 10s, finer below a millisecond where a healthy server
// answers.
var latencyBuckets = []float64{
	25e-6, 50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3,
	1, 2.5, 10,
}

// metrics are the server's Prometheus metrics.
type metrics struct {
	issued         *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	requests       *prometheus.CounterVec
	storeErrors    *prometheus.CounterVec
	conns          *prometheus.GaugeVec   // by listener
	idle           *prometheus.GaugeVec   // by listener
	evicted        *prometheus.CounterVec // by listener
	refused        *prometheus.CounterVec // by listener
	timedOut       *prometheus.CounterVec // by listener
	handshakes     prometheus.Counter
	inflated       prometheus.Counter
	streamsRefused prometheus.Counter
	claimsLost     *prometheus.CounterVec // by scheme
	reclaimed      *prometheus.CounterVec // by scheme
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		issued: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_ids_issued_total",
			Help: "IDs issued, by scheme.",
		}, []string{"scheme"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "idkit_http_request_duration_seconds",
			Help:    "Time from routing a request to writing its response, by route and scheme.",
			Buckets: latencyBuckets,
		}, []string{"route", "scheme"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_http_requests_total",
			Help: "Requests answered, by route, scheme and status code.",
		}, []string{"route", "scheme", "code"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_store_errors_total",
			Help: "Failed operations on the launch log (high-water marks, generator ids, launches, segment blocks, health probes), by operation.",
		}, []string{"op"}),
		conns: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "idkit_connections_open",
			Help: "Connections open, by listener: main, probes, metrics.",
		}, []string{"listener"}),
		idle: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "idkit_connections_idle",
			Help: "Connections open and idle between requests (kept alive), by listener: the ones closed first to make room at a connection cap.",
		}, []string{"listener"}),
		evicted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_connections_evicted_total",
			Help: "Idle connections closed to make room for a new client at the listener's connection cap, or for a new connection of the same client address at its share, by listener.",
		}, []string{"listener"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_connections_refused_total",
			Help: "New connections closed at once because their client address held its share of the listener's connections and none of them was idle, or held as many busy (not idle) connections as it may, by listener.",
		}, []string{"listener"}),
		timedOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_connections_timed_out_total",
			Help: "New connections closed without having sent their first request's header (TLS handshake and PROXY header included) within the listener's deadline from their accept, by that deadline or by a read timeout of the server's that ends no sooner, by listener.",
		}, []string{"listener"}),
		handshakes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "idkit_tls_handshake_errors_total",
			Help: "Failed TLS handshakes, on every listener; the log has one line a minute at most.",
		}),
		inflated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "idkit_rpc_inflated_bytes_total",
			Help: "Bytes of compressed RPC request messages inflated, at most 64 KiB a message.",
		}),
		streamsRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "idkit_http2_streams_refused_total",
			Help: "HTTP/2 requests (RPCs among them) answered 429 at once because their client address had Limits.MaxStreamsPerClient in flight.",
		}),
		claimsLost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_node_claims_lost_total",
			Help: "Node claims lost, by scheme, of those the server takes itself (Options.Claims; idkit serve --etcd without --node): each loss once, however soon a node is claimed again.",
		}, []string{"scheme"}),
		reclaimed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_node_claims_reclaimed_total",
			Help: "Nodes claimed again in the place of lost claims, by scheme: the scheme serves again from each.",
		}, []string{"scheme"}),
	}
	for _, op := range []string{"highwater", "advance", "generator", "launch", "block", "probe"} {
		m.storeErrors.WithLabelValues(op)
	}
	reg.MustRegister(m.issued, m.latency, m.requests, m.storeErrors, m.conns, m.idle, m.evicted, m.refused, m.timedOut, m.handshakes, m.inflated, m.streamsRefused,
		m.claimsLost, m.reclaimed,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// bind resolves the metrics of sc's successful requests once, so that they
// cost no label lookup per request.
func (sc *scheme) bind(m *metrics) {
	sc.issued = m.issued.WithLabelValues(sc.name)
	sc.idsLatency = m.latency.WithLabelValues("ids", sc.name)
	sc.inspectLatency = m.latency.WithLabelValues("inspect", sc.name)
	sc.idsOK = m.requests.WithLabelValues("ids", sc.name, "200")
	sc.inspectOK = m.requests.WithLabelValues("inspect", sc.name, "200")
}

// done records a request on route that ended with status.
func (m *metrics) done(_ *http.Request, route, scheme string, status int, start time.Time) {
	m.requests.WithLabelValues(route, scheme, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(route, scheme).Observe(time.Since(start).Seconds())
}

// register adds the metrics read from s's generators and claims.
func (m *metrics) register(s *Server) {
	s.reg.MustRegister(&statsCollector{s})
	if len(s.watched) > 0 {
		s.reg.MustRegister(reload.Collector{Files: s.watched})
	}
	for _, name := range s.names {
		sc := s.schemes[name]
		if sc.claim == nil {
			continue
		}
		labels := prometheus.Labels{"scheme": name}
		s.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "idkit_node_claim_held",
			Help:        "1 while the scheme's node claim is held, 0 once it is lost.",
			ConstLabels: labels,
		}, func() float64 {
			if sc.claim.Check(s.clk.Now()) != nil {
				return 0
			}
			return 1
		}))
		s.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "idkit_node_claim_node",
			Help:        "The node number the scheme's claim holds.",
			ConstLabels: labels,
		}, func() float64 { return float64(sc.claim.Node()) }))
	}
}

// handler serves the registry, counting its own requests.
func (m *metrics) handler(reg *prometheus.Registry) http.Handler {
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		m.done(r, "metrics", "", http.StatusOK, start)
	})
}

var (
	clockBackwardDesc = prometheus.NewDesc("idkit_clock_backward_total",
		"Times the generator found the wall clock behind the second or tick it issues under.", []string{"scheme"}, nil)
	waitsDesc = prometheus.NewDesc("idkit_waits_total",
		"Times a request waited for the next second or tick, or for the clock to pass the stored high-water mark.", []string{"scheme"}, nil)
	exhaustedDesc = prometheus.NewDesc("idkit_exhausted_total",
		"Seconds, ticks or decimalid generator ids whose IDs ran out.", []string{"scheme"}, nil)
)

// statsCollector reads the generators' Stats at each scrape.
type statsCollector struct{ s *Server }

func (c *statsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- clockBackwardDesc
	ch <- waitsDesc
	ch <- exhaustedDesc
}

func (c *statsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range c.s.names {
		sc := c.s.schemes[name]
		st := sc.stats()
		ch <- prometheus.MustNewConstMetric(waitsDesc, prometheus.CounterValue, float64(st.Waits), name)
		if strings.HasPrefix(name, "segment/") {
			continue // no clock, no tick
		}
		ch <- prometheus.MustNewConstMetric(exhaustedDesc, prometheus.CounterValue, float64(st.Exhausted), name)
		if name == "traceid" || name == "snowflake" { // the schemes that watch the clock for steps back
			ch <- prometheus.MustNewConstMetric(clockBackwardDesc, prometheus.CounterValue, float64(st.ClockBackward), name)
		}
	}
}
