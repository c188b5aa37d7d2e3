// Package lease is the restart safety of idkit's time-based generators
// (traceid, snowflake): a high-water mark kept in a store ahead of the time
// units (seconds, ticks) a generator issues IDs in.
//
// A generator may issue IDs in a unit only once the stored mark covers it,
// and a new generator for the same key starts after the stored mark, so no
// run reuses a unit an earlier run may have issued in, even if the clock
// was stepped back while no process ran. The mark is moved ahead by a
// lease of several units at a time, in the background once the current
// unit is in the second half of the lease, so that moving on rarely waits
// for the store.
//
// A store that is a store.Holder is held: Start takes the key, the lease
// writes its marks through the hold, fenced by it, and Close releases it
// once no write is in flight, so that a second run of the key at the same
// time fails at its start instead of issuing the same IDs, and one that
// got past the store's lock stops at the marks it wrote itself.
//
// One write at a time goes to the store: a caller that needs the lease
// extended while a write is in flight waits for that write instead of
// sending its own, and nobody holds a lock of the generator while the
// store works. Close waits for a background renewal and starts no more.
package lease

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/store"
)

// ErrClosed reports an extension asked of a closed lease.
var ErrClosed = errors.New("lease closed")

// Units translates between a generator's units and marks.
type Units struct {
	// Mark returns the mark that covers every unit below end.
	Mark func(end uint64) time.Time
	// End returns the units a stored mark covers: those below End(mark).
	// A new run starts at End(mark). It is 0 for the zero time.
	End func(mark time.Time) uint64
}

// Lease is one generator's lease. It is safe for concurrent use.
type Lease struct {
	store    store.HighWater
	key      string
	ahead    uint64
	units    Units
	limit    atomic.Uint64 // units below limit may be issued
	renewing atomic.Bool   // a background renewal is running
	writes   atomic.Uint64 // successful store writes
	failures atomic.Uint64 // failed store calls
	failed   func(error)   // told of a failed background renewal
	wg       sync.WaitGroup
	ctx      context.Context // of every store call; Close cancels it
	cancel   context.CancelFunc
	release  func()                // ends the hold of the key taken by Start, if any
	hold     store.Revocable       // the hold taken by Start, where it can tell it is lost
	lost     atomic.Pointer[error] // why the hold is lost, once it is

	mu       sync.Mutex // guards the fields below
	inflight *write     // the store write in flight, if any
	closed   bool
	renewErr error // why the last background renewal failed; nil once one succeeds
}

// write is one store write, which callers that need it wait for.
type write struct {
	done      chan struct{}
	err       error // set before done is closed
	abandoned bool  // it failed because its caller's ctx ended
}

// New returns a lease on key in store, moving the mark ahead units beyond
// the unit being issued. A nil store means no restart safety: every unit
// is allowed. failed, if not nil, is told of each failed background
// renewal.
func New(hw store.HighWater, key string, ahead uint64, units Units, failed func(error)) *Lease {
	l := &Lease{store: hw, key: key, ahead: ahead, units: units, failed: failed}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if hw == nil {
		l.limit.Store(math.MaxUint64)
	}
	return l
}

