package serve

import (
	"crypto/tls"
	"errors"
	"math"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pires/go-proxyproto"
	"github.com/prometheus/client_golang/prometheus"
)

// connLimit caps the connections a listener keeps open, in all and, if
// perClient > 0, from each client address (the remote IP, or the address
// a trusted proxy's PROXY header names). When a client connects at the
// cap, the connection idle longest (a kept-alive one between requests) is
// closed to make room; with none idle, the new connection waits, accepted
// but not yet served, until one closes. At its client's share it is that
// client's connection idle longest that is closed, and with none of them
// idle the new connection is closed at once: waiting would hold up the
// accepts of every other client, so one address can neither crowd the
// others out nor make them wait. A client address that holds busy
// connections that are not idle (opening, sending a request, waiting for
// an answer) has its next one closed at once too, so that partial
// requests from a few addresses cannot fill the cap, where idle
// connections would have been closed to make room. And a new connection
// must have sent its first request's header within opening of its
// accept, TLS handshake and PROXY header included, or it is closed: a
// slow sender cannot stretch the time it holds its room. So idle
// connections never keep a client out, and a listener holds at most its
// cap and one waiting connection of descriptors.
type connLimit struct {
	connLimits
	evicted  prometheus.Counter
	refused  prometheus.Counter
	timedOut prometheus.Counter
	open     prometheus.Gauge
	idleNow  prometheus.Gauge // len(idle)

	mu       sync.Mutex
	n        int                   // connections open
	byClient map[netip.Addr]int    // connections admitted by client address, when shared
	idleBy   map[netip.Addr]int    // of them idle now, when shared
	seq      uint64                // orders the idle connections
	idle     map[net.Conn]idleConn // connections idle now, as http.Server sees them
	changed  chan struct{}         // closed and replaced when n or idle changes while waiting is set
	waiting  bool                  // the accept waits on changed
}

// connLimits are the limits of one listener.
type connLimits struct {
	max       int // connections open; negative for no cap
	perClient int // of them from one client address; 0 for no share
	busy      int // of them from one address that are not idle; 0 for no cap
	// opening is how long a new connection may take to send its first
	// request's header; 0 for no bound but the http.Server's own.
	opening time.Duration
	// proxies are the addresses whose connections may begin with a PROXY
	// protocol header naming the client.
	proxies []netip.Prefix
}

// idleConn is an idle connection's place in the order it went idle, and
// its client's address.
type idleConn struct {
	seq    uint64
	client netip.Addr
}

// newConnLimit returns the limits lim with their metrics.
func newConnLimit(lim connLimits, evicted, refused, timedOut prometheus.Counter, open, idle prometheus.Gauge) *connLimit {
	if lim.max < 0 {
		lim.max = math.MaxInt
	}
	return &connLimit{connLimits: lim, evicted: evicted, refused: refused, timedOut: timedOut, open: open, idleNow: idle,
		byClient: make(map[netip.Addr]int), idleBy: make(map[netip.Addr]int), idle: make(map[net.Conn]idleConn), changed: make(chan struct{})}
}

// shared reports whether connections are counted by client address.
func (l *connLimit) shared() bool { return l.perClient > 0 || l.busy > 0 }

// signal wakes the waiting accept, if it waits; l.mu is held. Without a
// waiter it costs nothing, as it is called twice a request (a connection
// busy, then idle again).
func (l *connLimit) signal() {
	if l.waiting {
		close(l.changed)
		l.changed = make(chan struct{})
		l.waiting = false
	}
}

// addrOf returns the address of a remote end, or the zero address when it
// is not an IP address (no share applies then).
func addrOf(a net.Addr) netip.Addr {
	if a, ok := a.(*net.TCPAddr); ok {
		return a.AddrPort().Addr().Unmap()
	}
	return netip.Addr{}
}

