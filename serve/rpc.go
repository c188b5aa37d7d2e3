package serve

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idkit/idkit/serve/internal/idtext"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"connectrpc.com/grpcreflect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/explain"
	"github.com/idkit/idkit/objectid"
	idkitv1 "github.com/idkit/idkit/proto/idkit/v1"
	"github.com/idkit/idkit/proto/idkit/v1/idkitv1connect"
)

// rpcMaxRequest bounds an RPC request's message: a request names a scheme
// and an ID, a few dozen bytes.
const rpcMaxRequest = 64 << 10

// isRPC reports whether path is one of the RPC services': idkit.v1's, and
// gRPC's health and reflection. No HTTP path starts like these.
func isRPC(path string) bool {
	return strings.HasPrefix(path, "/idkit.v1.") || strings.HasPrefix(path, "/grpc.")
}

// rpcClientKey is the context key of an RPC's rpcClient.
type rpcClientKey struct{}

// rpcClient is who an RPC comes from, as authenticate found it.
type rpcClient struct {
	name string
	ok   bool
}

// rpcHandler returns the handler of the RPC services, which one port
// serves over gRPC, gRPC-Web and Connect: idkit.v1.IDService, gRPC's
// health service (the readiness of /readyz) and server reflection (so that
// a client can list and call the service without the .proto). Each call is
// authenticated as a request to /v1/ is, and counted in the metrics.
func (s *Server) rpcHandler() http.Handler {
	m := newRPCMetrics(s)
	opts := []connect.HandlerOption{
		connect.WithInterceptors(m),
		connect.WithReadMaxBytes(rpcMaxRequest),
		// A batch of IDs compresses well, but costs more CPU to compress
		// than to issue; small answers are sent as they are.
		connect.WithCompressMinBytes(4 << 10),
		connect.WithCompression("gzip",
			func() connect.Decompressor { return &cappedGzip{inflated: s.m.inflated} },
			func() connect.Compressor { return gzip.NewWriter(nil) }),
	}
	mux := http.NewServeMux()
	mux.Handle(idkitv1connect.NewIDServiceHandler(&rpcService{s}, opts...))
	mux.Handle(grpchealth.NewHandler(rpcHealth{s}, opts...))
	mux.Handle(healthWatch, connect.NewServerStreamHandler(healthWatch, rpcHealth{s}.watch, opts...))
	reflector := grpcreflect.NewStaticReflector(idkitv1connect.IDServiceName)
	mux.Handle(grpcreflect.NewHandlerV1(reflector, opts...))
	mux.Handle(grpcreflect.NewHandlerV1Alpha(reflector, opts...))
	errs := connect.NewErrorWriter(opts...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// The credentials are in the HTTP request (a header, the TLS
		// state), which a connect handler does not see: the client is
		// found here, before the body is read, and handed down in the
		// context.
		name, ok := s.authenticate(r)
		var err error
		if !ok && needsCredential(r.URL.Path) {
			_, err = rpcAuthenticated(r.Context())
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/grpc") {
				// The challenge is a header in Connect's answer. gRPC
				// sends an error's metadata as trailers, where
				// WWW-Authenticate is not allowed (net/http drops it and
				// logs each time), and its clients do not read it.
				err.(*connect.Error).Meta().Set("WWW-Authenticate", `Bearer realm="idkit"`)
			}
			answerBeforeBody(w, r)
		} else {
			err = s.boundBody(w, r)
		}
		if err != nil {
			m.done(r.URL.Path, nil, err, start)
			errs.Write(w, r, err)
			return
		}
		if r.URL.Path == healthWatch {
			// A watch lasts as long as its client wants, past the
			// server's read and write timeouts.
			rc := http.NewResponseController(w)
			rc.SetReadDeadline(time.Time{})
			rc.SetWriteDeadline(time.Time{})
		}
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), rpcClientKey{}, rpcClient{name, ok})))
	})
}

// rpcService implements idkit.v1.IDService with the server's schemes.
type rpcService struct{ s *Server }

// Next issues IDs, as GET /v1/{scheme}?n=N does.
func (r *rpcService) Next(ctx context.Context, req *connect.Request[idkitv1.NextRequest]) (*connect.Response[idkitv1.NextResponse], error) {
	s := r.s
	client, err := rpcAuthenticated(ctx)
	if err != nil {
		return nil, err
	}
	sc, err := s.rpcScheme(req.Msg.GetScheme())
	if err != nil {
		return nil, err
	}
	n := int64(1)
	if req.Msg.N != nil {
		if n = req.Msg.GetN(); n < 1 || n > int64(s.cfg.MaxN) {
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("n %d out of range, want 1 to %d", n, s.cfg.MaxN))
		}
	}
	format := req.Msg.GetFormat()
	if _, ok := idkitv1.Format_name[int32(format)]; !ok {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("format %d unknown, want FORMAT_UNSPECIFIED (0, the binary form), FORMAT_TEXT (1), FORMAT_BINARY (2) or FORMAT_TEXT_AND_BINARY (3)", format))
	}
	if ok, why := s.limits.Allow(client, sc.name, int(n), s.clk.Now()); !ok {
		secs := retrySeconds(why.Retry)
		return nil, retryError(connect.CodeResourceExhausted, tooMany(sc.name, why.Node, secs), secs)
	}
	resp := &idkitv1.NextResponse{}
	if err := rpcIssue(ctx, sc, int(n), format, resp); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the client has gone, or its deadline passed
		}
		s.logf("serve: cannot issue IDs", "scheme", sc.name, "err", err)
		return nil, retryError(connect.CodeUnavailable, sc.name+": "+publicReason(err), 1)
	}
	sc.issued.Add(float64(n))
	return connect.NewResponse(resp), nil
}

