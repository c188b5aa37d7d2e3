package serve

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/objectid"
	idkitv1 "github.com/idkit/idkit/proto/idkit/v1"
	"github.com/idkit/idkit/proto/idkit/v1/idkitv1connect"
	"github.com/idkit/idkit/traceid"
)

// listen serves s on a loopback port until the test ends, and returns
// its URL.
func listen(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		assert.ErrorIs(t, testwait.Recv(t, served, "return from Serve"), http.ErrServerClosed)
	})
	return "http://" + ln.Addr().String()
}

// httpClient returns a client of its own, whose connections close when
// the test ends: HTTP/1.1, or HTTP/2 with prior knowledge (h2c), as gRPC
// clients speak it.
func httpClient(t *testing.T, h2c bool) *http.Client {
	tr := &http.Transport{}
	if h2c {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: testwait.Bound}
}

// rpcProtocols are the protocols one port answers, as connect clients.
var rpcProtocols = []struct {
	name string
	h2c  bool
	opts []connect.ClientOption
}{
	{"connect", false, nil},
	{"connect+json", false, []connect.ClientOption{connect.WithProtoJSON()}},
	{"grpc", true, []connect.ClientOption{connect.WithGRPC()}},
	{"grpc-web", false, []connect.ClientOption{connect.WithGRPCWeb()}},
}

func idClient(t *testing.T, url string, h2c bool, opts ...connect.ClientOption) idkitv1connect.IDServiceClient {
	return idkitv1connect.NewIDServiceClient(httpClient(t, h2c), url, opts...)
}

