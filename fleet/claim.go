package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/clock"
)

// Defaults of ClaimOptions and LogOptions.
const (
	DefaultPrefix  = "idkit/"
	DefaultTTL     = 10 * time.Second
	DefaultTimeout = 5 * time.Second
	DefaultMaxSkew = 5 * time.Second
)

// MaxNode is the largest node number a claim can name.
const MaxNode = 1<<31 - 1

// ClaimOptions configure ClaimNode.
type ClaimOptions struct {
	// Session, when set, holds the claim under its lease, shared with the
	// process's other claims: etcd then carries one keep-alive and one
	// clock record per process each Interval, not one per claim. Client,
	// Prefix, TTL, Margin, Interval, MaxSkew, Holder, Timeout, Clock and
	// Logger are then the session's, and must be left unset here. Nil
	// means a lease of the claim's own.
	Session *Session
	// Client is the etcd client to use; required without a Session. TLS,
	// authentication and endpoints are its own configuration.
	Client *clientv3.Client
	// Prefix is the key prefix of everything idkit keeps in etcd. Empty
	// means DefaultPrefix.
	Prefix string
	// Space names the set of node numbers claimed from, such as "traceid"
	// or "snowflake/twitter": claims in different spaces never conflict.
	// Empty means "default".
	Space string
	// Min and Max bound the node numbers claimed, inclusive, 0 to MaxNode.
	// Max 0 means Min (a claim of one fixed number).
	Min, Max int
	// TTL is the etcd lease's time to live, in whole seconds, 2s to 1h.
	// Zero means DefaultTTL. A holder that dies frees its node after TTL.
	TTL time.Duration
	// Margin is how long before the lease could expire in etcd the holder
	// treats its claim as lost. It covers this host's clock running slow
	// against etcd's: TTL/50 for a clock rate off by 2%, far beyond any
	// working clock. Zero means TTL/25, twice that. It must be at least
	// TTL/50, and Margin + Interval less than TTL.
	Margin time.Duration
	// Interval is how often the holder renews its lease and records its
	// clock (under <Prefix>holders/). Zero means min(TTL/3, 3s).
	Interval time.Duration
	// MaxSkew bounds how far this host's clock may be from the median of
	// the live holders' recorded clocks. Zero means DefaultMaxSkew; a
	// negative value turns the check off.
	MaxSkew time.Duration
	// Holder names the process in its claim record. Empty means
	// "hostname/pid".
	Holder string
	// Timeout bounds each etcd request (and a renewal's at most half an
	// Interval, so that it can be retried before the deadline). Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// MarkLease, when set, is how far ahead of the clock the generator on
	// the claim leases its node's marks (traceid's and snowflake's
	// Options.Lease, when zero, take it): each node writes its mark about
	// twice a lease, so a fleet of thousands of nodes sets it long to keep
	// etcd's writes down (see docs/fleet.md, "Sizing"). TTL minus Interval
	// is the longest that costs nothing after a crash: a dead holder's
	// node is free only after that, so its successor never waits for the
	// mark. A claimer that takes a node right after its holder closed it
	// may wait up to the lease for its first ID. Zero leaves the
	// generator's default, one second. At most an hour.
	MarkLease time.Duration
	// Clock is the source of time for deadlines and clock records. Nil
	// means the system clock.
	Clock clock.Clock
	// Logger, when set, receives a record per failed renewal and when the
	// claim is lost.
	Logger *slog.Logger
}

// Record is what a claim keeps under its node's key: who holds the node
// and since when. Its session keeps one too, with Node 0, for the clock
// check: the holder's clock when it last wrote the record, each Interval.
type Record struct {
	Node      int           `json:"node"`
	Holder    string        `json:"holder"`
	PID       int           `json:"pid"`
	ClaimedAt time.Time     `json:"claimed_at"`
	Clock     time.Time     `json:"clock"`
	Interval  time.Duration `json:"interval"`
	// Token tells a claim's key from those of its session's other claims:
	// random, one per claim.
	Token string `json:"token,omitempty"`
}

