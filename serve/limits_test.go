package serve

import (
	"bufio"
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
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
		Limits: Limits{IDsPerSecond: -1, RequestsPerSecond: -1, NodeIDsPerSecond: -1}})
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

// TestNodeCeilingKeepsAShare: five greedy clients behind a trusted proxy,
// each within its own limit, ask for twelve times the node-wide ceiling
// between them, and fill the node before a sixth client comes. The sixth,
// which asks for a tenth of the ceiling, waits no more than about a second
// for the IDs issued to drop out of the last second, and from then on is
// served every time, while the greedy ones get 429 from the ceiling and
// the node issues no more than the ceiling allows, and most of it.
func TestNodeCeilingKeepsAShare(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	const ceiling = 1000
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clk, MaxN: 1000,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24")},
		Limits:         Limits{IDsPerSecond: ceiling, RequestsPerSecond: -1, NodeIDsPerSecond: ceiling}})
	ask := func(client string, n int) *http.Response {
		r := httptest.NewRequest(http.MethodGet, "/v1/objectid?n="+itoa(n), nil)
		r.RemoteAddr = "10.0.0.7:51000" // the proxy
		r.Header.Set("X-Forwarded-For", client+", 10.0.0.3")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		return rec.Result()
	}
	greedy := []string{"198.51.100.1", "198.51.100.2", "198.51.100.3", "198.51.100.4", "198.51.100.5"}
	const sixth = "203.0.113.6"
	served, refused := map[string]int{}, map[string]int{}
	var nodeRefusal *http.Response
	const seconds, ticks, settle = 10, 10, 12 // a tick is a tenth of a second
	sixthLate := 0                            // refusals of the sixth after the first settle ticks
	for tick := range seconds * ticks {
		for _, c := range greedy {
			for range 5 { // 2,500 IDs a second each
				resp := ask(c, 50)
				switch resp.StatusCode {
				case http.StatusOK:
					served[c] += 50
				case http.StatusTooManyRequests:
					refused[c]++
					nodeRefusal = resp
				default:
					t.Fatalf("%s: status %d", c, resp.StatusCode)
				}
			}
		}
		resp := ask(sixth, 10) // 100 IDs a second
		switch {
		case resp.StatusCode == http.StatusOK:
			served[sixth] += 10
		case tick < settle:
			refused[sixth]++
		default:
			sixthLate++
		}
		clk.Advance(time.Second / ticks)
	}
	assert.Zero(t, sixthLate, "refusals of the sixth client once the IDs issued before it came are a second old")
	assert.LessOrEqual(t, refused[sixth], settle)
	assert.GreaterOrEqual(t, served[sixth], (seconds*ticks-settle)*10, "the sixth client's IDs")
	total := served[sixth]
	for _, c := range greedy {
		assert.Positive(t, served[c], "%s is served too", c)
		assert.Positive(t, refused[c], "%s is refused past its share", c)
		total += served[c]
	}
	assert.LessOrEqual(t, total, (seconds+1)*ceiling, "IDs issued in %d s under a ceiling of %d a second", seconds, ceiling)
	assert.GreaterOrEqual(t, total, seconds*ceiling*3/4, "the node's use")
	require.NotNil(t, nodeRefusal)
	assert.Equal(t, "1", nodeRefusal.Header.Get("Retry-After"))
	assert.Contains(t, body(t, nodeRefusal), "this server's objectid IDs for this second are taken")
}

// TestTrustedProxies: X-Forwarded-For names the client only when a
// trusted proxy sends it; from any other address the remote host is the
// client, whatever the header says.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Clock: clock.NewFake(start),
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("fd00::/8")}})
	for _, tt := range []struct {
		remote, xff, want string
	}{
		{"192.0.2.9:4000", "", "192.0.2.9"},
		{"192.0.2.9:4000", "198.51.100.1", "192.0.2.9"}, // not a proxy: the header is the client's own
		{"10.0.0.7:4000", "", "10.0.0.7"},
		{"10.0.0.7:4000", "198.51.100.1", "198.51.100.1"},
		{"10.0.0.7:4000", "203.0.113.5, 198.51.100.1, 10.0.0.3", "198.51.100.1"}, // the client's own header before it
		{"10.0.0.7:4000", "10.0.0.4, 10.0.0.3", "10.0.0.4"},                      // all proxies: the farthest
		{"10.0.0.7:4000", "198.51.100.1, garbage", "10.0.0.7"},                   // a proxy that wrote no address
		{"10.0.0.7:4000", "[2001:db8::1]:4711", "2001:db8::1"},
		{"[fd00::7]:4000", "192.0.2.1:80", "192.0.2.1"},
		{"[::ffff:10.0.0.7]:4000", "198.51.100.1", "198.51.100.1"},
	} {
		r := httptest.NewRequest(http.MethodGet, "/v1/objectid", nil)
		r.RemoteAddr = tt.remote
		if tt.xff != "" {
			r.Header.Set("X-Forwarded-For", tt.xff)
		}
		got, ok := s.authenticate(r)
		assert.True(t, ok)
		assert.Equal(t, "addr "+tt.want, got, "%s with X-Forwarded-For %q", tt.remote, tt.xff)
	}

	_, err := New(context.Background(), Options{ObjectID: &objectid.Options{}, TrustedProxies: []netip.Prefix{{}}})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "Options.TrustedProxies[0]")
	_, err = New(context.Background(), Options{ObjectID: &objectid.Options{}, Limits: Limits{NodeIDsPerSecond: math.Inf(1)}})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "Options.Limits.NodeIDsPerSecond +Inf, want a positive number")
}