// grpcConn returns a grpc-go connection to url over h2c, closed when the
// test ends.
func grpcConn(t *testing.T, url string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+strings.TrimPrefix(url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

// nextRequest asks for n IDs of scheme in the text form.
func nextRequest(scheme string, n int64) *connect.Request[idkitv1.NextRequest] {
	return connect.NewRequest(&idkitv1.NextRequest{Scheme: scheme, N: &n, Format: idkitv1.Format_FORMAT_TEXT})
}

// TestRPCNext takes IDs of every scheme over every protocol, one and a
// batch, in both forms, and checks that their text and binary forms are
// the same IDs, none twice, and that the calls are counted; then that a
// call that names no format gets each ID once, in the binary form, and
// FORMAT_TEXT the text form alone.
func TestRPCNext(t *testing.T) {
	t.Parallel()
	s := newServer(t, allSchemes(t))
	url := listen(t, s)
	ctx := context.Background()
	seen := make(map[string]bool)
	for _, p := range rpcProtocols {
		c := idClient(t, url, p.h2c, p.opts...)
		for _, name := range s.Schemes() {
			for _, n := range []int64{1, 1000} {
				req := nextRequest(name, n)
				req.Msg.Format = idkitv1.Format_FORMAT_TEXT_AND_BINARY
				resp, err := c.Next(ctx, req)
				require.NoError(t, err, "%s: %s n=%d", p.name, name, n)
				m := resp.Msg
				require.Len(t, m.Ids, int(n), "%s: %s", p.name, name)
				if name == "objectid" {
					require.Len(t, m.Raw, int(n))
					assert.Empty(t, m.Values)
				} else {
					require.Len(t, m.Values, int(n))
					assert.Empty(t, m.Raw)
				}
				for i, id := range m.Ids {
					require.NoError(t, parsers[name](id), "%s: %s", p.name, name)
					require.False(t, seen[name+" "+id], "%s %s repeated", name, id)
					seen[name+" "+id] = true
					if name == "objectid" {
						require.Equal(t, id, hex.EncodeToString(m.Raw[i]))
					} else {
						require.Equal(t, id, strconv.FormatUint(m.Values[i], 10))
					}
				}
			}
		}
	}

	// Without n, one ID; without a format, or with FORMAT_BINARY, each ID
	// once in the binary form; FORMAT_TEXT the text form alone.
	c := idClient(t, url, false)
	for _, f := range []idkitv1.Format{idkitv1.Format_FORMAT_UNSPECIFIED, idkitv1.Format_FORMAT_BINARY} {
		resp, err := c.Next(ctx, connect.NewRequest(&idkitv1.NextRequest{Scheme: "traceid", Format: f}))
		require.NoError(t, err, f)
		assert.Empty(t, resp.Msg.Ids, f)
		assert.Empty(t, resp.Msg.Raw, f)
		require.Len(t, resp.Msg.Values, 1, f)
		_, err = traceid.Parse(strconv.FormatUint(resp.Msg.Values[0], 10))
		assert.NoError(t, err, f)
		resp, err = c.Next(ctx, connect.NewRequest(&idkitv1.NextRequest{Scheme: "objectid", Format: f}))
		require.NoError(t, err, f)
		assert.Empty(t, resp.Msg.Ids, f)
		assert.Empty(t, resp.Msg.Values, f)
		require.Len(t, resp.Msg.Raw, 1, f)
		assert.Len(t, resp.Msg.Raw[0], 12, f)
	}
	for _, name := range []string{"traceid", "objectid"} {
		resp, err := c.Next(ctx, connect.NewRequest(&idkitv1.NextRequest{Scheme: name, Format: idkitv1.Format_FORMAT_TEXT}))
		require.NoError(t, err, name)
		require.Len(t, resp.Msg.Ids, 1, name)
		assert.NoError(t, parsers[name](resp.Msg.Ids[0]), name)
		assert.Empty(t, resp.Msg.Values, name)
		assert.Empty(t, resp.Msg.Raw, name)
	}

	// The HTTP API answers on the same port, over HTTP/2 too.
	h2 := httpClient(t, true)
	hresp, err := h2.Get(url + "/v1/traceid?n=2")
	require.NoError(t, err)
	var got struct{ IDs []string }
	require.NoError(t, json.NewDecoder(hresp.Body).Decode(&got))
	hresp.Body.Close()
	assert.Equal(t, "HTTP/2.0", hresp.Proto)
	assert.Len(t, got.IDs, 2)

	metrics := body(t, get(t, s, "/metrics"))
	assertMetric(t, metrics, `idkit_rpc_requests_total{code="ok",procedure="/idkit.v1.IDService/Next",scheme="traceid"} 11`)
	assertMetric(t, metrics, `idkit_rpc_requests_total{code="ok",procedure="/idkit.v1.IDService/Next",scheme="segment/order"} 8`)
	assertMetric(t, metrics, `idkit_rpc_request_duration_seconds_count{procedure="/idkit.v1.IDService/Next",scheme="objectid"} 11`)
	assertMetric(t, metrics, `idkit_ids_issued_total{scheme="objectid"} 4007`)
	assertMetric(t, metrics, `idkit_ids_issued_total{scheme="traceid"} 4009`)
}

// TestRPCErrors checks the codes and messages of refused calls, from a
// Connect client and from grpc-go, and that they are counted.
func TestRPCErrors(t *testing.T) {
	t.Parallel()
	s := newServer(t, allSchemes(t))
	url := listen(t, s)
	n := func(v int64) *int64 { return &v }
	tests := []struct {
		name    string
		next    *idkitv1.NextRequest
		inspect *idkitv1.InspectRequest
		code    connect.Code
		want    string
	}{
		{"n=0", &idkitv1.NextRequest{Scheme: "traceid", N: n(0)}, nil, connect.CodeInvalidArgument, "n 0 out of range, want 1 to 10000"},
		{"n=10001", &idkitv1.NextRequest{Scheme: "traceid", N: n(10_001)}, nil, connect.CodeInvalidArgument, "n 10001 out of range, want 1 to 10000"},
		{"n=-1", &idkitv1.NextRequest{Scheme: "traceid", N: n(-1)}, nil, connect.CodeInvalidArgument, "n -1 out of range, want 1 to 10000"},
		{"format", &idkitv1.NextRequest{Scheme: "traceid", Format: 7}, nil, connect.CodeInvalidArgument, "format 7 unknown"},
		{"no scheme", &idkitv1.NextRequest{}, nil, connect.CodeInvalidArgument, "scheme is empty"},
		{"unknown scheme", &idkitv1.NextRequest{Scheme: "uuid"}, nil, connect.CodeNotFound, `unknown scheme "uuid"`},
		{"unknown tag", &idkitv1.NextRequest{Scheme: "segment/user"}, nil, connect.CodeNotFound, `unknown segment tag "user"`},
		{"segment without tag", &idkitv1.NextRequest{Scheme: "segment"}, nil, connect.CodeNotFound, "segment IDs take a tag"},
		{"segment n", &idkitv1.NextRequest{Scheme: "segment/order", N: n(10_001)}, nil, connect.CodeInvalidArgument, "n 10001 out of range"},
		{"not a traceid", nil, &idkitv1.InspectRequest{Scheme: "traceid", Id: "abc"}, connect.CodeInvalidArgument, `traceid: invalid syntax: "abc"`},
		{"zero traceid", nil, &idkitv1.InspectRequest{Scheme: "traceid", Id: "0"}, connect.CodeInvalidArgument, "traceid"},
		{"negative snowflake", nil, &idkitv1.InspectRequest{Scheme: "snowflake", Id: "-5"}, connect.CodeInvalidArgument, "snowflake"},
		{"at for snowflake", nil, &idkitv1.InspectRequest{Scheme: "snowflake", Id: "1", At: timestamppb.New(start)}, connect.CodeInvalidArgument, "at is for traceid only, not snowflake"},
		{"bad at", nil, &idkitv1.InspectRequest{Scheme: "traceid", Id: "4649612847423160321", At: &timestamppb.Timestamp{Nanos: -1}}, connect.CodeInvalidArgument, "at: "},
		{"launch not in the log", nil, &idkitv1.InspectRequest{Scheme: "decimalid", Id: "10000100099"}, connect.CodeNotFound, "launch 99 of 10000100099 is not in the launch log"},
		{"zero objectid", nil, &idkitv1.InspectRequest{Scheme: "objectid", Id: "000000000000000000000000"}, connect.CodeInvalidArgument, "objectid"},
		{"inspect unknown scheme", nil, &idkitv1.InspectRequest{Scheme: "uuid", Id: "1"}, connect.CodeNotFound, `unknown scheme "uuid"`},
		{"inspect unknown tag", nil, &idkitv1.InspectRequest{Scheme: "segment/user", Id: "5"}, connect.CodeNotFound, `unknown segment tag "user"`},
		{"not a segment ID", nil, &idkitv1.InspectRequest{Scheme: "segment/order", Id: "x"}, connect.CodeInvalidArgument, "segment"},
	}
	ctx := context.Background()
	c := idClient(t, url, false) // binary: JSON cannot carry the invalid timestamp
	conn := grpcConn(t, url)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err, gerr error
			if tt.next != nil {
				_, err = c.Next(ctx, connect.NewRequest(tt.next))
				gerr = conn.Invoke(ctx, idkitv1connect.IDServiceNextProcedure, tt.next, new(idkitv1.NextResponse))
			} else {
				_, err = c.Inspect(ctx, connect.NewRequest(tt.inspect))
				gerr = conn.Invoke(ctx, idkitv1connect.IDServiceInspectProcedure, tt.inspect, new(idkitv1.InspectResponse))
			}
			require.Error(t, err)
			assert.Equal(t, tt.code, connect.CodeOf(err), "Connect: %v", err)
			assert.Contains(t, err.Error(), tt.want, "Connect")
			st := status.Convert(gerr)
			assert.Equal(t, codes.Code(tt.code), st.Code(), "grpc-go: %v", gerr)
			assert.Contains(t, st.Message(), tt.want, "grpc-go")
		})
	}
	metrics := body(t, get(t, s, "/metrics"))
	assertMetric(t, metrics, `idkit_rpc_requests_total{code="invalid_argument",procedure="/idkit.v1.IDService/Next",scheme="traceid"} 8`)
	assertMetric(t, metrics, `idkit_rpc_requests_total{code="not_found",procedure="/idkit.v1.IDService/Next",scheme=""} 6`)
	assertMetric(t, metrics, `idkit_rpc_requests_total{code="not_found",procedure="/idkit.v1.IDService/Inspect",scheme="decimalid"} 2`)
}