// Claim is a node number held in etcd under a lease. The holder keeps the
// lease alive in the background and treats the claim as lost at a local
// deadline: the send time of the last acknowledged keep-alive plus the TTL,
// minus the margin. etcd cannot expire the lease before that, so the node
// is never held twice, even when the holder is cut off from etcd and learns
// nothing. A lost claim stays lost; claim again for a new one.
//
// A claim has a lease of its own, or shares its Session's with the other
// claims of the process.
//
// A Claim also keeps its node's high-water marks, in the same keys as a
// [Log] with the same prefix, and fences every write with itself (see
// [Claim.AdvanceHighWater]).
//
// A Claim is safe for concurrent use. traceid and snowflake generators take
// one in their Options, keep their marks in it and check it on their slow
// paths; use one generator per claim.
type Claim struct {
	s      *Session
	shared bool // the session is the caller's, not the claim's own
	key    string
	node   int
	record Record
	value  string        // the node key's value as this claim wrote it
	lease  time.Duration // the mark lease it suggests

	lost    atomic.Bool
	mu      sync.Mutex // guards cause
	cause   error
	lostCh  chan struct{}
	closing sync.Once

	marks  *Log       // the key layout, parsing and timeout of the node's marks
	markMu sync.Mutex // one mark request at a time; guards own
	own    map[string]markState
}

// ClaimNode claims the lowest free node number in [o.Min, o.Max] of
// o.Space and keeps it until Close or until the claim is lost. Under
// contention a claimer may take one of the lowest few free numbers rather
// than the lowest. It fails with ErrNoFreeNode when the range is full,
// ErrClockSkew when this host's clock is off the live holders' by more
// than o.MaxSkew, and ErrUnavailable when etcd does not answer.
func ClaimNode(ctx context.Context, o ClaimOptions) (*Claim, error) {
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	c := &Claim{s: o.Session, shared: o.Session != nil, own: make(map[string]markState), lostCh: make(chan struct{})}
	if !c.shared {
		var err error
		c.s, err = newSession(ctx, SessionOptions{Client: o.Client, Prefix: o.Prefix, TTL: o.TTL, Margin: o.Margin,
			Interval: o.Interval, MaxSkew: o.MaxSkew, Holder: o.Holder, Timeout: o.Timeout, Clock: o.Clock, Logger: o.Logger}, "ClaimOptions")
		if err != nil {
			return nil, err
		}
	}
	marks, err := NewLog(LogOptions{Client: c.s.cli, Prefix: c.s.prefix, Timeout: c.s.timeout, Clock: c.s.clock})
	if err == nil {
		c.marks = marks
		err = c.s.add(c)
	}
	if err == nil {
		c.record = c.s.record
		c.lease = o.MarkLease
		err = c.take(ctx, spaceDir(c.s.prefix, o.Space), o.Min, o.Max)
	}
	if err == nil {
		err = c.Check(c.s.clock.Now())
	}
	if err != nil {
		if c.shared {
			c.release()
		} else {
			c.s.remove(c)
			c.s.Close()
		}
		return nil, err
	}
	if !c.shared {
		c.s.start()
	}
	return c, nil
}

func (o *ClaimOptions) setDefaults() error {
	o.Space = cmp.Or(o.Space, "default")
	if o.Max == 0 {
		o.Max = o.Min
	}
	if o.Min < 0 || o.Min > o.Max || o.Max > MaxNode {
		return fmt.Errorf("%w: ClaimOptions.Min = %d, Max = %d, want 0 <= Min <= Max <= %d", ErrInvalid, o.Min, o.Max, MaxNode)
	}
	if o.MarkLease < 0 || o.MarkLease > time.Hour {
		return fmt.Errorf("%w: ClaimOptions.MarkLease = %v, want 0 to 1h", ErrInvalid, o.MarkLease)
	}
	if o.Session == nil {
		if o.Client == nil {
			return fmt.Errorf("%w: ClaimOptions.Client and Session are nil, want an etcd client or a session", ErrInvalid)
		}
		return nil
	}
	s := o.Session
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"Client", o.Client != nil && o.Client != s.cli},
		{"Prefix", o.Prefix != "" && o.Prefix != s.prefix},
		{"TTL", o.TTL != 0}, {"Margin", o.Margin != 0}, {"Interval", o.Interval != 0}, {"MaxSkew", o.MaxSkew != 0},
		{"Holder", o.Holder != ""}, {"Timeout", o.Timeout != 0}, {"Clock", o.Clock != nil}, {"Logger", o.Logger != nil},
	} {
		if f.set {
			return fmt.Errorf("%w: ClaimOptions.%s is set with a Session, want it set in SessionOptions", ErrInvalid, f.name)
		}
	}
	return nil
}

// spaceDir is the key prefix of a space's node keys.
func spaceDir(prefix, space string) string { return prefix + "nodes/" + space + "/" }

// nodeKey is the key of node n: zero-padded so that keys sort as numbers.
func nodeKey(dir string, n int) string { return fmt.Sprintf("%s%010d", dir, n) }

