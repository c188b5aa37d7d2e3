package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
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

// TestMaxConns: past MaxConns open connections, a new client (from
// another address) waits while
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
	second := dialFrom(t, "127.0.0.2", ln.Addr().String()) // another client: the first holds its share
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

// dialFrom connects to addr from the loopback address ip (Linux routes
// all of 127.0.0.0/8 to lo), so that one test plays several clients; the
// connection is closed when the test ends.
func dialFrom(t testing.TB, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: testwait.Bound}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err, "dial %s from %s", addr, ip)
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends a GET of path on c and reads the answer from r, which
// reads c; the answer's body is read, and left in it.
func roundTrip(c net.Conn, r *bufio.Reader, path string) (*http.Response, error) {
	if err := c.SetDeadline(time.Now().Add(testwait.Bound)); err != nil {
		return nil, err
	}
	if _, err := c.Write([]byte("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, err
}

// TestMaxConnsPerClient: one address that holds its share of the main
// port's connections, all busy, has its next connection closed at once,
// while a second address connects and is served; once one of the first
// address's connections is idle, its next connection closes that one,
// not another address's.
func TestMaxConnsPerClient(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{ObjectID: &objectid.Options{}, Limits: Limits{MaxConns: 4, MaxConnsPerClient: 2}})
	ln, addr := freePort(t)
	served(t, s, s.Serve, ln)
	scrape := func() string { return body(t, get(t, s.metricsOnly(), "/metrics")) }
	const a, b = "127.0.0.2", "127.0.0.3"
	const half = "GET /livez HTTP/1.1\r\nHo" // a request half sent: the connection is busy

	var busy []net.Conn
	for range 2 {
		c := dialFrom(t, a, addr)
		_, err := c.Write([]byte(half))
		require.NoError(t, err)
		busy = append(busy, c)
	}
	testwait.Until(t, func() bool {
		return strings.Contains(scrape(), `idkit_connections_open{listener="main"} 2`+"\n")
	}, "the first address's two connections open")

	over := dialFrom(t, a, addr)
	require.NoError(t, over.SetDeadline(time.Now().Add(testwait.Bound)))
	_, err := over.Read(make([]byte, 1))
	require.Error(t, err, "the first address's third connection, with both of its others busy")
	assert.False(t, errors.Is(err, os.ErrDeadlineExceeded), "the third connection is closed at once, not left waiting: %v", err)
	assertMetric(t, scrape(), `idkit_connections_refused_total{listener="main"} 1`)

	// A second address is served, on two connections, while the first
	// holds its share.
	var other []*bufio.Reader
	var otherConns []net.Conn
	for range 2 {
		c := dialFrom(t, b, addr)
		r := bufio.NewReader(c)
		resp, err := roundTrip(c, r, "/v1/objectid")
		require.NoError(t, err, "the second address's request")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		other, otherConns = append(other, r), append(otherConns, c)
	}

	// One of the first address's requests is done: that connection is
	// idle, and the address's next connection takes its room.
	_, err = busy[0].Write([]byte("st: x\r\n\r\n"))
	require.NoError(t, err)
	r0 := bufio.NewReader(busy[0])
	resp, err := http.ReadResponse(r0, nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	// The server marks a connection idle after it has sent the answer,
	// so the client may read the answer first: the address's next
	// connection finds the idle one only once the server has (the second
	// address's two and this one are idle, until their idle timeout).
	testwait.Until(t, func() bool {
		return strings.Contains(scrape(), `idkit_connections_idle{listener="main"} 3`+"\n")
	}, "the first address's served connection idle, beside the second address's two")
	assertMetric(t, scrape(), `idkit_connections_open{listener="main"} 4`)
	next := dialFrom(t, a, addr)
	resp, err = roundTrip(next, bufio.NewReader(next), "/v1/objectid")
	require.NoError(t, err, "the first address's connection in the room of its idle one")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = r0.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the first address's idle connection closed to make room")
	for i, c := range otherConns {
		resp, err := roundTrip(c, other[i], "/livez")
		require.NoError(t, err, "the second address's connection %d, kept", i)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	}
	m := scrape()
	assertMetric(t, m, `idkit_connections_evicted_total{listener="main"} 1`)
	assertMetric(t, m, `idkit_connections_refused_total{listener="main"} 1`)
}

// TestMaxConnsPerClientOptions: a client's share defaults to a quarter
// of MaxConns, at least 1, and none without a cap; a share over the cap
// is refused, naming the field and its range.
func TestMaxConnsPerClientOptions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   Limits
		want int
	}{
		{Limits{}, DefaultMaxConns / 4},
		{Limits{MaxConns: 2}, 1},
		{Limits{MaxConns: 100, MaxConnsPerClient: 100}, 100},
		{Limits{MaxConns: 100, MaxConnsPerClient: -1}, -1},
		{Limits{MaxConns: -1}, -1},
		{Limits{MaxConns: -1, MaxConnsPerClient: 8}, 8},
	} {
		s := newServer(t, Options{ObjectID: &objectid.Options{}, Limits: tt.in})
		assert.Equal(t, tt.want, s.cfg.Limits.MaxConnsPerClient, "%+v", tt.in)
	}
	_, err := New(context.Background(), Options{ObjectID: &objectid.Options{}, Limits: Limits{MaxConns: 10, MaxConnsPerClient: 11}})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "Options.Limits.MaxConnsPerClient 11 out of range, want 1 to MaxConns (10)")
}