// Inspect explains an ID, as GET /v1/{scheme}/{id} does.
func (r *rpcService) Inspect(ctx context.Context, req *connect.Request[idkitv1.InspectRequest]) (*connect.Response[idkitv1.InspectResponse], error) {
	s := r.s
	if _, err := rpcAuthenticated(ctx); err != nil {
		return nil, err
	}
	sc, err := s.rpcScheme(req.Msg.GetScheme())
	if err != nil {
		return nil, err
	}
	q := url.Values{}
	if at := req.Msg.GetAt(); at != nil {
		if sc.name != "traceid" {
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("at is for traceid only, not %s", sc.name))
		}
		if err := at.CheckValid(); err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("at: %w", err))
		}
		q.Set("at", at.AsTime().Format(time.RFC3339Nano))
	}
	rep, err := sc.explain(req.Msg.GetId(), q)
	if err != nil {
		var he *httpError
		if errors.As(err, &he) {
			switch he.status {
			case http.StatusNotFound:
				return nil, connect.NewError(connect.CodeNotFound, errors.New(he.msg))
			case http.StatusServiceUnavailable:
				return nil, retryError(connect.CodeUnavailable, he.msg, 1)
			}
		}
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	resp := &idkitv1.InspectResponse{Parts: make([]*idkitv1.Part, len(rep.Fields))}
	for i, f := range rep.Fields {
		resp.Parts[i] = part(f)
	}
	return connect.NewResponse(resp), nil
}

// rpcAuthenticated returns the client of an RPC, or Unauthenticated when
// the server requires a token and the call presents no valid one.
func rpcAuthenticated(ctx context.Context) (string, error) {
	c, _ := ctx.Value(rpcClientKey{}).(rpcClient)
	if !c.ok {
		return "", connect.NewError(connect.CodeUnauthenticated, errUnauthorized)
	}
	return c.name, nil
}

// rpcScheme returns the scheme called name, or the error that says it is
// not served; like a 404, it does not list the schemes that are.
func (s *Server) rpcScheme(name string) (*scheme, error) {
	if sc := s.schemes[name]; sc != nil {
		return sc, nil
	}
	tag, isSegment := strings.CutPrefix(name, "segment/")
	switch {
	case name == "":
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("scheme is empty, want a scheme such as traceid, or segment/TAG"))
	case isSegment:
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown segment tag %s", quote(tag)))
	case name == "segment":
		return nil, connect.NewError(connect.CodeNotFound, errors.New("segment IDs take a tag: scheme segment/TAG"))
	}
	return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown scheme %s", quote(name)))
}

// retryError returns an error of code whose call may be tried again after
// secs seconds: a google.rpc.RetryInfo detail, and Retry-After as the HTTP
// API sends it (a header, or a trailer in gRPC).
func retryError(code connect.Code, msg string, secs int) *connect.Error {
	err := connect.NewError(code, errors.New(msg))
	if d, e := connect.NewErrorDetail(&errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(secs) * time.Second)}); e == nil {
		err.AddDetail(d)
	}
	err.Meta().Set("Retry-After", strconv.Itoa(secs))
	return err
}

// part converts a field of an explained ID.
func part(f explain.Field) *idkitv1.Part {
	p := &idkitv1.Part{Name: f.Name}
	switch v := reflect.ValueOf(f.Value); v.Kind() {
	case reflect.String:
		p.Value = &idkitv1.Part_Text{Text: v.String()}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.Value = &idkitv1.Part_Integer{Integer: v.Int()}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u := v.Uint(); u <= math.MaxInt64 {
			p.Value = &idkitv1.Part_Integer{Integer: int64(u)}
		} else {
			p.Value = &idkitv1.Part_Text{Text: strconv.FormatUint(u, 10)}
		}
	default:
		p.Value = &idkitv1.Part_Text{Text: fmt.Sprint(f.Value)}
	}
	return p
}

