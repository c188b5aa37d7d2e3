package connlimit

import (
	"sync"
	"sync/atomic"
	"time"
)

// An http.Server moves a connection's read and write deadlines several
// times a request (the header, the body, the answer, the idle wait), and
// each move of a socket's deadline is a runtime timer changed under the
// poller's lock. A listener's connections keep their deadlines in memory
// instead, and one sweeper a listener enforces them: a deadline that has
// passed is set on the socket as a time in the past, which fails the
// pending read or write as the socket's own deadline would. A deadline is
// so enforced no sooner than it falls, and at most sweepEvery later; a
// deadline set in the past takes effect at once, as net/http's own
// aborted reads need.

// sweepEvery is how often a listener's sweeper looks at its connections'
// deadlines: how late, at most, a deadline takes effect.
const sweepEvery = 50 * time.Millisecond

// aLongTimeAgo is the deadline that fails a connection's I/O at once.
var ALongTimeAgo = time.Unix(1, 0)

// epoch is the origin of the deadlines kept in memory. They are kept as
// monotonic time since it, as the runtime keeps a socket's, so that a
// step of the wall clock moves none of them.
var epoch = time.Now()

// sinceEpoch is t as kept in memory: the monotonic time from epoch to t
// where t has a monotonic reading (time.Now().Add(d), as net/http sets),
// else its wall time's distance from epoch.
func SinceEpoch(t time.Time) int64 { return int64(t.Sub(epoch)) }

// lazyDeadline is one direction's deadline of a connection.
type LazyDeadline struct {
	mu    sync.Mutex
	at    int64 // when it falls (sinceEpoch); 0 for none
	armed bool  // the socket's own deadline is set, in the past
}

// set sets the deadline to t (zero for none). A t no later than now (a
// time no later than the present) is set on the socket at once, through
// apply; any other is kept for the sweeper, and a past deadline the
// socket had is taken off.
func (d *LazyDeadline) set(t time.Time, now int64, apply func(time.Time) error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t.IsZero() {
		d.at = 0
	} else if at := SinceEpoch(t); at > now {
		d.at = at
	} else {
		d.at = 0
		d.armed = true
		return apply(t)
	}
	if d.armed {
		d.armed = false
		return apply(time.Time{})
	}
	return nil
}

// fire sets the deadline on the socket, through apply, if it has fallen
// by now.
func (d *LazyDeadline) fire(now int64, apply func(time.Time) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.at != 0 && d.at <= now {
		d.at = 0
		d.armed = true
		apply(ALongTimeAgo)
	}
}

// sweeper enforces the deadlines of a listener's connections. It runs
// while the listener has connections, also after the listener is closed
// (an http.Server serves its connections on until they end), and wakes
// nothing while it has none.
type sweeper struct {
	now     atomic.Int64 // the last sweep's time (sinceEpoch): never later than the present
	mu      sync.Mutex
	conns   map[*Conn]struct{}
	running bool
}

func newSweeper() *sweeper {
	s := &sweeper{conns: make(map[*Conn]struct{})}
	s.now.Store(SinceEpoch(time.Now()))
	return s
}

// add has the sweeper enforce c's deadlines until remove.
func (s *sweeper) add(c *Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[c] = struct{}{}
	if !s.running {
		s.running = true
		go s.run()
	}
}

func (s *sweeper) remove(c *Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

func (s *sweeper) run() {
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	var due []*Conn
	for range tick.C {
		now := SinceEpoch(time.Now())
		s.now.Store(now)
		s.mu.Lock()
		if len(s.conns) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		due = due[:0]
		for c := range s.conns {
			due = append(due, c)
		}
		s.mu.Unlock()
		for _, c := range due {
			c.read.fire(now, c.Conn.SetReadDeadline)
			c.write.fire(now, c.Conn.SetWriteDeadline)
		}
		clear(due) // no closed connection kept alive until the next sweep
	}
}

// SetReadDeadline sets the connection's read deadline, enforced by its
// listener's sweeper.
func (c *Conn) SetReadDeadline(t time.Time) error {
	return c.read.set(t, c.sweep.now.Load(), c.Conn.SetReadDeadline)
}

// SetWriteDeadline sets the connection's write deadline, enforced by its
// listener's sweeper.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.write.set(t, c.sweep.now.Load(), c.Conn.SetWriteDeadline)
}

// SetDeadline sets both deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	now := c.sweep.now.Load()
	errRead := c.read.set(t, now, c.Conn.SetReadDeadline)
	errWrite := c.write.set(t, now, c.Conn.SetWriteDeadline)
	if errRead != nil {
		return errRead
	}
	return errWrite
}
