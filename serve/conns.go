package serve

import (
	"context"
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
// cap, an idle connection (a kept-alive one between requests) is closed
// to make room, one for each new connection: of the address that holds
// the most connections, the one idle longest; with none idle, on a
// listener with evictOpening, the connection that has sent no whole
// request for longest, once it is that old; else the new connection
// waits, accepted but not yet served, until one closes or comes due.
// At its client's share it is that client's connection idle longest that
// is closed, and with none of them idle the new connection is closed at
// once: waiting would hold up the accepts of every other client, so one
// address can neither crowd the others out nor make them wait. A client address that holds busy
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
	idleNow  prometheus.Gauge // connections idle now

	// waiting is set while the accept waits on changed for room: a
	// connection that goes idle then signals. Without a waiter, a
	// connection goes busy and idle again, twice a request, without
	// taking mu.
	waiting atomic.Bool

	mu       sync.Mutex
	n        int                         // connections open
	conns    map[*limitedConn]struct{}   // the connections open, to find the idle ones
	byClient map[netip.Addr]*clientConns // connections by client address, when shared
	changed  chan struct{}               // closed and replaced when n changes or a connection goes idle while waiting is set
}

// clientConns counts the connections of one client address.
type clientConns struct {
	admitted int          // connections admitted; connLimit.mu is held
	idle     atomic.Int32 // of them idle now
}

// connLimits are the limits of one listener.
type connLimits struct {
	max       int // connections open; negative for no cap
	perClient int // of them from one client address; 0 for no share
	busy      int // of them from one address that are not idle; 0 for no cap
	// opening is how long a new connection may take to send its first
	// request's header; 0 for no bound but the http.Server's own.
	opening time.Duration
	// evictOpening, if positive, lets a new connection at the cap with
	// none idle close the connection that has been opening longest (no
	// whole request yet), once that one has been open that long, rather
	// than wait for its deadline: on the probe and metrics listeners,
	// whose clients send their request as soon as they connect, silent
	// or trickling connections from many addresses cannot keep a probe
	// out.
	evictOpening time.Duration
	// proxies are the addresses whose connections may begin with a PROXY
	// protocol header naming the client.
	proxies []netip.Prefix
}

// newConnLimit returns the limits lim with their metrics.
func newConnLimit(lim connLimits, evicted, refused, timedOut prometheus.Counter, open, idle prometheus.Gauge) *connLimit {
	if lim.max < 0 {
		lim.max = math.MaxInt
	}
	return &connLimit{connLimits: lim, evicted: evicted, refused: refused, timedOut: timedOut, open: open, idleNow: idle,
		conns: make(map[*limitedConn]struct{}), byClient: make(map[netip.Addr]*clientConns), changed: make(chan struct{})}
}

// shared reports whether connections are counted by client address.
func (l *connLimit) shared() bool { return l.perClient > 0 || l.busy > 0 }