// rpcIssue takes n IDs of sc and puts them into resp in the forms f asks
// for: the binary form unless f asks for text, or for both. The text forms
// share one string, sliced, so that a batch costs the same few allocations
// whatever n is.
func rpcIssue(ctx context.Context, sc *scheme, n int, f idkitv1.Format, resp *idkitv1.NextResponse) error {
	both := f == idkitv1.Format_FORMAT_TEXT_AND_BINARY
	text, binary := both || f == idkitv1.Format_FORMAT_TEXT, f != idkitv1.Format_FORMAT_TEXT
	if sc.raw != nil {
		raw := make([]byte, 12*n)
		if err := sc.raw(ctx, raw); err != nil {
			return err
		}
		if binary {
			resp.Raw = make([][]byte, n)
			for i := range resp.Raw {
				resp.Raw[i] = raw[12*i : 12*i+12 : 12*i+12]
			}
		}
		if text {
			bp := getBuffer()
			defer putBuffer(bp)
			b := slices.Grow((*bp)[:0], 24*n)
			var h idtext.OIDHex
			for i := range n {
				h.Next((*[12]byte)(raw[12*i:]))
				b = append(b, h.Text[:]...)
			}
			*bp = b
			all := string(b)
			resp.Ids = make([]string, n)
			for i := range resp.Ids {
				resp.Ids[i] = all[24*i : 24*i+24]
			}
		}
		return nil
	}
	values := make([]uint64, n)
	if err := sc.values(ctx, values); err != nil {
		return err
	}
	if binary {
		resp.Values = values
	}
	if text {
		resp.Ids = decimalStrings(values)
	}
	return nil
}

// decimalStrings returns the decimal text of values, as slices of one
// string, written as the HTTP API writes them.
func decimalStrings(values []uint64) []string {
	bp := getBuffer()
	defer putBuffer(bp)
	b := slices.Grow((*bp)[:0], len(values)*8)
	var w idtext.Digits
	for _, v := range values {
		w.Next(int64(v))
		b = append(append(b, w.Text[:w.N]...), '\n')
	}
	*bp = b
	all := string(b)
	ids := make([]string, len(values))
	for i := range ids {
		end := strings.IndexByte(all, '\n')
		ids[i], all = all[:end], all[end+1:]
	}
	return ids
}

// fillValues returns the values function of a scheme whose IDs are
// int64s: it takes IDs from g a run at a time, and stops between runs
// once ctx ends, as issueDecimal does.
func fillValues[T ~int64](g idkit.Generator[T]) func(ctx context.Context, dst []uint64) error {
	pool := &sync.Pool{New: func() any { return new([run]T) }}
	return func(ctx context.Context, dst []uint64) error {
		buf := pool.Get().(*[run]T)
		defer pool.Put(buf)
		for len(dst) > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := min(len(dst), run)
			if _, err := g.FillContext(ctx, buf[:k]); err != nil {
				return err
			}
			for i, id := range buf[:k] {
				dst[i] = uint64(id)
			}
			dst = dst[k:]
		}
		return nil
	}
}

// fillRaw returns objectid's raw function: the IDs' 12 bytes each.
func fillRaw(g idkit.Generator[objectid.ID]) func(ctx context.Context, dst []byte) error {
	return func(ctx context.Context, dst []byte) error {
		var buf [run / 2]objectid.ID
		for len(dst) >= 12 {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := min(len(dst)/12, len(buf))
			if _, err := g.FillContext(ctx, buf[:k]); err != nil {
				return err
			}
			for i := range buf[:k] {
				copy(dst[12*i:], buf[i][:])
			}
			dst = dst[12*k:]
		}
		return nil
	}
}

// rpcHealth answers gRPC health checks with the server's readiness, as
// /readyz does: for the whole server ("") and for idkit.v1.IDService.
type rpcHealth struct{ s *Server }

func (h rpcHealth) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	if err := checkHealthService(req.Service); err != nil {
		return nil, err
	}
	if rep := h.s.health.check(ctx); rep.Error != "" {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}

// checkHealthService refuses a health check of a service not served.
func checkHealthService(service string) error {
	if service != "" && service != idkitv1connect.IDServiceName {
		return connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown service %s, want \"\" (the server) or %s", quote(service), idkitv1connect.IDServiceName))
	}
	return nil
}

// healthWatch is the procedure of gRPC's streaming health check.
const healthWatch = "/grpc.health.v1.Health/Watch"

// watch answers grpc.health.v1.Health/Watch: the status now, then each
// change, as the checks of /readyz find it every ProbeInterval on the
// server's clock, until the client goes away. A server that drains sends
// NOT_SERVING at once and ends the stream, so that Shutdown does not
// wait for the watch.
func (h rpcHealth) watch(ctx context.Context, req *connect.Request[healthpb.HealthCheckRequest], stream *connect.ServerStream[healthpb.HealthCheckResponse]) error {
	if err := checkHealthService(req.Msg.GetService()); err != nil {
		return err
	}
	wake, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-h.s.drained:
			cancel()
		case <-wake.Done():
		}
	}()
	last := healthpb.HealthCheckResponse_UNKNOWN // never sent
	for {
		status := healthpb.HealthCheckResponse_SERVING
		if rep := h.s.health.check(ctx); rep.Error != "" {
			status = healthpb.HealthCheckResponse_NOT_SERVING
		}
		if status != last {
			if err := stream.Send(&healthpb.HealthCheckResponse{Status: status}); err != nil {
				return err
			}
			last = status
		}
		if h.s.draining.Load() {
			return nil
		}
		if err := clock.SleepContext(wake, h.s.clk, h.s.cfg.ProbeInterval); err != nil && !h.s.draining.Load() {
			return nil // the client went away
		}
	}
}
