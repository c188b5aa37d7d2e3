package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxClients bounds the clients whose limiters are kept; past it, those
// whose buckets are full again (which carry no state) are dropped.
const MaxClients = 10_000

// limiter keeps the token buckets of every client, and the node-wide
// ceiling of each scheme.
type Limiter struct {
	ids, requests rate.Limit
	idBurst       int
	nodeRate      float64 // Limits.NodeIDsPerSecond; 0 for no ceiling

	// clients holds each client's *bucket, read without a lock; mu
	// orders the adding and dropping of clients, which count.
	clients sync.Map
	mu      sync.Mutex
	count   int
	nodes   map[string]*NodeLimit // by scheme; written by New only
}

type Bucket struct{ ids, requests *rate.Limiter }

// NewLimiter returns the limiter of a server's requests: idsPerSecond
// and requestsPerSecond a client, nodeIDsPerSecond a scheme on the whole
// node (0: no limit), for requests of up to maxN IDs.
func NewLimiter(idsPerSecond, requestsPerSecond, nodeIDsPerSecond float64, maxN int) *Limiter {
	lim := &Limiter{ids: rate.Inf, requests: rate.Inf, nodes: make(map[string]*NodeLimit)}
	if nodeIDsPerSecond > 0 {
		lim.nodeRate = nodeIDsPerSecond
	}
	if idsPerSecond > 0 {
		lim.ids = rate.Limit(idsPerSecond)
		lim.idBurst = max(maxN, int(math.Ceil(idsPerSecond)))
	}
	if requestsPerSecond > 0 {
		lim.requests = rate.Limit(requestsPerSecond)
	}
	return lim
}

// addScheme gives scheme a node-wide ceiling, if the limits set one.
func (l *Limiter) AddScheme(scheme string) {
	if l.nodeRate > 0 {
		l.nodes[scheme] = NewNodeLimit(l.nodeRate)
	}
}

// refusal says why a request was refused, and when to try again.
type Refusal struct {
	Retry time.Duration
	Node  bool // by the scheme's node-wide ceiling, not the client's limits
}

// allow takes one request of n IDs of scheme from client's buckets and
// from the scheme's node-wide ceiling at now, or says why it may not.
func (l *Limiter) Allow(client, scheme string, n int, now time.Time) (ok bool, why Refusal) {
	node := l.nodes[scheme]
	if l.ids == rate.Inf && l.requests == rate.Inf {
		if node != nil && !node.take(client, n, now) {
			return false, Refusal{Retry: time.Second, Node: true}
		}
		return true, Refusal{}
	}
	b := l.bucket(client, now)
	rr := b.requests.ReserveN(now, 1)
	ir := b.ids.ReserveN(now, n)
	wait := max(rr.DelayFrom(now), ir.DelayFrom(now))
	if !rr.OK() || !ir.OK() || wait > 0 {
		rr.CancelAt(now)
		ir.CancelAt(now)
		return false, Refusal{Retry: max(wait, time.Second)}
	}
	if node != nil && !node.take(client, n, now) {
		rr.CancelAt(now)
		ir.CancelAt(now)
		return false, Refusal{Retry: time.Second, Node: true}
	}
	return true, Refusal{}
}