// TestRPCInspect checks that Inspect gives the parts that GET
// /v1/{scheme}/{id} gives, in the same order, for IDs of every scheme.
func TestRPCInspect(t *testing.T) {
	t.Parallel()
	s := newServer(t, allSchemes(t))
	url := listen(t, s)
	ctx := context.Background()
	c := idClient(t, url, true, connect.WithGRPC())
	for _, name := range s.Schemes() {
		resp, err := c.Next(ctx, nextRequest(name, 1))
		require.NoError(t, err)
		id := resp.Msg.Ids[0]
		httpPath := "/v1/" + name + "/" + id
		for _, at := range []*timestamppb.Timestamp{nil, timestamppb.New(start.Add(traceid.Period).Truncate(time.Second))} {
			if at != nil && name != "traceid" {
				continue
			}
			if at != nil {
				httpPath += "?at=" + at.AsTime().Format(time.RFC3339)
			}
			got, err := c.Inspect(ctx, connect.NewRequest(&idkitv1.InspectRequest{Scheme: name, Id: id, At: at}))
			require.NoError(t, err, "%s %s", name, id)
			names, values := inspect(t, s, httpPath)
			require.Len(t, got.Msg.Parts, len(names), "%s: %v", name, names)
			for i, p := range got.Msg.Parts {
				assert.Equal(t, names[i], p.Name, "%s", name)
				switch v := p.Value.(type) {
				case *idkitv1.Part_Text:
					assert.Equal(t, values[p.Name], v.Text, "%s %s", name, p.Name)
				case *idkitv1.Part_Integer:
					assert.Equal(t, json.Number(strconv.FormatInt(v.Integer, 10)), values[p.Name], "%s %s", name, p.Name)
				default:
					t.Errorf("%s: part %s has no value", name, p.Name)
				}
			}
		}
	}
	// A DecimalId's split form, and its launch record.
	got, err := c.Inspect(ctx, connect.NewRequest(&idkitv1.InspectRequest{Scheme: "decimalid", Id: "1415-00092-00001"}))
	require.NoError(t, err)
	parts := make(map[string]*idkitv1.Part)
	for _, p := range got.Msg.Parts {
		parts[p.Name] = p
	}
	assert.Equal(t, "14150009200001", parts["id"].GetText())
	assert.Equal(t, int64(92), parts["generator"].GetInteger())
	assert.Equal(t, "REL-1", parts["ticket"].GetText())
}

