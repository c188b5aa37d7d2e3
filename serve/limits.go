package serve

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/idkit/idkit/serve/internal/ratelimit"
)

// Limits bound what one client may take, so that no client starves the
// others: a client is a token's name, a verified certificate's subject, or
// else a remote host (see Options.TokenFile and Options.TrustedProxies).
// A request over a limit gets 429 with Retry-After. Segment tags are
// bounded by IDsPerSecond too: a tag's step grows with how fast its IDs
// go, so a client cannot grow it faster than its rate allows. A ceiling
// per node and scheme, NodeIDsPerSecond, bounds all clients together.
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
	// MaxConnsPerClient is the most of them one client address (the
	// remote IP of the connection; behind a proxy, the proxy's address)
	// may hold, so that one address cannot take the cap and keep the
	// others out. A new connection at it closes the address's connection
	// idle longest, or is closed at once when none is idle. It is 1 to
	// MaxConns; zero means a quarter of MaxConns, at least 1 (none when
	// MaxConns is negative); negative means no share.
	MaxConnsPerClient int
	// MaxBusyConnsPerClient is the most connections one client address
	// may hold that are not idle: opening (a TLS handshake, a request
	// being sent), or waiting for an answer. A new connection of an
	// address at it is closed at once. Idle connections are closed to
	// make room at the cap, but busy ones are not, so without it a few
	// addresses that send requests a byte at a time could hold the cap
	// between them and keep every other client waiting. It is at most
	// MaxConnsPerClient; zero means DefaultMaxBusyConnsPerClient of
	// MaxConns (none when MaxConns is negative); negative means no cap.
	MaxBusyConnsPerClient int
	// MaxStreamsPerClient is the most HTTP/2 requests (gRPC and Connect
	// calls among them) one client address may have in flight at once,
	// over all its connections; one more is answered 429 at once, with
	// Retry-After. Each request in flight holds its answer and a
	// goroutine, so without it one address could hold thousands of
	// streams whose answers it never lets through (a window of 0), and
	// the server's memory with them. HTTP/1.1 requests are bounded by
	// MaxBusyConnsPerClient. Zero means DefaultMaxStreamsPerClient;
	// negative means no cap.
	MaxStreamsPerClient int
	// NodeIDsPerSecond is the most IDs of one scheme the server issues a
	// second to all clients together: a ceiling at or below what one node
	// of the scheme can issue, so that a few clients, each within its own
	// limit, cannot use the node up between them. Under it, a client's
	// fair share is the ceiling divided by the clients that asked for IDs
	// of the scheme in the last second: a client under its fair share is
	// served up to it, and a busier one gets only what leaves the others
	// room to reach theirs (429 otherwise). Zero means
	// DefaultNodeIDsPerSecond; negative means no ceiling.
	NodeIDsPerSecond float64
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

// DefaultMaxConnsPerClient returns the default of
// Limits.MaxConnsPerClient for a cap of maxConns: a quarter of it, at
// least 1. One address then never holds more than a quarter of the
// connections, and the others keep three quarters among them; a client
// that needs more opens them from more addresses, or uses HTTP/2, which
// carries its requests on one connection.
func DefaultMaxConnsPerClient(maxConns int) int { return max(1, maxConns/4) }

// DefaultMaxBusyConnsPerClient returns the default of
// Limits.MaxBusyConnsPerClient for a cap of maxConns: a 64th of it, at
// least 2, so that it takes 64 addresses sending partial requests to hold
// the cap (3 of 200 connections: 40 addresses hold 120 and leave 80).
func DefaultMaxBusyConnsPerClient(maxConns int) int { return max(2, maxConns/64) }

// DefaultMaxStreamsPerClient is the default of
// Limits.MaxStreamsPerClient: two connections' worth of streams
// (MaxStreamsPerConn each).
const DefaultMaxStreamsPerClient = 2 * MaxStreamsPerConn

