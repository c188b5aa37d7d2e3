package serve

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limits bound what one client may take, so that no client starves the
// others: a client is a token's name, a verified certificate's subject, or
// else a remote host (see Options.TokenFile). A request over a limit gets
// 429 with Retry-After. Segment tags are bounded by IDsPerSecond too: a
// tag's step grows with how fast its IDs go, so a client cannot grow it
// faster than its rate allows.
type Limits struct {
	// IDsPerSecond is the most IDs a client may take a second, on average;
	// it may take up to a second's worth, or MaxN if more, at once. Zero
	// means DefaultIDsPerSecond; negative means no limit.
	IDsPerSecond float64
	// RequestsPerSecond is the most requests to /v1/ a client may make a
	// second, with bursts of as many. Zero means DefaultRequestsPerSecond;
	// negative means no limit.
	RequestsPerSecond float64
	// MaxConns is the most connections the server keeps open at once; a
	// client beyond it waits until one closes. Zero means DefaultMaxConns;
	// negative means no limit.
	MaxConns int
}

// The default limits: a quarter of a TraceId node's 4,194,303 IDs a
// second per client, so that a greedy client leaves most of a node to the
// others; requests enough for any client that batches; connections well
// within a process's file descriptors.
const (
	DefaultIDsPerSecond      = 1_000_000
	DefaultRequestsPerSecond = 10_000
	DefaultMaxConns          = 4096
)

// maxClients bounds the clients whose limiters are kept; past it, those
// whose buckets are full again (which carry no state) are dropped.
const maxClients = 10_000

// limiter keeps the token buckets of every client.
type limiter struct {
	ids, requests rate.Limit
	idBurst       int

	mu      sync.Mutex
	clients map[string]*bucket
}

type bucket struct{ ids, requests *rate.Limiter }

func newLimiter(l Limits, maxN int) *limiter {
	lim := &limiter{ids: rate.Inf, requests: rate.Inf, clients: make(map[string]*bucket)}
	if l.IDsPerSecond > 0 {
		lim.ids = rate.Limit(l.IDsPerSecond)
		lim.idBurst = max(maxN, int(math.Ceil(l.IDsPerSecond)))
	}
	if l.RequestsPerSecond > 0 {
		lim.requests = rate.Limit(l.RequestsPerSecond)
	}
	return lim
}

// allow takes one request of n IDs from client's buckets at now, or
// returns how long until it would be allowed.
func (l *limiter) allow(client string, n int, now time.Time) (ok bool, retry time.Duration) {
	if l.ids == rate.Inf && l.requests == rate.Inf {
		return true, 0
	}
	b := l.bucket(client, now)
	rr := b.requests.ReserveN(now, 1)
	ir := b.ids.ReserveN(now, n)
	wait := max(rr.DelayFrom(now), ir.DelayFrom(now))
	if !rr.OK() || !ir.OK() || wait > 0 {
		rr.CancelAt(now)
		ir.CancelAt(now)
		return false, max(wait, time.Second)
	}
	return true, 0
}

func (l *limiter) bucket(client string, now time.Time) *bucket {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.clients[client]; b != nil {
		return b
	}
	if len(l.clients) >= maxClients {
		for c, b := range l.clients {
			if b.ids.TokensAt(now) >= float64(b.ids.Burst()) && b.requests.TokensAt(now) >= float64(b.requests.Burst()) {
				delete(l.clients, c)
			}
		}
	}
	b := &bucket{
		ids:      rate.NewLimiter(l.ids, l.idBurst),
		requests: rate.NewLimiter(l.requests, max(1, int(math.Ceil(float64(l.requests))))),
	}
	l.clients[client] = b
	return b
}

// writeTooMany answers 429 with the time to wait, in whole seconds.
func writeTooMany(w http.ResponseWriter, retry time.Duration) int {
	secs := retrySeconds(retry)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return writeError(w, http.StatusTooManyRequests, tooMany(secs))
}

// tooMany is the answer to a client over its limits, for HTTP and RPC.
func tooMany(secs int) string {
	return fmt.Sprintf("over this client's limit of IDs or requests a second; retry in %d s", secs)
}

// retrySeconds rounds a wait up to whole seconds, at least 1.
func retrySeconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }
