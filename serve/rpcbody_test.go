package serve

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/objectid"
	idkitv1 "github.com/idkit/idkit/proto/idkit/v1"
	"github.com/idkit/idkit/proto/idkit/v1/idkitv1connect"
)

const rpcToken = "alice-0123456789abcdef"

// rpcServer serves objectid with a token file and returns the server and
// its URL.
func rpcServer(t *testing.T, l Limits) (*Server, string) {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	testcert.WriteFile(t, tokenFile, []byte("alice "+rpcToken+"\n"))
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clock.NewFake(start), TokenFile: tokenFile, Limits: l})
	return s, listen(t, s)
}

// gzipped returns b compressed.
func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// bomb returns a NextRequest of size bytes, gzipped: a few KB that
// inflate to size.
func bomb(t *testing.T, size int) []byte {
	t.Helper()
	msg, err := proto.Marshal(&idkitv1.NextRequest{Scheme: strings.Repeat("a", size)})
	require.NoError(t, err)
	return gzipped(t, msg)
}

// post sends a Connect unary call of body, gzipped, with token if given.
func post(t *testing.T, url string, body []byte, token string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+idkitv1connect.IDServiceNextProcedure, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/proto")
	req.Header.Set("Content-Encoding", "gzip")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient(t, false).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

// TestRPCRefusedBeforeTheBody: a call to IDService without a token is
// refused before its body is read or inflated: a gzip bomb inflates not
// one byte, over Connect and gRPC, and a call whose body is never sent is
// answered all the same.
func TestRPCRefusedBeforeTheBody(t *testing.T) {
	t.Parallel()
	s, url := rpcServer(t, Limits{})
	scrape := func() string { return body(t, get(t, s, "/metrics")) }

	b := bomb(t, 4<<20)
	require.Less(t, len(b), 64<<10, "the bomb fits the wire limit")
	resp, answer := post(t, url, b, "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, answer)
	assert.Contains(t, answer, `"code":"unauthenticated"`)
	assertMetric(t, scrape(), "idkit_rpc_inflated_bytes_total 0")

	big := connect.NewRequest(&idkitv1.NextRequest{Scheme: strings.Repeat("a", 1<<20)})
	_, err := idClient(t, url, true, connect.WithGRPC(), connect.WithSendGzip()).Next(context.Background(), big)
	assert.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "gRPC: %v", err)
	assertMetric(t, scrape(), "idkit_rpc_inflated_bytes_total 0")

	// Headers that announce a body which never comes: the answer does not
	// wait for it (the server's read timeout, 10 s, would end the wait),
	// and the connection closes after it. A body on a route that takes
	// none is refused as soon.
	for _, tt := range []struct {
		request string
		want    int
	}{
		{"POST " + idkitv1connect.IDServiceNextProcedure + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/proto\r\n" +
			"Content-Encoding: gzip\r\nContent-Length: 65536\r\n\r\n", http.StatusUnauthorized},
		{"GET /v1/objectid HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n", http.StatusRequestEntityTooLarge},
	} {
		c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(testwait.Bound)))
		began := time.Now()
		_, err = c.Write([]byte(tt.request))
		require.NoError(t, err)
		r, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err, "an answer before the body")
		r.Body.Close()
		took := time.Since(began)
		assert.Equal(t, tt.want, r.StatusCode)
		assert.Less(t, took, 5*time.Second, "the answer came %v after the headers: it waited for the body", took)
		assert.True(t, r.Close, "the connection is closed after the answer")
	}
	assertMetric(t, scrape(), `idkit_rpc_requests_total{code="unauthenticated",procedure="/idkit.v1.IDService/Next",scheme=""} 3`)
}

// TestRPCTooLarge: a message over 64 KiB, plain or once inflated, is
// InvalidArgument (HTTP 400), not ResourceExhausted (429), and a bomb is
// inflated no further than the limit; a 429 carries Retry-After.
func TestRPCTooLarge(t *testing.T) {
	t.Parallel()
	s, url := rpcServer(t, Limits{RequestsPerSecond: 1})

	resp, answer := post(t, url, bomb(t, 4<<20), rpcToken)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode, answer)
	assert.Contains(t, answer, `"code":"invalid_argument"`)
	assert.Contains(t, answer, "larger than 65536 bytes")
	m := body(t, get(t, s, "/metrics"))
	inflated := metricValue(t, m, "idkit_rpc_inflated_bytes_total")
	assert.LessOrEqual(t, inflated, float64(rpcMaxRequest+1), "bytes inflated of a 4 MiB bomb")
	assert.Positive(t, inflated)

	plain := connect.NewRequest(&idkitv1.NextRequest{Scheme: strings.Repeat("a", 100<<10)})
	plain.Header().Set("Authorization", "Bearer "+rpcToken)
	for _, p := range rpcProtocols {
		_, err := idClient(t, url, p.h2c, p.opts...).Next(context.Background(), plain)
		assert.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "%s: %v", p.name, err)
	}

	// One request a second: the second of a burst is 429 with Retry-After.
	msg, err := proto.Marshal(&idkitv1.NextRequest{Scheme: "objectid"})
	require.NoError(t, err)
	ok := gzipped(t, msg)
	resp, answer = post(t, url, ok, rpcToken)
	require.Equal(t, http.StatusOK, resp.StatusCode, answer)
	resp, answer = post(t, url, ok, rpcToken)
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, answer)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
}

// metricValue returns the value of the metric line that starts with name
// and a space.
func metricValue(t *testing.T, metrics, name string) float64 {
	t.Helper()
	for line := range strings.Lines(metrics) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestRPCStreamMessageTooLarge: a message over 64 KiB on a streaming RPC
// (health's Watch here; server reflection alike) ends the stream with
// ResourceExhausted, as gRPC servers answer a message over their limit;
// unary RPCs answer InvalidArgument (TestRPCTooLarge).
func TestRPCStreamMessageTooLarge(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{ObjectID: &objectid.Options{}})
	ln, addr := freePort(t)
	served(t, s, s.Serve, ln)
	hc := healthpb.NewHealthClient(grpcConn(t, "http://"+addr))
	ctx, cancel := context.WithTimeout(t.Context(), testwait.Bound)
	defer cancel()
	stream, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: strings.Repeat("a", 100<<10)})
	require.NoError(t, err)
	_, err = stream.Recv()
	assert.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)
}
