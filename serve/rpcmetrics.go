package serve

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
)

// rpcMetrics counts the RPCs, whatever their protocol (gRPC, gRPC-Web,
// Connect), as the HTTP metrics count requests: by procedure, scheme
// (empty when the call names none that is served) and code ("ok", or the
// error's code such as "invalid_argument"), with a latency histogram of
// the HTTP one's buckets. It is a connect interceptor.
type rpcMetrics struct {
	s        *Server
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newRPCMetrics(s *Server) *rpcMetrics {
	m := &rpcMetrics{
		s: s,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idkit_rpc_requests_total",
			Help: "RPCs answered (gRPC, gRPC-Web and Connect), by procedure, scheme and code.",
		}, []string{"procedure", "scheme", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "idkit_rpc_request_duration_seconds",
			Help:    "Time from decoding an RPC's request to its answer, by procedure and scheme.",
			Buckets: latencyBuckets,
		}, []string{"procedure", "scheme"}),
	}
	s.reg.MustRegister(m.requests, m.latency)
	return m
}

// done records a call of procedure that ended with err.
func (m *rpcMetrics) done(procedure string, msg any, err error, start time.Time) {
	scheme := ""
	if r, ok := msg.(interface{ GetScheme() string }); ok && m.s.schemes[r.GetScheme()] != nil {
		scheme = r.GetScheme() // only served names: a label per name asked for would grow without bound
	}
	code := "ok"
	switch {
	case errors.Is(err, context.Canceled):
		code = connect.CodeCanceled.String()
	case errors.Is(err, context.DeadlineExceeded):
		code = connect.CodeDeadlineExceeded.String()
	case err != nil:
		code = connect.CodeOf(err).String()
	}
	m.requests.WithLabelValues(procedure, scheme, code).Inc()
	m.latency.WithLabelValues(procedure, scheme).Observe(time.Since(start).Seconds())
}

func (m *rpcMetrics) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		start := time.Now()
		resp, err := next(ctx, req)
		m.done(req.Spec().Procedure, req.Any(), err, start)
		return resp, err
	}
}

// WrapStreamingClient leaves clients alone: the interceptor is a server's.
func (m *rpcMetrics) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler counts a stream (reflection's) once, when it ends.
func (m *rpcMetrics) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		start := time.Now()
		err := next(ctx, conn)
		m.done(conn.Spec().Procedure, nil, err, start)
		return err
	}
}
