package fleet

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/clock"
)

// SessionOptions configure NewSession. Their meaning and defaults are those
// of the fields of the same names in ClaimOptions.
type SessionOptions struct {
	Client   *clientv3.Client
	Prefix   string
	TTL      time.Duration
	Margin   time.Duration
	Interval time.Duration
	MaxSkew  time.Duration
	Holder   string
	Timeout  time.Duration
	Clock    clock.Clock
	Logger   *slog.Logger
}

// Session is one etcd lease that a process keeps alive for every claim it
// takes in it (see ClaimOptions.Session), and the process's clock record.
// A process that holds many nodes renews one lease and writes one record
// each Interval, instead of one of each per claim: etcd's load grows with
// the processes of a fleet, not with its nodes.
//
// The claims of a session share its deadline, and are lost together when
// it passes; each is fenced by the lease as a claim of its own lease is,
// so the argument of the package documentation holds for each. Closing a
// claim frees its node at once; closing the session frees them all.
type Session struct {
	cli      *clientv3.Client
	prefix   string
	lease    clientv3.LeaseID
	key      string // the clock record's key
	record   Record
	ttl      time.Duration
	margin   time.Duration
	interval time.Duration
	timeout  time.Duration
	clock    clock.Clock
	log      *slog.Logger

	renewed  time.Time // when the last acknowledged keep-alive was sent; owned by the creator, then keepAlive
	deadline atomic.Pointer[time.Time]
	lost     atomic.Bool
	mu       sync.Mutex // guards cause and claims
	cause    error
	claims   map[*Claim]struct{}
	lostCh   chan struct{}
	stop     chan struct{}
	done     chan struct{}
	started  bool // keepAlive runs; set by start
	closing  sync.Once
}

// NewSession grants a lease, records this host's clock under it and keeps
// both alive until Close or until the session is lost. It fails with
// ErrClockSkew when this host's clock is off the live holders' by more
// than o.MaxSkew, and ErrUnavailable when etcd does not answer.
func NewSession(ctx context.Context, o SessionOptions) (*Session, error) {
	s, err := newSession(ctx, o, "SessionOptions")
	if err != nil {
		return nil, err
	}
	s.start()
	return s, nil
}

