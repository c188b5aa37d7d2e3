package serve

import (
	"crypto/tls"
	"math"
	"net"
	"net/http"
	"net/netip"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// connLimit caps the connections a listener keeps open, in all and, if
// perClient > 0, from each client address (the remote IP). When a client
// connects at the cap, the connection idle longest (a kept-alive one
// between requests) is closed to make room; with none idle, the new
// connection waits, accepted but not yet served, until one closes. At its
// client's share it is that client's connection idle longest that is
// closed, and with none of them idle the new connection is closed at
// once: waiting would hold up the accepts of every other client, so one
// address can neither crowd the others out nor make them wait. So idle
// connections never keep a client out, and a listener holds at most its
// cap and one waiting connection of descriptors.
type connLimit struct {
	max, perClient int
	evicted        prometheus.Counter
	refused        prometheus.Counter
	open           prometheus.Gauge
	idleNow        prometheus.Gauge // len(idle)

	mu       sync.Mutex
	n        int                   // connections open
	byClient map[netip.Addr]int    // connections open by client address, when perClient > 0
	seq      uint64                // orders the idle connections
	idle     map[net.Conn]idleConn // connections idle now, as http.Server sees them
	changed  chan struct{}         // closed and replaced when n or idle changes
}

// idleConn is an idle connection's place in the order it went idle, and
// its client's address.
type idleConn struct {
	seq    uint64
	client netip.Addr
}

// newConnLimit returns a cap of max connections (none if max < 0), and of
// perClient from one address (none if perClient <= 0).
func newConnLimit(max, perClient int, evicted, refused prometheus.Counter, open, idle prometheus.Gauge) *connLimit {
	if max < 0 {
		max = math.MaxInt
	}
	return &connLimit{max: max, perClient: perClient, evicted: evicted, refused: refused, open: open, idleNow: idle,
		byClient: make(map[netip.Addr]int), idle: make(map[net.Conn]idleConn), changed: make(chan struct{})}
}

// signal wakes the waiting accept; l.mu is held.
func (l *connLimit) signal() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// clientOf returns the address a connection comes from, or the zero
// address when it is not an IP connection (no share applies then).
func clientOf(c net.Conn) netip.Addr {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// acquire takes room for one connection of client: at client's share it
// closes that client's connection idle longest, or refuses (false) with
// none idle; at the cap it closes the connection idle longest, or waits
// while none is idle. It returns false once done is closed.
func (l *connLimit) acquire(client netip.Addr, done <-chan struct{}) bool {
	share := l.perClient > 0 && client.IsValid()
	for {
		l.mu.Lock()
		if share && l.byClient[client] >= l.perClient {
			oldest := l.oldestIdle(client)
			if oldest == nil {
				l.mu.Unlock()
				l.refused.Inc()
				return false
			}
			l.evict(oldest) // unlocks
			continue
		}
		if l.n < l.max {
			l.n++
			if share {
				l.byClient[client]++
			}
			l.open.Set(float64(l.n))
			l.mu.Unlock()
			return true
		}
		if oldest := l.oldestIdle(netip.Addr{}); oldest != nil {
			l.evict(oldest) // unlocks
			continue
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}

// oldestIdle returns the connection idle longest, of client if it is a
// valid address, or nil; l.mu is held.
func (l *connLimit) oldestIdle(client netip.Addr) net.Conn {
	var oldest net.Conn
	var at uint64
	for c, ic := range l.idle {
		if client.IsValid() && ic.client != client {
			continue
		}
		if oldest == nil || ic.seq < at {
			oldest, at = c, ic.seq
		}
	}
	return oldest
}

// evict closes the idle connection c to make room; l.mu is held, and
// evict unlocks it.
func (l *connLimit) evict(c net.Conn) {
	delete(l.idle, c)
	l.idleNow.Set(float64(len(l.idle)))
	l.mu.Unlock()
	l.evicted.Inc()
	// Closing the raw connection frees its room at once; the server sees
	// its read fail and lets it go.
	if tc, ok := c.(*tls.Conn); ok {
		tc.NetConn().Close()
	} else {
		c.Close()
	}
}

func (l *connLimit) release(client netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
	if l.perClient > 0 && client.IsValid() {
		if l.byClient[client]--; l.byClient[client] <= 0 {
			delete(l.byClient, client)
		}
	}
	l.open.Set(float64(l.n))
	l.signal()
}

// connState is the http.Server's ConnState hook: it keeps the set of idle
// connections.
func (l *connLimit) connState(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateIdle {
		l.seq++
		l.idle[c] = idleConn{seq: l.seq, client: clientOf(c)}
		l.signal()
	} else {
		delete(l.idle, c)
	}
	l.idleNow.Set(float64(len(l.idle)))
}

// listener returns ln with its connections limited by l.
func (l *connLimit) listener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, lim: l, done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	lim       *connLimit
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientOf(c)
		if l.lim.acquire(client, l.done) {
			return &limitedConn{Conn: c, lim: l.lim, client: client}, nil
		}
		c.Close()
		select {
		case <-l.done:
			return nil, net.ErrClosed
		default: // refused at its client's share: on to the next
		}
	}
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its room back when it is closed, once.
type limitedConn struct {
	net.Conn
	lim    *connLimit
	client netip.Addr
	once   sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.lim.release(c.client) })
	return err
}