// retryInfo returns the RetryInfo detail among details, or nil.
func retryInfo(details []any) *errdetails.RetryInfo {
	for _, d := range details {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri
		}
	}
	return nil
}

// connectDetails returns the details of a Connect error.
func connectDetails(t *testing.T, err error) []any {
	t.Helper()
	var ce *connect.Error
	require.True(t, errors.As(err, &ce), "%v is not a Connect error", err)
	var out []any
	for _, d := range ce.Details() {
		v, err := d.Value()
		require.NoError(t, err)
		out = append(out, v)
	}
	return out
}

// TestRPCUnavailable: a generator that cannot issue answers Unavailable,
// as HTTP answers 503, with a RetryInfo of a second and Retry-After.
func TestRPCUnavailable(t *testing.T) {
	t.Parallel()
	// A new generator without a store issues nothing in its first second;
	// NoWait makes it say so instead of waiting.
	s := newServer(t, Options{TraceID: &traceid.Options{Node: 3, NoWait: true}, Clock: clock.NewFake(start)})
	url := listen(t, s)
	ctx := context.Background()
	for _, p := range rpcProtocols {
		_, err := idClient(t, url, p.h2c, p.opts...).Next(ctx, nextRequest("traceid", 5))
		require.Error(t, err, p.name)
		assert.Equal(t, connect.CodeUnavailable, connect.CodeOf(err), "%s: %v", p.name, err)
		assert.Contains(t, err.Error(), "traceid: IDs used up for now", p.name)
		ri := retryInfo(connectDetails(t, err))
		require.NotNil(t, ri, "%s: no RetryInfo", p.name)
		assert.Equal(t, time.Second, ri.GetRetryDelay().AsDuration(), p.name)
		var ce *connect.Error
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "1", ce.Meta().Get("Retry-After"), p.name)
	}
	var trailer metadata.MD
	err := grpcConn(t, url).Invoke(ctx, idkitv1connect.IDServiceNextProcedure,
		&idkitv1.NextRequest{Scheme: "traceid"}, new(idkitv1.NextResponse), grpc.Trailer(&trailer))
	st := status.Convert(err)
	assert.Equal(t, codes.Unavailable, st.Code(), "grpc-go: %v", err)
	ri := retryInfo(st.Details())
	require.NotNil(t, ri, "grpc-go: no RetryInfo in %v", st.Details())
	assert.Equal(t, time.Second, ri.GetRetryDelay().AsDuration())
	assert.Equal(t, []string{"1"}, trailer.Get("retry-after"))
	assertMetric(t, body(t, get(t, s, "/metrics")), `idkit_rpc_requests_total{code="unavailable",procedure="/idkit.v1.IDService/Next",scheme="traceid"} 5`)
}