// bucket returns client's buckets, made full for a client not seen
// before.
func (l *Limiter) bucket(client string, now time.Time) *Bucket {
	if b, ok := l.clients.Load(client); ok {
		return b.(*Bucket)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.clients.Load(client); ok {
		return b.(*Bucket)
	}
	if l.count >= MaxClients {
		l.clients.Range(func(c, v any) bool {
			if b := v.(*Bucket); b.ids.TokensAt(now) >= float64(b.ids.Burst()) && b.requests.TokensAt(now) >= float64(b.requests.Burst()) {
				l.clients.Delete(c)
				l.count--
			}
			return true
		})
	}
	b := &Bucket{
		ids:      rate.NewLimiter(l.ids, l.idBurst),
		requests: rate.NewLimiter(l.requests, max(1, int(math.Ceil(float64(l.requests))))),
	}
	l.clients.Store(client, b)
	l.count++
	return b
}

// nodeLimit is a scheme's node-wide ceiling of IDs a second, shared
// among the clients as max-min fairness shares a link: a client's fair
// share is the ceiling divided by the clients active in the last second;
// one under it may take up to it, and one over it only what leaves every
// client under its share the room to reach it. It counts the IDs issued
// in windows of one second, the node's and each client's, and takes as
// the last second's count the current window's plus the part of the
// previous one that the last second still overlaps.
type NodeLimit struct {
	rate float64 // the ceiling

	mu        sync.Mutex
	window    time.Time // the start of the current window; zero before the first request
	cur, prev float64   // the node's IDs in the current and previous windows
	// The IDs of each client in the current and previous windows: a
	// client is active while it is in either, refused requests included.
	clients, before map[string]float64
	active          int
	// room is what the clients under their fair share may still take to
	// reach it, as last summed at summed, less what they took since.
	room   float64
	summed time.Time
}

func NewNodeLimit(rate float64) *NodeLimit {
	return &NodeLimit{rate: rate, clients: map[string]float64{}, before: map[string]float64{}}
}

// take counts n IDs for client at now, or reports false if the ceiling
// has no room for them that another client's share does not need.
func (l *NodeLimit) take(client string, n int, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.roll(now)
	// The part of the previous window the last second overlaps; a clock
	// stepped back counts it whole.
	overlap := 1 - min(max(now.Sub(l.window).Seconds(), 0), 1)
	mineNow, in := l.clients[client]
	mineBefore, was := l.before[client]
	if !in && !was {
		l.active++
		l.summed = time.Time{} // a new share to keep room for
	}
	if !in {
		l.clients[client] = 0
	}
	k := float64(n)
	used := l.cur + l.prev*overlap
	if used+k > l.rate && used > 0 { // a request larger than the ceiling passes alone
		return false
	}
	fair := l.rate / float64(l.active)
	mine := mineNow + mineBefore*overlap
	if mine+k > fair {
		// Over its share: only what the others under theirs leave.
		if l.summed.IsZero() || now.Sub(l.summed) >= sumEvery || now.Before(l.summed) {
			l.sum(overlap, fair, now)
		}
		if used+k+min(max(0, l.room-max(0, fair-mine)), l.rate*nodeReserve) > l.rate {
			return false
		}
	} else {
		l.room = max(0, l.room-k)
	}
	l.cur += k
	l.clients[client] = mineNow + k
	return true
}

// sum sums the room the clients under their fair share need to reach it.
func (l *NodeLimit) sum(overlap, fair float64, now time.Time) {
	l.room, l.summed = 0, now
	for c, n := range l.clients {
		l.room += max(0, fair-n-l.before[c]*overlap)
	}
	for c, n := range l.before {
		if _, ok := l.clients[c]; !ok {
			l.room += max(0, fair-n*overlap)
		}
	}
}

// roll starts a new window once the current one is a second old.
func (l *NodeLimit) roll(now time.Time) {
	switch d := now.Sub(l.window); {
	case l.window.IsZero() || d >= 2*time.Second:
		l.window, l.cur, l.prev = now, 0, 0
		clear(l.clients)
		clear(l.before)
		l.active, l.summed = 0, time.Time{}
	case d >= time.Second:
		l.window = l.window.Add(time.Second)
		l.prev, l.cur = l.cur, 0
		l.before, l.clients = l.clients, l.before
		clear(l.clients)
		l.active, l.summed = len(l.before), time.Time{}
	}
}

// nodeReserve is the most of the ceiling kept for the clients under
// their fair share, so that a node with many quiet clients still serves a
// busy one most of its IDs.
const nodeReserve = 0.25

// sumEvery is how often, on the server's clock, the room kept for the
// clients under their share is summed again over every client.
const sumEvery = time.Second / 16
