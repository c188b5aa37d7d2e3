package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
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
	// Client is the etcd client to use; required. TLS, authentication and
	// endpoints are its own configuration.
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
	// clock. Zero means min(TTL/3, 3s).
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
	// Clock is the source of time for deadlines and clock records. Nil
	// means the system clock.
	Clock clock.Clock
	// Logger, when set, receives a record per failed renewal and when the
	// claim is lost.
	Logger *slog.Logger
}

// Record is what a claim keeps under its node's key: who holds the node
// and the holder's clock when it last wrote the record.
type Record struct {
	Node      int           `json:"node"`
	Holder    string        `json:"holder"`
	PID       int           `json:"pid"`
	ClaimedAt time.Time     `json:"claimed_at"`
	Clock     time.Time     `json:"clock"`
	Interval  time.Duration `json:"interval"`
}

// Claim is a node number held in etcd under a lease. The holder keeps the
// lease alive in the background and treats the claim as lost at a local
// deadline: the send time of the last acknowledged keep-alive plus the TTL,
// minus the margin. etcd cannot expire the lease before that, so the node
// is never held twice, even when the holder is cut off from etcd and learns
// nothing. A lost claim stays lost; claim again for a new one.
//
// A Claim also keeps its node's high-water marks, in the same keys as a
// [Log] with the same prefix, and fences every write with itself (see
// [Claim.AdvanceHighWater]).
//
// A Claim is safe for concurrent use. traceid and snowflake generators take
// one in their Options, keep their marks in it and check it on their slow
// paths; use one generator per claim.
type Claim struct {
	cli      *clientv3.Client
	key      string
	node     int
	lease    clientv3.LeaseID
	record   Record
	ttl      time.Duration
	margin   time.Duration
	interval time.Duration
	timeout  time.Duration
	clock    clock.Clock
	log      *slog.Logger

	renewed  time.Time // when the last acknowledged keep-alive was sent; owned by take, then keepAlive
	deadline atomic.Pointer[time.Time]
	lost     atomic.Bool
	mu       sync.Mutex // guards cause
	cause    error
	lostCh   chan struct{}
	stop     chan struct{}
	done     chan struct{}
	closing  sync.Once

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
	marks, err := NewLog(LogOptions{Client: o.Client, Prefix: o.Prefix, Timeout: o.Timeout, Clock: o.Clock})
	if err != nil {
		return nil, err
	}
	c := &Claim{
		marks:    marks,
		own:      make(map[string]markState),
		cli:      o.Client,
		ttl:      o.TTL,
		margin:   o.Margin,
		interval: o.Interval,
		timeout:  o.Timeout,
		clock:    o.Clock,
		log:      o.Logger,
		lostCh:   make(chan struct{}),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	dir := spaceDir(o.Prefix, o.Space)
	if err := c.checkSkew(ctx, dir, o.MaxSkew); err != nil {
		return nil, err
	}
	sent := c.clock.Now()
	grant, err := request(ctx, c.timeout, "grant a lease", func(ctx context.Context) (*clientv3.LeaseGrantResponse, error) {
		return c.cli.Grant(ctx, int64(c.ttl/time.Second))
	})
	if err != nil {
		return nil, err
	}
	c.lease = grant.ID
	c.setDeadline(sent, grant.TTL)
	c.renewed = sent
	c.record = Record{Holder: o.Holder, PID: os.Getpid(), Interval: c.interval}
	if err := c.take(ctx, dir, o.Min, o.Max); err != nil {
		c.revoke()
		return nil, err
	}
	if err := c.Check(c.clock.Now()); err != nil {
		c.revoke()
		return nil, err
	}
	go c.keepAlive()
	return c, nil
}

func (o *ClaimOptions) setDefaults() error {
	if o.Client == nil {
		return fmt.Errorf("%w: ClaimOptions.Client is nil, want an etcd client", ErrInvalid)
	}
	o.Prefix = cmp.Or(o.Prefix, DefaultPrefix)
	o.Space = cmp.Or(o.Space, "default")
	if o.Max == 0 {
		o.Max = o.Min
	}
	if o.Min < 0 || o.Min > o.Max || o.Max > MaxNode {
		return fmt.Errorf("%w: ClaimOptions.Min = %d, Max = %d, want 0 <= Min <= Max <= %d", ErrInvalid, o.Min, o.Max, MaxNode)
	}
	o.TTL = cmp.Or(o.TTL, DefaultTTL)
	if o.TTL < 2*time.Second || o.TTL > time.Hour || o.TTL%time.Second != 0 {
		return fmt.Errorf("%w: ClaimOptions.TTL = %v, want whole seconds from 2s to 1h", ErrInvalid, o.TTL)
	}
	o.Interval = cmp.Or(o.Interval, min(o.TTL/3, 3*time.Second))
	o.Margin = cmp.Or(o.Margin, o.TTL/25)
	if o.Interval <= 0 || o.Margin < o.TTL/50 || o.Margin+o.Interval >= o.TTL {
		return fmt.Errorf("%w: ClaimOptions.Margin = %v, Interval = %v, want Interval > 0, Margin >= TTL/50 (%v) and Margin + Interval < TTL (%v)",
			ErrInvalid, o.Margin, o.Interval, o.TTL/50, o.TTL)
	}
	o.MaxSkew = cmp.Or(o.MaxSkew, DefaultMaxSkew)
	o.Timeout = cmp.Or(o.Timeout, DefaultTimeout)
	if o.Timeout < 0 {
		return fmt.Errorf("%w: ClaimOptions.Timeout = %v, want > 0 (or 0 for %v)", ErrInvalid, o.Timeout, DefaultTimeout)
	}
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	if o.Holder == "" {
		host, _ := os.Hostname()
		o.Holder = cmp.Or(host, "unknown") + "/" + strconv.Itoa(os.Getpid())
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
	for attempt := 0; ; attempt++ {
		if err := c.keepLeaseDuringTake(ctx); err != nil {
			return err
		}
		if attempt%8 == 0 {
			var err error
			if taken, err = c.listTaken(ctx, dir, lo, hi); err != nil {
				return err
			}
		}
		n, ok := pickFree(taken, lo, hi, 1<<min(2*attempt, 20))
		if !ok {
			return fmt.Errorf("%w: all %d numbers from %d to %d of space %q are claimed", ErrNoFreeNode, hi-lo+1, lo, hi, dir)
		}
		key := nodeKey(dir, n)
		rec := c.record
		rec.Node, rec.ClaimedAt = n, c.clock.Now().UTC().Round(0)
		rec.Clock = rec.ClaimedAt
		val, err := json.Marshal(rec)
		if err != nil {
			return fmt.Errorf("fleet: encode claim record: %w", err)
		}
		// A retry after an unanswered attempt finds the key created by
		// that attempt: under this claim's lease, it is this claim's.
		resp, err := request(ctx, c.timeout, "claim node "+strconv.Itoa(n), func(ctx context.Context) (*clientv3.TxnResponse, error) {
			return c.cli.Txn(ctx).
				If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(clientv3.OpPut(key, string(val), clientv3.WithLease(c.lease))).
				Else(clientv3.OpGet(key)).
				Commit()
		})
		if err != nil {
			return err
		}
		if kv := firstKV(resp.Responses[0]); resp.Succeeded || (kv != nil && clientv3.LeaseID(kv.Lease) == c.lease) {
			c.node, c.key, c.record = n, key, rec
			return nil
		}
		taken[n] = true
	}
}

// keepLeaseDuringTake renews the lease once an interval has passed since
// the last renewal, so that a long contended take cannot outlive it.
func (c *Claim) keepLeaseDuringTake(ctx context.Context) error {
	if c.clock.Now().Sub(c.renewed) < c.interval {
		return nil
	}
	if err := retry(ctx, c.timeout, "keep the lease alive", c.keepAliveOnce); err != nil {
		return err
	}
	return c.Check(c.clock.Now())
}

// listTaken returns the claimed numbers in [lo, hi].
func (c *Claim) listTaken(ctx context.Context, dir string, lo, hi int) (map[int]bool, error) {
	resp, err := request(ctx, c.timeout, "list claimed nodes", func(ctx context.Context) (*clientv3.GetResponse, error) {
		return c.cli.Get(ctx, nodeKey(dir, lo), clientv3.WithRange(nodeKey(dir, hi+1)), clientv3.WithKeysOnly())
	})
	if err != nil {
		return nil, err
	}
	taken := make(map[int]bool, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		if n, err := strconv.Atoi(string(kv.Key[len(dir):])); err == nil {
			taken[n] = true
		}
	}
	return taken, nil
}

// pickFree returns a number in [lo, hi] not in taken, chosen at random
// among the lowest window such numbers.
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

// Deadline returns the local time at which the claim will be lost unless a
// keep-alive is acknowledged first.
func (c *Claim) Deadline() time.Time { return *c.deadline.Load() }

// Check returns nil if the claim holds until t, a time of the claim's
// clock (on the system clock a monotonic reading counts), as far as is
// known now. It returns an error wrapping ErrNodeLost from the first call
// whose t reaches the deadline, or once the claim was revoked or fenced
// out, on; and ErrClosed once the claim was closed. t may be later than now: a generator asks whether the
// claim holds until the unit it is about to issue in ends, and a claim
// that will not is lost at once.
func (c *Claim) Check(t time.Time) error {
	if !c.lost.Load() {
		d := c.deadline.Load()
		if t.Before(*d) {
			return nil
		}
		c.lose(fmt.Errorf("%w: node %d: local deadline %v, not after %v", ErrNodeLost, c.node,
			d.UTC().Round(time.Millisecond), t.UTC().Round(time.Millisecond)))
	}
	return c.err()
}

// Done is closed when the claim is found lost, by Check or by the
// background renewal, as a context's Done and concurrency.Session's Done
// are; Check then says why.
func (c *Claim) Done() <-chan struct{} { return c.lostCh }

// Close stops renewing and revokes the lease, freeing the node at once. The
// claim is lost from then on, and Check fails with ErrClosed. It returns an error if etcd did not confirm
// the revocation, in which case the node frees itself after the TTL.
func (c *Claim) Close() error {
	var err error
	c.closing.Do(func() {
		close(c.stop)
		<-c.done
		c.mu.Lock()
		c.cause = fmt.Errorf("%w: node %d", ErrClosed, c.node) // whatever was lost before
		if !c.lost.Load() {
			c.lost.Store(true)
			close(c.lostCh)
		}
		c.mu.Unlock()
		err = c.revoke()
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cause != nil {
		return
	}
	c.cause = cause
	c.lost.Store(true)
	close(c.lostCh)
	if c.log != nil {
		c.log.Warn("fleet: node claim lost", "node", c.node, "err", cause)
	}
}

// setDeadline moves the deadline to sent + ttl seconds - margin, where sent
// is when the request that etcd answered with ttl was sent: etcd restarted
// the lease's countdown no earlier than that. It never moves the deadline
// back, nor revives a claim whose deadline had passed before sent.
func (c *Claim) setDeadline(sent time.Time, ttl int64) {
	d := sent.Add(time.Duration(ttl)*time.Second - c.margin)
	for {
		old := c.deadline.Load()
		if old != nil && (!sent.Before(*old) || !d.After(*old)) {
			return
		}
		if c.deadline.CompareAndSwap(old, &d) {
			return
		}
	}
}

// keepAlive renews the lease and the clock record every interval until
// Close, and marks the claim lost when the deadline passes or etcd says the
// lease or key is gone. A failed renewal is tried again after retryDelay,
// and each attempt gets half an interval at most, so that a member lost
// mid-renewal leaves time for several attempts on the others before the
// deadline (TTL minus Margin after the last acknowledged renewal).
func (c *Claim) keepAlive() {
	defer close(c.done)
	timer := time.NewTimer(c.interval)
	defer timer.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-timer.C:
		}
		if c.Check(c.clock.Now()) != nil {
			return
		}
		wait := c.interval
		if err := c.renew(); err != nil {
			if errors.Is(err, ErrNodeLost) {
				c.lose(err)
				return
			}
			if c.log != nil {
				c.log.Warn("fleet: node claim renewal failed; retrying", "node", c.node, "err", err, "deadline", c.Deadline())
			}
			wait = retryDelay
		}
		if err := c.Check(c.clock.Now()); err != nil {
			return
		}
		timer.Reset(max(min(wait, c.Deadline().Sub(c.clock.Now())), time.Millisecond))
	}
}

// retryDelay is the pause before a failed renewal is tried again.
const retryDelay = 100 * time.Millisecond

// attemptTimeout bounds one request of a renewal: Timeout, or half an
// interval if that is shorter.
func (c *Claim) attemptTimeout() time.Duration { return min(c.timeout, c.interval/2) }

// renewLease sends one keep-alive and moves the deadline once etcd
// acknowledges it.
func (c *Claim) renewLease(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.attemptTimeout())
	defer cancel()
	err := c.keepAliveOnce(ctx)
	var ce clientError
	if errors.As(err, &ce) {
		return etcdError("keep the lease alive", ce.err)
	}
	return err
}

// keepAliveOnce sends one keep-alive and moves the deadline once etcd
// acknowledges it. An error of the etcd client comes back as a
// clientError, for retry; a lease that etcd no longer holds as
// ErrNodeLost.
func (c *Claim) keepAliveOnce(ctx context.Context) error {
	sent := c.clock.Now()
	resp, err := c.cli.KeepAliveOnce(ctx, c.lease)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) || (err == nil && resp.TTL <= 0) {
		return fmt.Errorf("%w: node %d: etcd no longer holds the lease", ErrNodeLost, c.node)
	}
	if err != nil {
		return clientError{err}
	}
	c.renewed = sent
	c.setDeadline(sent, resp.TTL)
	return nil
}

// renew renews the lease and, once acknowledged, rewrites the clock record
// if the key is still this lease's.
func (c *Claim) renew() error {
	ctx := context.Background()
	if err := c.renewLease(ctx); err != nil {
		return err
	}
	rec := c.record
	rec.Clock = c.clock.Now().UTC().Round(0)
	val, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("fleet: encode claim record: %w", err)
	}
	txn, err := withTimeout(ctx, c.attemptTimeout(), func(ctx context.Context) (*clientv3.TxnResponse, error) {
		return c.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.LeaseValue(c.key), "=", c.lease)).
			Then(clientv3.OpPut(c.key, string(val), clientv3.WithLease(c.lease))).
			Commit()
	})
	if err != nil {
		return etcdError("record the clock", err)
	}
	if !txn.Succeeded {
		return fmt.Errorf("%w: node %d: its key is gone or held under another lease", ErrNodeLost, c.node)
	}
	return nil
}

func (c *Claim) revoke() error {
	_, err := request(context.Background(), c.timeout, "revoke the lease of node "+strconv.Itoa(c.node), func(ctx context.Context) (*clientv3.LeaseRevokeResponse, error) {
		return c.cli.Revoke(ctx, c.lease)
	})
	if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return err
	}
	return nil
}