// newSession is NewSession without the background renewal, which a claim
// of its own session starts only once it holds its node. typ names the
// options the caller set, for errors.
func newSession(ctx context.Context, o SessionOptions, typ string) (*Session, error) {
	if err := o.setDefaults(typ); err != nil {
		return nil, err
	}
	s := &Session{
		cli:      o.Client,
		prefix:   o.Prefix,
		ttl:      o.TTL,
		margin:   o.Margin,
		interval: o.Interval,
		timeout:  o.Timeout,
		clock:    o.Clock,
		log:      o.Logger,
		claims:   make(map[*Claim]struct{}),
		lostCh:   make(chan struct{}),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	if err := s.checkSkew(ctx, o.MaxSkew); err != nil {
		return nil, err
	}
	sent := s.clock.Now()
	grant, err := request(ctx, s.timeout, "grant a lease", func(ctx context.Context) (*clientv3.LeaseGrantResponse, error) {
		return s.cli.Grant(ctx, int64(s.ttl/time.Second))
	})
	if err != nil {
		return nil, err
	}
	s.lease = grant.ID
	s.key = s.prefix + "holders/" + strconv.FormatInt(int64(s.lease), 16)
	s.setDeadline(sent, grant.TTL)
	s.renewed = sent
	now := s.clock.Now().UTC().Round(0)
	s.record = Record{Holder: o.Holder, PID: os.Getpid(), ClaimedAt: now, Clock: now, Interval: s.interval}
	if err := retry(ctx, s.timeout, "record the clock", func(ctx context.Context) error { return s.writeRecord(ctx, now) }); err != nil {
		s.revoke()
		return nil, err
	}
	return s, nil
}

// setDefaults checks o and sets its defaults; errors name the fields as
// fields of typ, the options the caller set.
func (o *SessionOptions) setDefaults(typ string) error {
	if o.Client == nil {
		return fmt.Errorf("%w: %s.Client is nil, want an etcd client", ErrInvalid, typ)
	}
	o.Prefix = cmp.Or(o.Prefix, DefaultPrefix)
	o.TTL = cmp.Or(o.TTL, DefaultTTL)
	if o.TTL < 2*time.Second || o.TTL > time.Hour || o.TTL%time.Second != 0 {
		return fmt.Errorf("%w: %s.TTL = %v, want whole seconds from 2s to 1h", ErrInvalid, typ, o.TTL)
	}
	o.Interval = cmp.Or(o.Interval, min(o.TTL/3, 3*time.Second))
	o.Margin = cmp.Or(o.Margin, o.TTL/25)
	if o.Interval <= 0 || o.Margin < o.TTL/50 || o.Margin+o.Interval >= o.TTL {
		return fmt.Errorf("%w: %s.Margin = %v, Interval = %v, want Interval > 0, Margin >= TTL/50 (%v) and Margin + Interval < TTL (%v)",
			ErrInvalid, typ, o.Margin, o.Interval, o.TTL/50, o.TTL)
	}
	o.MaxSkew = cmp.Or(o.MaxSkew, DefaultMaxSkew)
	o.Timeout = cmp.Or(o.Timeout, DefaultTimeout)
	if o.Timeout < 0 {
		return fmt.Errorf("%w: %s.Timeout = %v, want > 0 (or 0 for %v)", ErrInvalid, typ, o.Timeout, DefaultTimeout)
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

// Deadline returns the local time at which the session and its claims will
// be lost unless a keep-alive is acknowledged first.
func (s *Session) Deadline() time.Time { return *s.deadline.Load() }

// Check returns nil if the session holds until t, as Claim.Check does for
// a claim; once it does not, every claim of the session is lost too.
func (s *Session) Check(t time.Time) error {
	if !s.lost.Load() {
		d := s.deadline.Load()
		if t.Before(*d) {
			return nil
		}
		s.lose(fmt.Errorf("%w: lease %x: local deadline %v, not after %v", ErrNodeLost, int64(s.lease),
			d.UTC().Round(time.Millisecond), t.UTC().Round(time.Millisecond)))
	}
	return s.err()
}

// Done is closed when the session is found lost or is closed.
func (s *Session) Done() <-chan struct{} { return s.lostCh }

// Close stops renewing and revokes the lease, freeing every node of the
// session at once; its claims are lost and Check fails with ErrClosed. It
// returns an error if etcd did not confirm the revocation, in which case
// the nodes free themselves after the TTL.
func (s *Session) Close() error {
	var err error
	s.closing.Do(func() {
		if s.started {
			close(s.stop)
			<-s.done
		}
		s.end(fmt.Errorf("%w: lease %x", ErrClosed, int64(s.lease)), true)
		err = s.revoke()
	})
	return err
}

func (s *Session) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cause
}

// lose marks the session and all its claims lost for good with cause.
func (s *Session) lose(cause error) { s.end(cause, false) }

// end marks the session and its claims ended with cause: lost, or closed
// when closed is set, which overrides an earlier loss.
func (s *Session) end(cause error, closed bool) {
	s.mu.Lock()
	if s.cause != nil && !closed {
		s.mu.Unlock()
		return
	}
	s.cause = cause
	if !s.lost.Load() {
		s.lost.Store(true)
		close(s.lostCh)
	}
	claims := s.claims
	s.claims = nil
	s.mu.Unlock()
	if !closed && s.log != nil {
		s.log.Warn("fleet: session lost", "lease", strconv.FormatInt(int64(s.lease), 16), "claims", len(claims), "err", cause)
	}
	for c := range claims {
		c.end(cause, closed)
	}
}

// add makes c one of the session's claims, or fails as Check does if the
// session has ended.
func (s *Session) add(c *Claim) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.claims == nil {
		return s.cause
	}
	s.claims[c] = struct{}{}
	return nil
}

// remove forgets c, once it is closed.
func (s *Session) remove(c *Claim) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.claims, c)
}

// setDeadline moves the deadline to sent + ttl seconds - margin, where sent
// is when the request that etcd answered with ttl was sent: etcd restarted
// the lease's countdown no earlier than that. It never moves the deadline
// back, nor revives a session whose deadline had passed before sent.
func (s *Session) setDeadline(sent time.Time, ttl int64) {
	d := sent.Add(time.Duration(ttl)*time.Second - s.margin)
	for {
		old := s.deadline.Load()
		if old != nil && (!sent.Before(*old) || !d.After(*old)) {
			return
		}
		if s.deadline.CompareAndSwap(old, &d) {
			return
		}
	}
}

