package connlimit

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
type Limit struct {
	Limits
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
	conns    map[*Conn]struct{}          // the connections open, to find the idle ones
	byClient map[netip.Addr]*clientConns // connections by client address, when shared
	changed  chan struct{}               // closed and replaced when n changes or a connection goes idle while waiting is set
}

// clientConns counts the connections of one client address.
type clientConns struct {
	admitted int          // connections admitted; connLimit.mu is held
	idle     atomic.Int32 // of them idle now
}

// ConnLimits are the limits of one listener.
type Limits struct {
	Max       int // connections open; negative for no cap
	PerClient int // of them from one client address; 0 for no share
	Busy      int // of them from one address that are not idle; 0 for no cap
	// opening is how long a new connection may take to send its first
	// request's header; 0 for no bound but the http.Server's own.
	Opening time.Duration
	// evictOpening, if positive, lets a new connection at the cap with
	// none idle close the connection that has been opening longest (no
	// whole request yet), once that one has been open that long, rather
	// than wait for its deadline: on the probe and metrics listeners,
	// whose clients send their request as soon as they connect, silent
	// or trickling connections from many addresses cannot keep a probe
	// out.
	EvictOpening time.Duration
	// proxies are the addresses whose connections may begin with a PROXY
	// protocol header naming the client.
	Proxies []netip.Prefix
}

// newConnLimit returns the limits lim with their metrics.
func New(lim Limits, evicted, refused, timedOut prometheus.Counter, open, idle prometheus.Gauge) *Limit {
	if lim.Max < 0 {
		lim.Max = math.MaxInt
	}
	return &Limit{Limits: lim, evicted: evicted, refused: refused, timedOut: timedOut, open: open, idleNow: idle,
		conns: make(map[*Conn]struct{}), byClient: make(map[netip.Addr]*clientConns), changed: make(chan struct{})}
}

// shared reports whether connections are counted by client address.
func (l *Limit) shared() bool { return l.PerClient > 0 || l.Busy > 0 }