// TestRPCTokensAndLimits: with a token file, a call without a valid token
// is Unauthenticated and one over the client's limit ResourceExhausted
// (HTTP's 401 and 429), while health checks need no token.
func TestRPCTokensAndLimits(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	const alice, bob = "alice-0123456789abcdef", "bob-0123456789abcdef"
	testcert.WriteFile(t, tokenFile, []byte("alice "+alice+"\nbob "+bob+"\n"))
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clock.NewFake(start), TokenFile: tokenFile, MaxN: 1000,
		Limits: Limits{IDsPerSecond: 1000, RequestsPerSecond: 100}})
	url := listen(t, s)
	ctx := context.Background()
	c := idClient(t, url, false)
	withToken := func(req *connect.Request[idkitv1.NextRequest], token string) *connect.Request[idkitv1.NextRequest] {
		req.Header().Set("Authorization", "Bearer "+token)
		return req
	}

	_, err := c.Next(ctx, nextRequest("objectid", 1))
	assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%v", err)
	assert.Contains(t, err.Error(), "a valid bearer token is required")
	_, err = c.Next(ctx, withToken(nextRequest("objectid", 1), "wrong-0123456789abcdef"))
	assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%v", err)
	_, err = c.Inspect(ctx, connect.NewRequest(&idkitv1.InspectRequest{Scheme: "objectid", Id: "0102030405060708090a0b0c"}))
	assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%v", err)

	resp, err := c.Next(ctx, withToken(nextRequest("objectid", 1000), alice))
	require.NoError(t, err)
	assert.Len(t, resp.Msg.Ids, 1000)
	_, err = c.Next(ctx, withToken(nextRequest("objectid", 1), alice))
	assert.Equal(t, connect.CodeResourceExhausted, connect.CodeOf(err), "%v", err)
	assert.Contains(t, err.Error(), "over this client's limit of IDs or requests a second; retry in 1 s")
	ri := retryInfo(connectDetails(t, err))
	require.NotNil(t, ri)
	assert.Equal(t, time.Second, ri.GetRetryDelay().AsDuration())

	// Another client is served; grpc-go sends its token as metadata.
	conn := grpcConn(t, url)
	out := new(idkitv1.NextResponse)
	require.NoError(t, conn.Invoke(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+bob),
		idkitv1connect.IDServiceNextProcedure, &idkitv1.NextRequest{Scheme: "objectid"}, out))
	assert.Len(t, out.Raw, 1)
	err = conn.Invoke(ctx, idkitv1connect.IDServiceNextProcedure, &idkitv1.NextRequest{Scheme: "objectid"}, out)
	assert.Equal(t, codes.Unauthenticated, status.Code(err), "%v", err)

	health := grpchealth.NewClient(httpClient(t, true), url, connect.WithGRPC())
	hr, err := health.Check(ctx, &grpchealth.CheckRequest{})
	require.NoError(t, err, "health needs no token")
	assert.Equal(t, grpchealth.StatusServing, hr.Status)

	metrics := body(t, get(t, s, "/metrics"))
	assertMetric(t, metrics, `idkit_rpc_requests_total{code="unauthenticated",procedure="/idkit.v1.IDService/Next",scheme=""} 3`) // refused before the request, which names the scheme, is read
	assertMetric(t, metrics, `idkit_rpc_requests_total{code="resource_exhausted",procedure="/idkit.v1.IDService/Next",scheme="objectid"} 1`)
	assertMetric(t, metrics, `idkit_rpc_requests_total{code="ok",procedure="/idkit.v1.IDService/Next",scheme="objectid"} 2`)
}