// signal wakes the waiting accept, if it waits; l.mu is held.
func (l *connLimit) signal() {
	if l.waiting.Load() {
		close(l.changed)
		l.changed = make(chan struct{})
		l.waiting.Store(false)
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

// acquire takes room for c under the cap: at the cap it closes the
// connection idle longest, or waits while none is idle. It returns false
// once done is closed.
func (l *connLimit) acquire(c *limitedConn, done <-chan struct{}) bool {
	for {
		l.mu.Lock()
		if l.n < l.max {
			l.n++
			l.conns[c] = struct{}{}
			l.open.Set(float64(l.n))
			l.mu.Unlock()
			return true
		}
		// Set before the search: a connection that goes idle after it
		// finds none signals.
		l.waiting.Store(true)
		changed := l.changed
		if l.evictOldest(netip.Addr{}) { // unlocks
			continue
		}
		var due *time.Timer // when the connection opening longest may be closed
		if l.evictOpening > 0 {
			evicted, after := l.evictLongestOpening() // unlocks if evicted
			if evicted {
				continue
			}
			if after > 0 {
				due = time.NewTimer(after)
			}
		}
		l.mu.Unlock()
		var dueC <-chan time.Time
		if due != nil {
			dueC = due.C
		}
		select {
		case <-changed:
		case <-dueC:
		case <-done:
			return false
		}
		if due != nil {
			due.Stop()
		}
	}
}

// evictLongestOpening closes the connection that has sent no whole
// request for longest, if it was accepted evictOpening ago or more, and
// reports true; l.mu is held, and it unlocks it when it reports true.
// Otherwise it returns how long until the one opening longest is due, or
// 0 if none is opening.
func (l *connLimit) evictLongestOpening() (bool, time.Duration) {
	var longest *limitedConn
	for c := range l.conns {
		if c.sent.Load() {
			continue
		}
		if longest == nil || c.since < longest.since {
			longest = c
		}
	}
	if longest == nil {
		return false, 0
	}
	due := longest.since + int64(l.evictOpening)
	if now := sinceEpoch(time.Now()); now < due {
		return false, time.Duration(due - now)
	}
	// Taking its first request from it, as its deadline would: a request
	// that completes now finds the connection closed.
	if !longest.sent.CompareAndSwap(false, true) {
		l.mu.Unlock()
		return true, 0 // it has sent a request since: the caller looks again
	}
	if longest.timer != nil {
		longest.timer.Stop()
	}
	longest.evicted = true
	l.forget(longest)
	l.mu.Unlock()
	l.evicted.Inc()
	longest.raw.Close()
	return true, 0
}

// admit takes client's room for one more connection: at client's share
// it closes that client's connection idle longest, or refuses (false)
// with none idle; with client's busy connections at their cap it
// refuses. It returns the client's counts, nil when not shared.
func (l *connLimit) admit(client netip.Addr) (*clientConns, bool) {
	if !l.shared() || !client.IsValid() {
		return nil, true
	}
	for {
		l.mu.Lock()
		cc := l.byClient[client]
		if cc == nil {
			cc = &clientConns{} // kept once admitted
		}
		if l.busy > 0 && cc.admitted-int(cc.idle.Load()) >= l.busy {
			l.mu.Unlock()
			l.refused.Inc()
			return nil, false
		}
		if l.perClient > 0 && cc.admitted >= l.perClient {
			if l.evictOldest(client) { // unlocks
				continue
			}
			l.mu.Unlock()
			l.refused.Inc()
			return nil, false
		}
		cc.admitted++
		l.byClient[client] = cc
		l.mu.Unlock()
		return cc, true
	}
}

// evictOldest closes an idle connection to make room, and reports
// whether there was one: of client, if it is a valid address, the one
// idle longest; else the one idle longest of the client address that
// holds the most connections, so that a client that keeps a connection
// or two alive between requests is not the one to lose it while others
// hold many. l.mu is held, and evictOldest unlocks it when it reports
// true (also when that connection took a request before it could be
// closed, so that the caller looks again).
func (l *connLimit) evictOldest(client netip.Addr) bool {
	var oldest *limitedConn
	var at int64
	held := -1 // the connections of oldest's client address
	for c := range l.conns {
		since := c.idleSince.Load()
		if since == 0 || client.IsValid() && c.client != client {
			continue // c.client is read only once c is seen idle: set by then
		}
		n := 0 // a connection without an address's count holds none
		if !client.IsValid() && c.counts != nil {
			n = c.counts.admitted
		}
		if oldest == nil || n > held || n == held && since < at {
			oldest, at, held = c, since, n
		}
	}
	if oldest == nil {
		return false
	}
	if !oldest.idleSince.CompareAndSwap(at, 0) {
		// It has taken a request since: the caller looks again.
		l.mu.Unlock()
		return true
	}
	l.idled(oldest, -1)
	// Closing the raw connection frees its descriptor at once, and so its
	// room, in all and its client's: the server sees its read fail and
	// lets it go later. Counted now, a new connection takes the room of
	// one evicted connection rather than evicting more until the server
	// has let the first go.
	oldest.evicted = true
	l.forget(oldest)
	l.mu.Unlock()
	l.evicted.Inc()
	oldest.raw.Close()
	return true
}

// idled counts c idle (d = 1) or no longer idle (d = -1).
func (l *connLimit) idled(c *limitedConn, d int32) {
	l.idleNow.Add(float64(d))
	if c.counts != nil {
		c.counts.idle.Add(d)
	}
}

// unidle takes c out of the idle set, if it is in it.
func (l *connLimit) unidle(c *limitedConn) {
	if c.idleSince.Swap(0) != 0 {
		l.idled(c, -1)
	}
}

// release gives back the room of c, and of its client's if admitted,
// unless an eviction has.
func (l *connLimit) release(c *limitedConn) {
	l.unidle(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !c.evicted {
		l.forget(c)
	}
}

// forget gives back the room of c, and of its client's if admitted; l.mu
// is held.
func (l *connLimit) forget(c *limitedConn) {
	l.n--
	delete(l.conns, c)
	if c.admitted {
		l.unadmitLocked(c.client, c.counts)
	}
	l.open.Set(float64(l.n))
	l.signal()
}

// unadmit gives back the room of a client's connection that never took
// room under the cap.
func (l *connLimit) unadmit(client netip.Addr, cc *clientConns) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unadmitLocked(client, cc)
}

// unadmitLocked takes a connection from client's count, and forgets
// client once it has none; l.mu is held.
func (l *connLimit) unadmitLocked(client netip.Addr, cc *clientConns) {
	if cc == nil {
		return
	}
	if cc.admitted--; cc.admitted <= 0 {
		delete(l.byClient, client)
	}
}

// connState is the http.Server's ConnState hook: it marks connections
// idle and busy again. It takes no lock unless the accept waits for
// room.
func (l *connLimit) connState(c net.Conn, st http.ConnState) {
	lc := limitedOf(c)
	if lc == nil {
		return
	}
	if st != http.StateIdle {
		l.unidle(lc)
		return
	}
	// The time orders the idle connections; +1 keeps it from 0, which
	// means busy.
	if lc.idleSince.Swap(sinceEpoch(time.Now())+1) == 0 {
		l.idled(lc, 1)
	}
	if l.waiting.Load() {
		l.mu.Lock()
		l.signal()
		l.mu.Unlock()
	}
}

// connKey is the key of a request's connection in its context.
type connKey struct{}

// withConn is the http.Server's ConnContext hook: it keeps the limited
// connection under c in the context of c's requests, for endsOpening.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if lc := limitedOf(c); lc != nil {
		return context.WithValue(ctx, connKey{}, lc)
	}
	return ctx
}