// MaxStreamsPerConn is the most streams an HTTP/2 connection to the main
// port may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS): a client
// queues its requests past it, as gRPC clients do.
const MaxStreamsPerConn = 32

// DefaultNodeIDsPerSecond is the default node-wide ceiling: just under
// the 4,194,303 IDs a second of a TraceId node without thread bits.
const DefaultNodeIDsPerSecond = 4_000_000

// check validates l and fills in its defaults.
func (l *Limits) check() error {
	if l.IDsPerSecond == 0 {
		l.IDsPerSecond = DefaultIDsPerSecond
	}
	if l.RequestsPerSecond == 0 {
		l.RequestsPerSecond = DefaultRequestsPerSecond
	}
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
	}
	switch {
	case l.MaxConnsPerClient == 0 && l.MaxConns > 0:
		l.MaxConnsPerClient = DefaultMaxConnsPerClient(l.MaxConns)
	case l.MaxConnsPerClient == 0:
		l.MaxConnsPerClient = -1 // no cap to share
	case l.MaxConns > 0 && l.MaxConnsPerClient > l.MaxConns:
		return fmt.Errorf("%w: Options.Limits.MaxConnsPerClient %d out of range, want 1 to MaxConns (%d), 0 for the default (a quarter of MaxConns) or negative for no share",
			ErrInvalid, l.MaxConnsPerClient, l.MaxConns)
	}
	switch {
	case l.MaxBusyConnsPerClient == 0 && l.MaxConns > 0:
		l.MaxBusyConnsPerClient = DefaultMaxBusyConnsPerClient(l.MaxConns)
		if l.MaxConnsPerClient > 0 {
			l.MaxBusyConnsPerClient = min(l.MaxBusyConnsPerClient, l.MaxConnsPerClient)
		}
	case l.MaxBusyConnsPerClient == 0:
		l.MaxBusyConnsPerClient = -1
	case l.MaxConnsPerClient > 0 && l.MaxBusyConnsPerClient > l.MaxConnsPerClient:
		return fmt.Errorf("%w: Options.Limits.MaxBusyConnsPerClient %d out of range, want 1 to MaxConnsPerClient (%d), 0 for the default (%d) or negative for no cap",
			ErrInvalid, l.MaxBusyConnsPerClient, l.MaxConnsPerClient, min(DefaultMaxBusyConnsPerClient(l.MaxConns), l.MaxConnsPerClient))
	}
	if l.MaxStreamsPerClient == 0 {
		l.MaxStreamsPerClient = DefaultMaxStreamsPerClient
	}
	if l.NodeIDsPerSecond == 0 {
		l.NodeIDsPerSecond = DefaultNodeIDsPerSecond
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"IDsPerSecond", l.IDsPerSecond}, {"RequestsPerSecond", l.RequestsPerSecond}, {"NodeIDsPerSecond", l.NodeIDsPerSecond}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("%w: Options.Limits.%s %v, want a positive number, 0 for the default or negative for no limit", ErrInvalid, f.name, f.v)
		}
	}
	return nil
}

// writeTooMany answers 429 with the time to wait, in whole seconds.
func writeTooMany(w http.ResponseWriter, scheme string, why ratelimit.Refusal) int {
	secs := retrySeconds(why.Retry)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	return writeError(w, http.StatusTooManyRequests, tooMany(scheme, why.Node, secs))
}

// tooMany is the answer to a refused request, for HTTP and RPC.
func tooMany(scheme string, node bool, secs int) string {
	if node {
		return fmt.Sprintf("this server's %s IDs for this second are taken, or kept for clients under their share; retry in %d s", scheme, secs)
	}
	return fmt.Sprintf("over this client's limit of IDs or requests a second; retry in %d s", secs)
}

// retrySeconds rounds a wait up to whole seconds, at least 1.
func retrySeconds(d time.Duration) int { return max(1, int(math.Ceil(d.Seconds()))) }