// start runs the background renewal.
func (s *Session) start() {
	s.started = true
	go s.keepAlive()
}

// keepAlive renews the lease and the clock record every interval until
// Close, and marks the session lost when the deadline passes or etcd says
// the lease is gone. A failed renewal is tried again after retryDelay,
// and each attempt gets half an interval at most, so that a member lost
// mid-renewal leaves time for several attempts on the others before the
// deadline (TTL minus Margin after the last acknowledged renewal).
func (s *Session) keepAlive() {
	defer close(s.done)
	timer := time.NewTimer(s.interval)
	defer timer.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-timer.C:
		}
		if s.Check(s.clock.Now()) != nil {
			return
		}
		wait := s.interval
		if err := s.renew(); err != nil {
			if errors.Is(err, ErrNodeLost) {
				s.lose(err)
				return
			}
			if s.log != nil {
				s.log.Warn("fleet: lease renewal failed; retrying", "lease", strconv.FormatInt(int64(s.lease), 16), "err", err, "deadline", s.Deadline())
			}
			wait = retryDelay
		}
		if err := s.Check(s.clock.Now()); err != nil {
			return
		}
		timer.Reset(max(min(wait, s.Deadline().Sub(s.clock.Now())), time.Millisecond))
	}
}

// retryDelay is the pause before a failed renewal is tried again.
const retryDelay = 100 * time.Millisecond

// attemptTimeout bounds one request of a renewal: Timeout, or half an
// interval if that is shorter.
func (s *Session) attemptTimeout() time.Duration { return min(s.timeout, s.interval/2) }

// keepAliveIfDue renews the lease once an interval has passed since the
// last renewal, so that a long contended claim cannot outlive it. Only a
// session whose background renewal has not started calls it.
func (s *Session) keepAliveIfDue(ctx context.Context) error {
	if s.clock.Now().Sub(s.renewed) < s.interval {
		return nil
	}
	if err := retry(ctx, s.timeout, "keep the lease alive", s.keepAliveOnce); err != nil {
		return err
	}
	return s.Check(s.clock.Now())
}

// keepAliveOnce sends one keep-alive and moves the deadline once etcd
// acknowledges it. An error of the etcd client comes back as a
// clientError, for retry; a lease that etcd no longer holds as
// ErrNodeLost.
func (s *Session) keepAliveOnce(ctx context.Context) error {
	sent := s.clock.Now()
	resp, err := s.cli.KeepAliveOnce(ctx, s.lease)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) || (err == nil && resp.TTL <= 0) {
		return fmt.Errorf("%w: lease %x: etcd no longer holds it", ErrNodeLost, int64(s.lease))
	}
	if err != nil {
		return clientError{err}
	}
	s.renewed = sent
	s.setDeadline(sent, resp.TTL)
	return nil
}

// renew renews the lease and, once acknowledged, rewrites the clock record.
func (s *Session) renew() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.attemptTimeout())
	err := s.keepAliveOnce(ctx)
	cancel()
	var ce clientError
	if errors.As(err, &ce) {
		return etcdError("keep the lease alive", ce.err)
	}
	if err != nil {
		return err
	}
	ctx, cancel = context.WithTimeout(context.Background(), s.attemptTimeout())
	defer cancel()
	err = s.writeRecord(ctx, s.clock.Now().UTC().Round(0))
	if errors.As(err, &ce) {
		return etcdError("record the clock", ce.err)
	}
	return err
}

// writeRecord records the clock now under the lease, in one request. An
// error of the etcd client comes back as a clientError, for retry.
func (s *Session) writeRecord(ctx context.Context, now time.Time) error {
	rec := s.record
	rec.Clock = now
	val, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("fleet: encode clock record: %w", err)
	}
	_, err = s.cli.Put(ctx, s.key, string(val), clientv3.WithLease(s.lease))
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("%w: lease %x: etcd no longer holds it", ErrNodeLost, int64(s.lease))
	}
	if err != nil {
		return clientError{err}
	}
	return nil
}

func (s *Session) revoke() error {
	_, err := request(context.Background(), s.timeout, "revoke lease "+strconv.FormatInt(int64(s.lease), 16), func(ctx context.Context) (*clientv3.LeaseRevokeResponse, error) {
		return s.cli.Revoke(ctx, s.lease)
	})
	if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return err
	}
	return nil
}
