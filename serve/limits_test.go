package serve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/objectid"
)

// TestGreedyClient: a client that takes its second's worth of IDs gets
// 429 with Retry-After, while another client is served as before; the
// greedy one is served again a second later.
func TestGreedyClient(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	const greedy, polite = "greedy-0123456789abcdef", "polite-0123456789abcdef"
	testcert.WriteFile(t, tokenFile, []byte("greedy "+greedy+"\npolite "+polite+"\n"))
	clk := clock.NewFake(start)
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clk, TokenFile: tokenFile, MaxN: 1000,
		Limits: Limits{IDsPerSecond: 1000, RequestsPerSecond: 5}})
	ask := func(token, query string) *http.Response {
		r := httptest.NewRequest(http.MethodGet, "/v1/objectid"+query, nil)
		r.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		return rec.Result()
	}
	require.Equal(t, http.StatusOK, ask(greedy, "?n=1000").StatusCode)
	resp := ask(greedy, "?n=1")
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "over its IDs a second")
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, body(t, resp), "over this client's limit")

	for i := range 5 {
		assert.Equal(t, http.StatusOK, ask(polite, "").StatusCode, "polite request %d", i)
	}
	assert.Equal(t, http.StatusTooManyRequests, ask(polite, "").StatusCode, "over its requests a second")

	clk.Advance(time.Second)
	assert.Equal(t, http.StatusOK, ask(greedy, "?n=1000").StatusCode, "a second later")
	assertMetric(t, body(t, get(t, s, "/metrics")), `idkit_http_requests_total{code="429",route="ids",scheme="objectid"} 2`)
}

// TestNoLimits: negative limits turn them off.
func TestNoLimits(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clock.NewFake(start),
		Limits: Limits{IDsPerSecond: -1, RequestsPerSecond: -1}})
	for range 50 {
		require.Equal(t, http.StatusOK, get(t, s, "/v1/objectid?n=10000").StatusCode)
	}
}

// TestMaxConns: past MaxConns open connections, a new client waits while
// every connection is busy, and takes the room of the first one that goes
// idle, which is closed.
func TestMaxConns(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Limits: Limits{MaxConns: 1}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go s.Serve(ln)
	const request = "GET /livez HTTP/1.1\r\nHost: x\r\n\r\n"
	first, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer first.Close()
	_, err = first.Write([]byte(request[:10])) // busy: its request is half sent
	require.NoError(t, err)
	testwait.Until(t, func() bool {
		return strings.Contains(body(t, get(t, s, "/metrics")), `idkit_connections_open{listener="main"} 1`+"\n")
	}, "the first connection open")
	second, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer second.Close()
	served := make(chan error, 1)
	go func() {
		_, err := second.Write([]byte(request))
		if err == nil {
			var resp *http.Response
			if resp, err = http.ReadResponse(bufio.NewReader(second), nil); err == nil {
				resp.Body.Close()
			}
		}
		served <- err
	}()
	select {
	case err := <-served:
		t.Fatalf("the second connection was served (%v) while the first, busy, held the only room", err)
	default:
	}
	_, err = first.Write([]byte(request[10:]))
	require.NoError(t, err)
	r := bufio.NewReader(first)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err, "the first connection is served")
	resp.Body.Close()
	assert.NoError(t, testwait.Recv(t, served, "the second connection served once the first went idle"))
	_, err = r.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the idle connection closed to make room")
	assertMetric(t, body(t, get(t, s, "/metrics")), `idkit_connections_evicted_total{listener="main"} 1`)
}