// acquire takes room for one connection under the cap: at the cap it
// closes the connection idle longest, or waits while none is idle. It
// returns false once done is closed.
func (l *connLimit) acquire(done <-chan struct{}) bool {
	for {
		l.mu.Lock()
		if l.n < l.max {
			l.n++
			l.open.Set(float64(l.n))
			l.mu.Unlock()
			return true
		}
		if oldest := l.oldestIdle(netip.Addr{}); oldest != nil {
			l.evict(oldest) // unlocks
			continue
		}
		changed := l.changed
		l.waiting = true
		l.mu.Unlock()
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}

// admit takes client's room for one more connection: at client's share
// it closes that client's connection idle longest, or refuses (false)
// with none idle; with client's busy connections at their cap it
// refuses.
func (l *connLimit) admit(client netip.Addr) bool {
	if !l.shared() || !client.IsValid() {
		return true
	}
	for {
		l.mu.Lock()
		if l.busy > 0 && l.byClient[client]-l.idleBy[client] >= l.busy {
			l.mu.Unlock()
			l.refused.Inc()
			return false
		}
		if l.perClient > 0 && l.byClient[client] >= l.perClient {
			oldest := l.oldestIdle(client)
			if oldest == nil {
				l.mu.Unlock()
				l.refused.Inc()
				return false
			}
			l.evict(oldest) // unlocks
			continue
		}
		l.byClient[client]++
		l.mu.Unlock()
		return true
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

// unidle takes c out of the idle set; l.mu is held.
func (l *connLimit) unidle(c net.Conn) {
	ic, ok := l.idle[c]
	if !ok {
		return
	}
	delete(l.idle, c)
	if ic.client.IsValid() && l.shared() {
		if l.idleBy[ic.client]--; l.idleBy[ic.client] <= 0 {
			delete(l.idleBy, ic.client)
		}
	}
	l.idleNow.Set(float64(len(l.idle)))
}

// evict closes the idle connection c to make room; l.mu is held, and
// evict unlocks it.
func (l *connLimit) evict(c net.Conn) {
	l.unidle(c)
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

// release gives back the room of a connection, and of its client's if
// admitted.
func (l *connLimit) release(client netip.Addr, admitted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n--
	if admitted {
		l.unadmitLocked(client)
	}
	l.open.Set(float64(l.n))
	l.signal()
}

// unadmit gives back the room of a client's connection that never took
// room under the cap.
func (l *connLimit) unadmit(client netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unadmitLocked(client)
}

func (l *connLimit) unadmitLocked(client netip.Addr) {
	if l.shared() && client.IsValid() {
		if l.byClient[client]--; l.byClient[client] <= 0 {
			delete(l.byClient, client)
		}
	}
}

// connState is the http.Server's ConnState hook: it keeps the set of idle
// connections, and ends a connection's opening deadline once it has sent
// a request.
func (l *connLimit) connState(c net.Conn, st http.ConnState) {
	lc := limitedOf(c)
	if lc != nil && st != http.StateNew {
		lc.opened()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if st == http.StateIdle {
		var client netip.Addr
		if lc != nil {
			client = lc.client
		}
		if _, ok := l.idle[c]; !ok && client.IsValid() && l.shared() {
			l.idleBy[client]++
		}
		l.seq++
		l.idle[c] = idleConn{seq: l.seq, client: client}
		l.idleNow.Set(float64(len(l.idle)))
		l.signal()
		return
	}
	l.unidle(c)
}

// limitedOf returns the limited connection under c, the connection that
// the http.Server's hook sees, or nil.
func limitedOf(c net.Conn) *limitedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, _ := c.(*limitedConn)
	return lc
}

// proxyHeaderTimeout bounds the wait for a PROXY header on a listener
// without an opening deadline.
const proxyHeaderTimeout = 5 * time.Second

// trustsProxy reports whether a connection from addr may begin with a
// PROXY header.
func (l *connLimit) trustsProxy(addr netip.Addr) bool {
	for _, p := range l.proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// listener returns ln with its connections limited by l.
func (l *connLimit) listener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, lim: l, done: make(chan struct{}), sweep: newSweeper()}
}

type limitListener struct {
	net.Listener
	lim       *connLimit
	done      chan struct{}
	closeOnce sync.Once
	sweep     *sweeper // enforces the connections' deadlines
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, raw: c, lim: l.lim, sweep: l.sweep}
		if from := addrOf(c.RemoteAddr()); len(l.lim.proxies) > 0 && l.lim.trustsProxy(from) {
			// The header is read at the connection's first use, in its
			// own goroutine, never here: a proxy that sends it slowly
			// holds up only its own connection. The client's share is
			// taken then, after the room under the cap.
			timeout := l.lim.opening
			if timeout == 0 {
				timeout = proxyHeaderTimeout
			}
			lc.Conn = proxyproto.NewConn(c, proxyproto.WithPolicy(proxyproto.USE), proxyproto.SetReadHeaderTimeout(timeout))
		} else {
			// The client's share first, so that a client at it makes room
			// by closing its own idle connection rather than another's.
			lc.client = from
			if !l.lim.admit(from) {
				c.Close()
				continue
			}
			lc.admitted = true
			lc.admitOnce.Do(func() {})
		}
		if !l.lim.acquire(l.done) {
			if lc.admitted {
				l.lim.unadmit(lc.client)
			}
			c.Close()
			return nil, net.ErrClosed
		}
		if l.lim.opening > 0 {
			lc.accepted = time.Now()
			lc.timer = time.AfterFunc(l.lim.opening, lc.expire)
		}
		l.sweep.add(lc)
		return lc, nil
	}
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// errRefused is the error of a connection closed at its client's share.
var errRefused = errors.New("serve: connection refused at its client's share")

// limitedConn is a connection under a connLimit: admitted under its
// client's share at its first use, closed if it has not sent a request
// by its opening deadline, its deadlines enforced by its listener's
// sweeper, and giving its room back when closed, once.
type limitedConn struct {
	net.Conn             // raw, or a PROXY protocol reader over it
	raw         net.Conn // the accepted connection
	lim         *connLimit
	sweep       *sweeper
	read, write lazyDeadline
	timer       *time.Timer // the opening deadline; nil for none
	accepted    time.Time   // when the opening deadline began

	admitOnce sync.Once
	client    netip.Addr // the client's address, once admitted
	admitted  bool       // client's room taken
	refused   bool
	sent      atomic.Bool // a request was read: the opening deadline is over
	closeOnce sync.Once
}

// admit reads the client's address, from a PROXY header if the proxy
// sent one, and takes its room, or closes the connection; it reports
// whether the connection may be used.
func (c *limitedConn) admit() bool {
	c.admitOnce.Do(func() {
		c.client = addrOf(c.Conn.RemoteAddr())
		if c.lim.admit(c.client) {
			c.admitted = true
			return
		}
		c.refused = true
		c.raw.Close()
	})
	return !c.refused
}

func (c *limitedConn) Read(b []byte) (int, error) {
	if !c.admit() {
		return 0, errRefused
	}
	return c.Conn.Read(b)
}

func (c *limitedConn) Write(b []byte) (int, error) {
	if !c.admit() {
		return 0, errRefused
	}
	return c.Conn.Write(b)
}

// RemoteAddr is the client's address: the PROXY header's source, if a
// trusted proxy sent one.
func (c *limitedConn) RemoteAddr() net.Addr {
	c.admit()
	return c.Conn.RemoteAddr()
}

// opened ends the opening deadline: the connection has sent a request.
func (c *limitedConn) opened() {
	if c.sent.CompareAndSwap(false, true) && c.timer != nil {
		c.timer.Stop()
	}
}

// expire closes the connection if it has sent no request yet.
func (c *limitedConn) expire() {
	if c.sent.CompareAndSwap(false, true) {
		c.lim.timedOut.Inc()
		c.raw.Close()
	}
}

func (c *limitedConn) Close() error {
	first := false
	var err error
	c.closeOnce.Do(func() {
		first = true
		// Closed without a request past the deadline: by it, or by one
		// of the http.Server's own read timeouts, which end no sooner.
		// Counted before the close, so that a client that sees its
		// connection closed finds it counted, as expire does.
		if c.sent.CompareAndSwap(false, true) && c.timer != nil && time.Since(c.accepted) >= c.lim.opening {
			c.lim.timedOut.Inc()
		}
		if c.timer != nil {
			c.timer.Stop()
		}
		err = c.raw.Close()
		c.sweep.remove(c)
		c.admitOnce.Do(func() {}) // no admission after close
		c.lim.release(c.client, c.admitted)
	})
	if !first {
		return c.raw.Close()
	}
	return err
}