// endsOpening ends the opening deadline of a request's connection when
// the request reaches h: its header has come whole. Over HTTP/1.1 the
// server's read-header timeout bounds the same; over HTTP/2, where a
// connection is busy and idle again before its first stream (its preface
// and settings), a header block sent a frame at a time is bounded by
// nothing else but the idle timeout.
func endsOpening(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lc, ok := r.Context().Value(connKey{}).(*limitedConn); ok {
			lc.opened()
		}
		h.ServeHTTP(w, r)
	})
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
		lc := &limitedConn{Conn: c, raw: c, lim: l.lim, sweep: l.sweep, since: sinceEpoch(time.Now())}
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
			counts, ok := l.lim.admit(from)
			if !ok {
				c.Close()
				continue
			}
			lc.counts, lc.admitted = counts, true
			lc.admitOnce.Do(func() {})
		}
		if !l.lim.acquire(lc, l.done) {
			if lc.admitted {
				l.lim.unadmit(lc.client, lc.counts)
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
	since       int64       // when accepted (sinceEpoch), to find the one opening longest

	admitOnce sync.Once
	client    netip.Addr   // the client's address, once admitted
	counts    *clientConns // the client's, when shared and admitted
	admitted  bool         // client's room taken
	evicted   bool         // closed to make room, its room given back; connLimit.mu is held
	refused   bool
	sent      atomic.Bool // a request was read: the opening deadline is over
	closeOnce sync.Once

	// idleSince is when the connection went idle between requests
	// (sinceEpoch+1), or 0 while it is busy.
	idleSince atomic.Int64
}

// admit reads the client's address, from a PROXY header if the proxy
// sent one, and takes its room, or closes the connection; it reports
// whether the connection may be used.
func (c *limitedConn) admit() bool {
	c.admitOnce.Do(func() {
		c.client = addrOf(c.Conn.RemoteAddr())
		if counts, ok := c.lim.admit(c.client); ok {
			c.counts, c.admitted = counts, true
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
	if !c.sent.Load() && c.sent.CompareAndSwap(false, true) && c.timer != nil {
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
		c.lim.release(c)
	})
	if !first {
		return c.raw.Close()
	}
	return err
}