// take claims the lowest free node in [lo, hi] with one small transaction
// per attempt: create the node's key under the lease if no key exists. It
// works from one listing of the taken keys, adding each number it lost a
// race for; after a lost race it picks at random among a window of the
// lowest free numbers that grows fourfold with each attempt, so that many
// claimers at once spread out instead of all retrying the same number.
// Every eighth attempt lists the keys again.
func (c *Claim) take(ctx context.Context, dir string, lo, hi int) error {
	var taken map[int]bool
	from := lo
	token := strconv.FormatUint(rand.Uint64(), 16)
	for attempt := 0; ; attempt++ {
		if err := c.keepLeaseDuringTake(ctx); err != nil {
			return err
		}
		if attempt%8 == 0 {
			var err error
			if from, taken, err = c.listTaken(ctx, dir, lo, hi); err != nil {
				return err
			}
		}
		n, ok := pickFree(taken, from, hi, 1<<min(2*attempt, 20))
		if !ok {
			return fmt.Errorf("%w: all %d numbers from %d to %d of space %q are claimed", ErrNoFreeNode, hi-lo+1, lo, hi, dir)
		}
		key := nodeKey(dir, n)
		rec := c.record
		rec.Node, rec.ClaimedAt, rec.Token = n, c.s.clock.Now().UTC().Round(0), token
		rec.Clock = rec.ClaimedAt
		val, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("fleet: encode claim record: %w", err)
		}
		// A retry after an unanswered attempt finds the key created by
		// that attempt: under this claim's lease and with its token, it
		// is this claim's (a session's other claims share the lease).
		resp, err := request(ctx, c.s.timeout, "claim node "+strconv.Itoa(n), func(ctx context.Context) (*clientv3.TxnResponse, error) {
			return c.s.cli.Txn(ctx).
				If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(clientv3.OpPut(key, string(val), clientv3.WithLease(c.s.lease))).
				Else(clientv3.OpGet(key)).
				Commit()
		})
		if err != nil {
			return err
		}
		if kv := firstKV(resp.Responses[0]); resp.Succeeded || (kv != nil && clientv3.LeaseID(kv.Lease) == c.s.lease && string(kv.Value) == string(val)) {
			c.node, c.key, c.record, c.value = n, key, rec, string(val)
			return nil
		}
		if taken == nil {
			taken = make(map[int]bool)
		}
		taken[n] = true
	}
}

// keepLeaseDuringTake renews a lease of the claim's own once an interval
// has passed since the last renewal, so that a long contended take cannot
// outlive it; a shared session renews its lease in the background.
func (c *Claim) keepLeaseDuringTake(ctx context.Context) error {
	if c.shared {
		return c.Check(c.s.clock.Now())
	}
	if err := c.s.keepAliveIfDue(ctx); err != nil {
		return err
	}
	return c.Check(c.s.clock.Now())
}

// listWindow is how far below the top of a range's claims listTaken
// lists the claimed keys, and how many it lists above.
const listWindow = 256

// listTaken returns what is claimed in [lo, hi], as a hint for picking a
// free number (the claim's transaction is what decides): every number
// below from is claimed, and taken holds claimed numbers from there on.
// Claimers take the lowest free numbers, and those that lose a race pick
// among a few above them, so the claims fill [lo, lo+count) but for a few
// gaps near its top. listTaken therefore lists only the claimed keys from
// listWindow below lo+count to listWindow above it, after checking that
// every number below that is claimed: two small requests however many
// nodes are claimed. Only when a gap lies further down, as after a holder
// released a node, does it list every claimed key of the range.
func (c *Claim) listTaken(ctx context.Context, dir string, lo, hi int) (from int, taken map[int]bool, err error) {
	all, err := request(ctx, c.s.timeout, "count claimed nodes", func(ctx context.Context) (*clientv3.GetResponse, error) {
		return c.s.cli.Get(ctx, nodeKey(dir, lo), clientv3.WithRange(nodeKey(dir, hi+1)), clientv3.WithCountOnly())
	})
	if err != nil {
		return 0, nil, err
	}
	count := int(all.Count)
	if count == 0 || count > hi-lo { // nothing claimed, or everything
		return lo + count, nil, nil
	}
	from = max(lo, lo+count-listWindow)
	resp, err := request(ctx, c.s.timeout, "list claimed nodes", func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return c.s.cli.Txn(ctx).Then(
			clientv3.OpGet(nodeKey(dir, lo), clientv3.WithRange(nodeKey(dir, max(from, lo+1))), clientv3.WithCountOnly()),
			clientv3.OpGet(nodeKey(dir, from), clientv3.WithRange(nodeKey(dir, hi+1)), clientv3.WithKeysOnly(), clientv3.WithLimit(2*listWindow)),
		).Commit()
	})
	if err != nil {
		return 0, nil, err
	}
	below, near := resp.Responses[0].GetResponseRange(), resp.Responses[1].GetResponseRange()
	if from == lo || int(below.Count) == from-lo {
		return from, parseTaken(dir, near.Kvs), nil
	}
	full, err := request(ctx, c.s.timeout, "list claimed nodes", func(ctx context.Context) (*clientv3.GetResponse, error) {
		return c.s.cli.Get(ctx, nodeKey(dir, lo), clientv3.WithRange(nodeKey(dir, hi+1)), clientv3.WithKeysOnly())
	})
	if err != nil {
		return 0, nil, err
	}
	return lo, parseTaken(dir, full.Kvs), nil
}