// Start holds the key if the store is a store.Holder, reads the stored
// mark and returns the first unit this run may issue in as far as earlier
// runs are concerned: 0 without a store or a mark. It is called once,
// before any other method; ctx bounds its wait for the store (and Close
// ends it). A key held elsewhere fails it with the Holder's error (see
// Refused). On a Holder, the lease reads and writes its marks through the
// hold from then on, so that its writes are fenced by it: once another
// holder takes the key, they fail with an error of kind idkit.ErrNodeLost.
func (l *Lease) Start(ctx context.Context) (uint64, error) {
	if l.store == nil {
		return 0, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(l.ctx, cancel)()
	marks, release, err := Hold(ctx, l.store, l.key)
	if err != nil {
		l.failures.Add(1)
		return 0, err
	}
	mark, err := marks.HighWater(ctx, l.key)
	if err != nil {
		release()
		l.failures.Add(1)
		return 0, err
	}
	l.store, l.release = marks, release
	if r, ok := marks.(store.Revocable); ok && r.Done() != nil {
		l.hold = r
		l.wg.Add(1)
		go l.watch(r)
	}
	return l.end(mark), nil
}

// watch revokes the lease once its hold is known lost, or ends when the
// lease closes.
func (l *Lease) watch(r store.Revocable) {
	defer l.wg.Done()
	select {
	case <-r.Done():
		l.revoke(r.Check(time.Time{}))
	case <-l.ctx.Done():
	}
}

// revoke takes every unit back from the lease: the hold is lost (err),
// and nothing more is issued under it.
func (l *Lease) revoke(err error) {
	if err == nil {
		err = fmt.Errorf("%w: the hold of %q is lost", idkit.ErrNodeLost, l.key)
	}
	l.lost.CompareAndSwap(nil, &err)
	l.limit.Store(0)
}

// Check returns nil unless the hold that Start took is lost. It asks the
// hold, where it can tell (store.Revocable; a launch log's reads its
// file's path), so that a generator that calls it before it enters each
// new unit of time enters none after the loss; once lost, the lease is
// revoked: Allows is false for every unit, and Extend fails.
func (l *Lease) Check() error {
	if l.hold == nil {
		return nil
	}
	if err := l.hold.Check(time.Time{}); err != nil {
		l.revoke(err)
		return *l.lost.Load()
	}
	return nil
}

// Err returns why the hold that Start took is lost, once that is known,
// without asking the hold: for the paths that run for every ID.
func (l *Lease) Err() error {
	if err := l.lost.Load(); err != nil {
		return *err
	}
	return nil
}

// Done is closed once the hold that Start took is known lost; it is nil
// without a hold that can tell.
func (l *Lease) Done() <-chan struct{} {
	if l.hold == nil {
		return nil
	}
	return l.hold.Done()
}

// Hold holds key in s, if s is a store.Holder, and returns the store to
// keep key's marks in (the hold, whose writes are fenced by it, or s
// itself) and release, which ends the hold (and does nothing without one).
func Hold(ctx context.Context, s store.HighWater, key string) (marks store.HighWater, release func(), err error) {
	h, ok := s.(store.Holder)
	if !ok {
		return s, func() {}, nil
	}
	held, err := h.Hold(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	return held, func() { _ = held.Close() }, nil
}

// NodeLost wraps err, the refusal of a generator's node claim, in lost,
// the generator's ErrNodeLost. A claim closed under a running generator is
// a lost node to the generator, not a closed generator: the claim's words
// are kept, its kind is not.
func NodeLost(lost, err error) error {
	if errors.Is(err, idkit.ErrClosed) {
		return fmt.Errorf("%w: %v", lost, err)
	}
	return fmt.Errorf("%w: %w", lost, err)
}

// StoreFailed wraps err, a failed store call (what says which), in
// errStore, unless the node's claim is lost: then in lost, as fence (the
// generator's claim check, nil without a claim) or the store's own error
// of kind idkit.ErrNodeLost says. A fenced store refuses a write once the
// claim is lost, so a lost claim is ErrNodeLost on the store calls' paths
// as on every other.
func StoreFailed(errStore, lost error, fence func() error, what string, err error) error {
	if fence != nil {
		if ferr := fence(); ferr != nil {
			return ferr
		}
	}
	if errors.Is(err, idkit.ErrNodeLost) {
		return NodeLost(lost, err)
	}
	return fmt.Errorf("%w: %s: %w", errStore, what, err)
}

// Refused reports whether err refuses a hold outright, another process
// holding the key (idkit.ErrHeld) or a store that cannot hold keys safely
// (idkit.ErrInvalid), rather than a store that failed for now.
func Refused(err error) bool {
	return errors.Is(err, idkit.ErrHeld) || errors.Is(err, idkit.ErrInvalid) || errors.Is(err, idkit.ErrRefused)
}

// Allows reports whether the mark covers unit u.
func (l *Lease) Allows(u uint64) bool { return u < l.limit.Load() }

// Extend moves the mark to cover unit u and the lease beyond it, and waits
// until the store has it. It fails if the store fails, or keeps a mark that
// does not cover u, and with ErrClosed after Close. It writes nothing if
// the lease covers u already; while a write is in flight it waits for that
// one, and writes again only if that one did not cover u.
//
// ctx bounds the caller's wait and its own write, which also ends when the
// lease closes. A caller whose ctx ends returns ctx's error; a write it
// shared with others then fails for them too, and they write again.
//
// The limit rises to the end asked for at most, even when the store keeps a
// later mark: a later mark was written by someone else (another run
// configured with the same key), and the units it covers are theirs.
func (l *Lease) Extend(ctx context.Context, u uint64) error { return l.extendUntil(ctx, u, u) }

// extendUntil is Extend(u) for a caller that needs unit need covered: u
// itself, or for a renewal the lease's last unit.
func (l *Lease) extendUntil(ctx context.Context, u, need uint64) error {
	for {
		if l.Allows(need) {
			return nil // a write since the caller looked covers it
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := l.Err(); err != nil {
			return err
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return ErrClosed
		}
		if w := l.inflight; w != nil {
			l.mu.Unlock()
			select {
			case <-w.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if l.Allows(need) {
				return nil
			}
			if w.err != nil && !w.abandoned {
				return w.err
			}
			continue
		}
		w := &write{done: make(chan struct{})}
		l.inflight = w
		l.mu.Unlock()

		w.err = l.extend(ctx, u)
		w.abandoned = w.err != nil && ctx.Err() != nil
		l.mu.Lock()
		l.inflight = nil
		l.mu.Unlock()
		close(w.done)
		return w.err
	}
}

// extend writes the mark covering u and the lease beyond it, under ctx and
// the lease's own context.
func (l *Lease) extend(ctx context.Context, u uint64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(l.ctx, cancel)()
	end := u + 1 + l.ahead
	mark, err := l.store.AdvanceHighWater(ctx, l.key, l.units.Mark(end))
	if err != nil {
		l.failures.Add(1)
		return err
	}
	l.writes.Add(1)
	l.raise(min(l.end(mark), end))
	if !l.Allows(u) {
		return &ShortError{Kept: mark, Want: l.units.Mark(end)}
	}
	return nil
}

// ExtendSoon starts a background Extend when unit u is in the second half
// of the lease, unless one is running or the lease is closed.
func (l *Lease) ExtendSoon(u uint64) {
	if l.store == nil || l.limit.Load()-u > (l.ahead+1)/2 {
		return
	}
	l.Renew(u)
}

// Renew starts a background Extend covering unit u and the lease beyond
// it, unless one is running or the lease is closed: for a caller that
// must not wait for the store.
func (l *Lease) Renew(u uint64) {
	if l.store == nil || !l.renewing.CompareAndSwap(false, true) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		l.renewing.Store(false)
		return
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer l.renewing.Store(false)
		err := l.extendUntil(context.Background(), u, u+l.ahead)
		if errors.Is(err, ErrClosed) {
			return
		}
		l.mu.Lock()
		l.renewErr = err
		l.mu.Unlock()
		if err != nil && l.failed != nil {
			l.failed(err)
		}
	}()
}

// RenewErr returns why the last background renewal failed, or nil if it
// succeeded: for a caller that does not wait for the store to say why it
// has nothing to issue.
func (l *Lease) RenewErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.renewErr
}

// Close starts no more store writes, cancels the context of the one in
// flight, if any, waits for it and for the background renewal, and then
// releases the key that Start held: once Close returns, this lease writes
// no mark. The units leased stay allowed; later extensions fail with
// ErrClosed.
func (l *Lease) Close() {
	l.mu.Lock()
	l.closed = true
	w := l.inflight
	l.mu.Unlock()
	l.cancel()
	l.wg.Wait()
	if w != nil {
		<-w.done
	}
	if l.release != nil {
		l.release()
	}
}

// Counts returns how many store writes succeeded and how many store calls
// failed.
func (l *Lease) Counts() (writes, failures uint64) { return l.writes.Load(), l.failures.Load() }

// Idle reports whether no background renewal is running.
func (l *Lease) Idle() bool { return !l.renewing.Load() }

// end is Units.End, with the zero time covering nothing.
func (l *Lease) end(mark time.Time) uint64 {
	if mark.IsZero() {
		return 0
	}
	return l.units.End(mark)
}

// raise moves the limit up to end, never down, unless the lease is
// revoked: revoke stores the loss before it takes the limit back, so a
// raise that lands after it finds the loss, and takes it back again.
func (l *Lease) raise(end uint64) {
	for {
		old := l.limit.Load()
		if end <= old {
			return
		}
		if l.limit.CompareAndSwap(old, end) {
			if l.lost.Load() != nil {
				l.limit.Store(0)
			}
			return
		}
	}
}

// ShortError reports a store that kept a mark short of the one asked for.
type ShortError struct{ Kept, Want time.Time }

func (e *ShortError) Error() string {
	return "the store kept " + e.Kept.UTC().String() + ", short of " + e.Want.UTC().String()
}
