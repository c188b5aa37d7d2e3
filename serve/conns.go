package serve

import (
	"crypto/tls"
	"net"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// connLimit caps the connections a listener keeps open. When a client
// connects at the cap, the connection idle longest (a kept-alive one
// between requests) is closed to make room; with none idle, the new
// connection waits, accepted but not yet served, until one closes. So
// idle connections never keep a client out, and a listener holds at most
// its cap and one waiting connection of descriptors.
type connLimit struct {
	max     int
	evicted prometheus.Counter
	open    prometheus.Gauge

	mu      sync.Mutex
	n       int                 // connections open
	seq     uint64              // orders the idle connections
	idle    map[net.Conn]uint64 // connections idle now, as http.Server sees them, by when they became idle
	changed chan struct{}       // closed and replaced when n or idle changes
}

func newConnLimit(max int, evicted prometheus.Counter, open prometheus.Gauge) *connLimit {
	return &connLimit{max: max, evicted: evicted, open: open, idle: make(map[net.Conn]uint64), changed: make(chan struct{})}
}

// signal wakes the waiting accept; l.mu is held.
func (l *connLimit) signal() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// acquire takes room for one connection, closing the connection idle
// longest if there is no room, or waiting while none is idle. It returns
// false once done is closed.
func (l *connLimit) acquire(done <-chan struct{}) bool {
	for {
		l.mu.Lock()
		if l.n < l.max {
			l.n++
			l.open.Set(float64(l.n))
			l.mu.Unlock()
			return true
		}
		var oldest net.Conn
		for c, seq := range l.idle {
			if oldest == nil || seq < l.idle[oldest] {
				oldest = c
			}
		}
		if oldest != nil {
			delete(l.idle, oldest)
			l.mu.Unlock()
			l.evicted.Inc()
			// Closing the raw connection frees its room at once; the
			// server sees its read fail and lets it go.
			if tc, ok := oldest.(*tls.Conn); ok {
				tc.NetConn().Close()
			} else {
				oldest.Close()
			}
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

func (l *connLimit) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
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
		l.idle[c] = l.seq
		l.signal()
		return
	}
	delete(l.idle, c)
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
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if !l.lim.acquire(l.done) {
		c.Close()
		return nil, net.ErrClosed
	}
	return &limitedConn{Conn: c, lim: l.lim}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its room back when it is closed, once.
type limitedConn struct {
	net.Conn
	lim  *connLimit
	once sync.Once
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.lim.release)
	return err
}