// TestRPCHealth: gRPC health checks follow readiness, as /readyz does.
func TestRPCHealth(t *testing.T) {
	t.Parallel()
	tc := &claim{node: 3}
	s := newServer(t, Options{TraceID: &traceid.Options{Claim: tc}, Clock: clock.NewFake(start)})
	url := listen(t, s)
	ctx := context.Background()
	for _, p := range rpcProtocols[:3] { // grpchealth's client speaks Connect and gRPC
		health := grpchealth.NewClient(httpClient(t, p.h2c), url, p.opts...)
		for _, service := range []string{"", idkitv1connect.IDServiceName} {
			hr, err := health.Check(ctx, &grpchealth.CheckRequest{Service: service})
			require.NoError(t, err, "%s %q", p.name, service)
			assert.Equal(t, grpchealth.StatusServing, hr.Status, "%s %q", p.name, service)
		}
		_, err := health.Check(ctx, &grpchealth.CheckRequest{Service: "nope.v1.Nope"})
		assert.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%s: %v", p.name, err)
	}
	tc.lost.Store(true)
	health := grpchealth.NewClient(httpClient(t, true), url, connect.WithGRPC())
	hr, err := health.Check(ctx, &grpchealth.CheckRequest{})
	require.NoError(t, err)
	assert.Equal(t, grpchealth.StatusNotServing, hr.Status, "the node claim is lost")
	st, _ := getHealth(t, s)
	assert.Equal(t, http.StatusServiceUnavailable, st)
	assertMetric(t, body(t, get(t, s, "/metrics")), `idkit_rpc_requests_total{code="ok",procedure="/grpc.health.v1.Health/Check",scheme=""} 7`)
}

// TestRPCShutdown: Shutdown lets a gRPC call in flight finish, as it does
// an HTTP request: the call waits on the fake clock for the generator's
// first second.
func TestRPCShutdown(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	s := newServer(t, Options{TraceID: &traceid.Options{Node: 1}, Clock: clk})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	c := idClient(t, "http://"+ln.Addr().String(), true, connect.WithGRPC())

	type result struct {
		ids []string
		err error
	}
	inFlight := make(chan result, 1)
	go func() {
		resp, err := c.Next(context.Background(), nextRequest("traceid", 3))
		if err != nil {
			inFlight <- result{err: err}
			return
		}
		inFlight <- result{ids: resp.Msg.Ids}
	}()
	testwait.Sleepers(t, clk, 1) // the call waits for the next second

	stopped := make(chan error, 1)
	go func() { stopped <- s.Shutdown(context.Background()) }()
	testwait.Until(t, func() bool {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		return err != nil
	}, "refusing connections once Shutdown began")
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned %v with a call in flight", err)
	default:
	}
	clk.Advance(time.Second)
	r := testwait.Recv(t, inFlight, "answer to the call in flight")
	require.NoError(t, r.err)
	assert.Len(t, r.ids, 3)
	require.NoError(t, testwait.Recv(t, stopped, "return from Shutdown"))
	assert.ErrorIs(t, testwait.Recv(t, served, "return from Serve"), http.ErrServerClosed)
}

