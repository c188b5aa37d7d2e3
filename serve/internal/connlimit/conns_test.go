package connlimit

import (
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testwait"
)

// TestIdleAccounting: connections that the hook marks idle and busy are
// counted idle in all and by client, a connection idle again is idle
// since its latest request, a client's busy connections at their cap
// refuse its next, at its share the client's connection idle longest is
// closed, at the cap the one idle longest of all, and each eviction
// closes one connection and gives its room back at once, not again when
// the server closes it.
func TestIdleAccounting(t *testing.T) {
	t.Parallel()
	idle := prometheus.NewGauge(prometheus.GaugeOpts{Name: "i"})
	evicted := prometheus.NewCounter(prometheus.CounterOpts{Name: "e"})
	refused := prometheus.NewCounter(prometheus.CounterOpts{Name: "r"})
	lim := New(Limits{Max: 3, PerClient: 3, Busy: 2}, evicted, refused,
		prometheus.NewCounter(prometheus.CounterOpts{Name: "t"}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "o"}), idle)
	inner, addr := freePort(t)
	ln := lim.Listener(inner)
	t.Cleanup(func() { ln.Close() })

	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	closed := func(c net.Conn, what string) {
		t.Helper()
		_, err := c.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF, what)
	}
	counts := func() (open, admitted, idle int) {
		lim.mu.Lock()
		defer lim.mu.Unlock()
		for _, cc := range lim.byClient {
			admitted, idle = admitted+cc.admitted, idle+int(cc.idle.Load())
		}
		return lim.n, admitted, idle
	}
	var server []*Conn
	var client []net.Conn
	for range 2 {
		client = append(client, dial("127.0.0.1"))
		s, err := ln.Accept()
		require.NoError(t, err)
		server = append(server, s.(*Conn))
	}
	a, b := server[0], server[1]
	lim.ConnState(a, http.StateIdle)
	lim.ConnState(b, http.StateIdle)
	lim.ConnState(a, http.StateActive)
	lim.ConnState(a, http.StateIdle)
	lim.ConnState(a, http.StateIdle) // counted once
	assert.Equal(t, 2.0, value(t, idle))
	open, admitted, idled := counts()
	assert.Equal(t, [3]int{2, 2, 2}, [3]int{open, admitted, idled}, "open, admitted and idle")

	client = append(client, dial("127.0.0.1"))
	s, err := ln.Accept()
	require.NoError(t, err)
	c := s.(*Conn) // the cap's last room
	lim.ConnState(b, http.StateActive)
	lim.ConnState(c, http.StateActive)

	accepted := acceptAll(ln)
	// b and c Busy: the client's next is refused, though a is idle.
	x := dial("127.0.0.1")
	testwait.Until(t, func() bool { return value(t, refused) == 1 }, "the client's third busy connection refused")
	closed(x, "the refused connection closed")

	lim.ConnState(b, http.StateIdle)
	lim.ConnState(c, http.StateIdle)
	lim.ConnState(b, http.StateActive)
	lim.ConnState(b, http.StateIdle) // idle since: a, c, b
	dial("127.0.0.1")
	y := testwait.Recv(t, accepted, "the client's connection at its share")
	assert.Equal(t, 1.0, value(t, evicted), "one evicted at the client's share")
	closed(client[0], "a, the client's idle longest, closed")
	assert.Zero(t, a.idleSince.Load(), "a no longer idle")

	dial("127.0.0.2")
	z := testwait.Recv(t, accepted, "another client's connection at the cap")
	assert.Equal(t, 2.0, value(t, evicted), "one more evicted at the cap")
	closed(client[2], "c, idle longest of all, closed")
	assert.NotZero(t, b.idleSince.Load(), "b still idle")
	assert.Equal(t, 1.0, value(t, idle))

	for _, s := range []*Conn{a, c} { // as the server does once their reads fail
		lim.ConnState(s, http.StateClosed)
		s.Close() // use of a closed connection: the eviction closed it
	}
	open, admitted, idled = counts()
	assert.Equal(t, [3]int{3, 3, 1}, [3]int{open, admitted, idled}, "open, admitted and idle: b, y and z, their rooms counted once")
	for _, s := range []*Conn{b, y, z} {
		lim.ConnState(s, http.StateClosed)
		require.NoError(t, s.Close())
	}
	assert.Zero(t, value(t, idle))
	lim.mu.Lock()
	defer lim.mu.Unlock()
	assert.Zero(t, lim.n, "connections open")
	assert.Empty(t, lim.conns)
	assert.Empty(t, lim.byClient)
}

// TestEvictionTakesFromTheGreediest: at the cap, the idle connection
// closed to make room is one of the address that holds the most
// connections, its idle longest, not the one idle longest of all: a
// client that keeps one connection alive between requests keeps it
// while another address holds several, however recently they were used.
func TestEvictionTakesFromTheGreediest(t *testing.T) {
	t.Parallel()
	evicted := prometheus.NewCounter(prometheus.CounterOpts{Name: "e"})
	lim := New(Limits{Max: 4, PerClient: 4}, evicted, prometheus.NewCounter(prometheus.CounterOpts{Name: "r"}),
		prometheus.NewCounter(prometheus.CounterOpts{Name: "t"}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "o"}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "i"}))
	inner, addr := freePort(t)
	ln := lim.Listener(inner)
	t.Cleanup(func() { ln.Close() })
	accepted := acceptAll(ln)
	dial := func(from string) (net.Conn, *Conn) {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		s := testwait.Recv(t, accepted, "the connection from "+from)
		t.Cleanup(func() { s.Close() }) // its sweeper stops with the last
		return c, s
	}
	open := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout() // still open: the read waited
	}

	kept, keptConn := dial("127.0.0.1") // the kept-alive client: idle longest of all
	lim.ConnState(keptConn, http.StateIdle)
	var greedy []net.Conn
	for range 3 {
		c, s := dial("127.0.0.2")
		lim.ConnState(s, http.StateIdle)
		greedy = append(greedy, c)
	}
	_, _ = dial("127.0.0.3") // at the cap: one idle connection closed
	assert.Equal(t, 1.0, value(t, evicted))
	assert.True(t, open(kept), "the kept-alive client's one connection, idle longest of all, still open")
	greedy[0].SetReadDeadline(time.Now().Add(testwait.Bound))
	_, err := greedy[0].Read(make([]byte, 1))
	assert.ErrorIs(t, err, io.EOF, "the greediest address's connection idle longest closed")
	for _, c := range greedy[1:] {
		assert.True(t, open(c), "the greediest address's other connections still open")
	}
}

// value returns a gauge's or a counter's value.
func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var d dto.Metric
	require.NoError(t, m.Write(&d))
	if d.Gauge != nil {
		return d.Gauge.GetValue()
	}
	return d.Counter.GetValue()
}

// acceptAll accepts on ln, a limited listener, until it is closed, and
// hands each connection on.
func acceptAll(ln net.Listener) <-chan *Conn {
	accepted := make(chan *Conn)
	go func() {
		for {
			s, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- s.(*Conn)
		}
	}()
	return accepted
}

// freePort returns a listener on a free port of the loopback address, and
// its address.
func freePort(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return ln, ln.Addr().String()
}