// signal wakes the waiting accept, if it waits; l.mu is held.
func (l *Limit) signal() {
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
func (l *Limit) acquire(c *Conn, done <-chan struct{}) bool {
	for {
		l.mu.Lock()
		if l.n < l.Max {
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
		if l.EvictOpening > 0 {
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
func (l *Limit) evictLongestOpening() (bool, time.Duration) {
	var longest *Conn
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
	due := longest.since + int64(l.EvictOpening)
	if now := SinceEpoch(time.Now()); now < due {
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
func (l *Limit) admit(client netip.Addr) (*clientConns, bool) {
	if !l.shared() || !client.IsValid() {
		return nil, true
	}
	for {
		l.mu.Lock()
		cc := l.byClient[client]
		if cc == nil {
			cc = &clientConns{} // kept once admitted
		}
		if l.Busy > 0 && cc.admitted-int(cc.idle.Load()) >= l.Busy {
			l.mu.Unlock()
			l.refused.Inc()
			return nil, false
		}
		if l.PerClient > 0 && cc.admitted >= l.PerClient {
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
func (l *Limit) evictOldest(client netip.Addr) bool {
	var oldest *Conn
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
func (l *Limit) idled(c *Conn, d int32) {
	l.idleNow.Add(float64(d))
	if c.counts != nil {
		c.counts.idle.Add(d)
	}
}

// unidle takes c out of the idle set, if it is in it.
func (l *Limit) unidle(c *Conn) {
	if c.idleSince.Swap(0) != 0 {
		l.idled(c, -1)
	}
}

// release gives back the room of c, and of its client's if admitted,
// unless an eviction has.
func (l *Limit) release(c *Conn) {
	l.unidle(c)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !c.evicted {
		l.forget(c)
	}
}

// forget gives back the room of c, and of its client's if admitted; l.mu
// is held.
func (l *Limit) forget(c *Conn) {
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
func (l *Limit) unadmit(client netip.Addr, cc *clientConns) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unadmitLocked(client, cc)
}

// unadmitLocked takes a connection from client's count, and forgets
// client once it has none; l.mu is held.
func (l *Limit) unadmitLocked(client netip.Addr, cc *clientConns) {
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
func (l *Limit) ConnState(c net.Conn, st http.ConnState) {
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
	if lc.idleSince.Swap(SinceEpoch(time.Now())+1) == 0 {
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
func WithConn(ctx context.Context, c net.Conn) context.Context {
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
func EndsOpening(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lc, ok := r.Context().Value(connKey{}).(*Conn); ok {
			lc.opened()
		}
		h.ServeHTTP(w, r)
	})
}

// limitedOf returns the limited connection under c, the connection that
// the http.Server's hook sees, or nil.
func limitedOf(c net.Conn) *Conn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	lc, _ := c.(*Conn)
	return lc
}

// proxyHeaderTimeout bounds the wait for a PROXY header on a listener
// without an opening deadline.
const proxyHeaderTimeout = 5 * time.Second

// trustsProxy reports whether a connection from addr may begin with a
// PROXY header.
func (l *Limit) trustsProxy(addr netip.Addr) bool {
	for _, p := range l.Proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// listener returns ln with its connections limited by l.
func (l *Limit) Listener(ln net.Listener) net.Listener {
	return &limitListener{Listener: ln, lim: l, done: make(chan struct{}), sweep: newSweeper()}
}

type limitListener struct {
	net.Listener
	lim       *Limit
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
		lc := &Conn{Conn: c, raw: c, lim: l.lim, sweep: l.sweep, since: SinceEpoch(time.Now())}
		if from := addrOf(c.RemoteAddr()); len(l.lim.Proxies) > 0 && l.lim.trustsProxy(from) {
			// The header is read at the connection's first use, in its
			// own goroutine, never here: a proxy that sends it slowly
			// holds up only its own connection. The client's share is
			// taken then, after the room under the cap.
			timeout := l.lim.Opening
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
		if l.lim.Opening > 0 {
			lc.accepted = time.Now()
			lc.timer = time.AfterFunc(l.lim.Opening, lc.expire)
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
type Conn struct {
	net.Conn             // raw, or a PROXY protocol reader over it
	raw         net.Conn // the accepted connection
	lim         *Limit
	sweep       *sweeper
	read, write LazyDeadline
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
func (c *Conn) admit() bool {
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

func (c *Conn) Read(b []byte) (int, error) {
	if !c.admit() {
		return 0, errRefused
	}
	return c.Conn.Read(b)
}

func (c *Conn) Write(b []byte) (int, error) {
	if !c.admit() {
		return 0, errRefused
	}
	return c.Conn.Write(b)
}

// RemoteAddr is the client's address: the PROXY header's source, if a
// trusted proxy sent one.
func (c *Conn) RemoteAddr() net.Addr {
	c.admit()
	return c.Conn.RemoteAddr()
}

// opened ends the opening deadline: the connection has sent a request.
func (c *Conn) opened() {
	if !c.sent.Load() && c.sent.CompareAndSwap(false, true) && c.timer != nil {
		c.timer.Stop()
	}
}

// expire closes the connection if it has sent no request yet.
func (c *Conn) expire() {
	if c.sent.CompareAndSwap(false, true) {
		c.lim.timedOut.Inc()
		c.raw.Close()
	}
}

func (c *Conn) Close() error {
	first := false
	var err error
	c.closeOnce.Do(func() {
		first = true
		// Closed without a request past the deadline: by it, or by one
		// of the http.Server's own read timeouts, which end no sooner.
		// Counted before the close, so that a client that sees its
		// connection closed finds it counted, as expire does.
		if c.sent.CompareAndSwap(false, true) && c.timer != nil && time.Since(c.accepted) >= c.lim.Opening {
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