// TestRPCReflection lists the services through gRPC server reflection
// with grpc-go's client, as grpcurl does, then calls Next and Inspect with
// messages built from the descriptors it sent: no .proto, no generated
// code.
func TestRPCReflection(t *testing.T) {
	t.Parallel()
	s := newServer(t, allSchemes(t))
	url := listen(t, s)
	conn := grpcConn(t, url)
	ctx := context.Background()
	stream, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	require.NoError(t, err)
	ask := func(req *rpb.ServerReflectionRequest) *rpb.ServerReflectionResponse {
		t.Helper()
		require.NoError(t, stream.Send(req))
		resp, err := stream.Recv()
		require.NoError(t, err)
		return resp
	}
	list := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}})
	var names []string
	for _, svc := range list.GetListServicesResponse().GetService() {
		names = append(names, svc.GetName())
	}
	assert.Equal(t, []string{"idkit.v1.IDService"}, names)

	files := ask(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "idkit.v1.IDService"}})
	set := &descriptorpb.FileDescriptorSet{}
	for _, b := range files.GetFileDescriptorResponse().GetFileDescriptorProto() {
		fd := &descriptorpb.FileDescriptorProto{}
		require.NoError(t, proto.Unmarshal(b, fd))
		set.File = append(set.File, fd)
	}
	require.NoError(t, stream.CloseSend())
	_, err = stream.Recv()
	require.ErrorIs(t, err, io.EOF)

	reg, err := protodesc.NewFiles(set)
	require.NoError(t, err, "the files sent, with their imports, make a registry")
	d, err := reg.FindDescriptorByName("idkit.v1.IDService")
	require.NoError(t, err)
	svc := d.(protoreflect.ServiceDescriptor)
	call := func(method, reqJSON string) map[string]any {
		t.Helper()
		m := svc.Methods().ByName(protoreflect.Name(method))
		require.NotNil(t, m, method)
		req := dynamicpb.NewMessage(m.Input())
		require.NoError(t, protojson.Unmarshal([]byte(reqJSON), req))
		resp := dynamicpb.NewMessage(m.Output())
		require.NoError(t, conn.Invoke(ctx, "/idkit.v1.IDService/"+method, req, resp))
		b, err := protojson.Marshal(resp)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(b, &out))
		return out
	}
	next := call("Next", `{"scheme":"traceid","n":"3"}`)
	assert.Nil(t, next["ids"], "the binary form alone")
	require.Len(t, next["values"], 3)
	next = call("Next", `{"scheme":"traceid","n":"3","format":"FORMAT_TEXT_AND_BINARY"}`)
	require.Len(t, next["ids"], 3)
	require.Len(t, next["values"], 3)
	assert.Equal(t, next["ids"], next["values"], "in JSON, fixed64 is the decimal text")
	id := next["ids"].([]any)[0].(string)
	inspected := call("Inspect", `{"scheme":"traceid","id":"`+id+`"}`)
	parts := inspected["parts"].([]any)
	assert.Equal(t, map[string]any{"name": "scheme", "text": "traceid"}, parts[0])
	assert.Equal(t, map[string]any{"name": "id", "text": id}, parts[1])
	assertMetric(t, body(t, get(t, s, "/metrics")),
		`idkit_rpc_requests_total{code="ok",procedure="/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",scheme=""} 1`)
}