// parseTaken returns the numbers of the node keys kvs of dir.
func parseTaken(dir string, kvs []*mvccpb.KeyValue) map[int]bool {
	taken := make(map[int]bool, len(kvs))
	for _, kv := range kvs {
		if n, err := strconv.Atoi(string(kv.Key[len(dir):])); err == nil {
			taken[n] = true
		}
	}
	return taken
}

// pickFree returns a number in [lo, hi] not in taken, chosen at random
// among the lowest window such numbers. taken may be nil.
func pickFree(taken map[int]bool, lo, hi, window int) (int, bool) {
	var free []int
	for n := lo; n <= hi && len(free) < window; n++ {
		if !taken[n] {
			free = append(free, n)
		}
	}
	if len(free) == 0 {
		return 0, false
	}
	return free[rand.IntN(len(free))], true
}

// Node returns the claimed node number.
func (c *Claim) Node() int { return c.node }

// MarkLease returns how far ahead of the clock the generator on the claim
// should lease its node's marks: ClaimOptions.MarkLease, zero if unset.
func (c *Claim) MarkLease() time.Duration { return c.lease }

// Deadline returns the local time at which the claim will be lost unless a
// keep-alive is acknowledged first.
func (c *Claim) Deadline() time.Time { return c.s.Deadline() }

// Check returns nil if the claim holds until t, a time of the claim's
// clock (on the system clock a monotonic reading counts), as far as is
// known now. It returns an error wrapping ErrNodeLost from the first call
// whose t reaches the deadline, or once the claim was revoked or fenced
// out, on; and ErrClosed once the claim was closed. t may be later than
// now: a generator asks whether the claim holds until the unit it is about
// to issue in ends, and a claim that will not is lost at once.
func (c *Claim) Check(t time.Time) error {
	if !c.lost.Load() {
		if err := c.s.Check(t); err != nil {
			c.end(err, false)
		}
	}
	return c.err()
}

// Done is closed when the claim is found lost, by Check or by the
// background renewal, as a context's Done and concurrency.Session's Done
// are; Check then says why.
func (c *Claim) Done() <-chan struct{} { return c.lostCh }

// Close frees the node at once: it revokes a lease of the claim's own, or
// deletes the node's key from a shared session's lease. The claim is lost
// from then on, and Check fails with ErrClosed. It returns an error if
// etcd did not confirm the release, in which case the node frees itself
// after the TTL (after the session's end, for a shared session).
func (c *Claim) Close() error {
	var err error
	c.closing.Do(func() {
		c.end(fmt.Errorf("%w: node %d", ErrClosed, c.node), true)
		if c.shared {
			err = c.release()
		} else {
			err = c.s.Close()
		}
	})
	return err
}

// release forgets the claim in its shared session and deletes the node's
// key if it is still under the session's lease.
func (c *Claim) release() error {
	c.s.remove(c)
	if c.key == "" {
		return nil
	}
	_, err := request(context.Background(), c.s.timeout, "release node "+strconv.Itoa(c.node), func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return c.s.cli.Txn(ctx).If(c.fence()).Then(clientv3.OpDelete(c.key)).Commit()
	})
	return err
}

func (c *Claim) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cause
}

// lose marks the claim lost for good with cause.
func (c *Claim) lose(cause error) {
	if c.end(cause, false) && c.s.log != nil {
		c.s.log.Warn("fleet: node claim lost", "node", c.node, "err", cause)
	}
}

// end marks the claim ended with cause: lost, or closed when closed is
// set, which overrides an earlier loss. It reports whether cause took.
func (c *Claim) end(cause error, closed bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause != nil && !closed {
		return false
	}
	c.cause = cause
	if !c.lost.Load() {
		c.lost.Store(true)
		close(c.lostCh)
	}
	return true
}
