package serve

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/store"
)

// Reclaim takes a new node claim for a scheme ("traceid" or "snowflake")
// whose claim was lost: a free node, or the same one once it is free. The
// new claim's generator starts above every ID the lost one could have
// issued, by the fleet's fencing; see package fleet.
type Reclaim func(ctx context.Context, scheme string) (store.Claim, error)

// claimed is a generator on one node claim.
type claimed[ID any] struct {
	g     idkit.Generator[ID]
	claim store.Claim
}

// reclaiming is a generator on a node claim which, once the claim is lost,
// claims a node again in the background and goes on with a new generator
// there, so that the server becomes ready again without a restart. Until
// then its calls fail with the lost claim's ErrNodeLost. It is the
// scheme's claimState too, following the claim in use. It counts each
// claim lost once, and each new claim put in place, so that a loss and
// the claim taken again right after it show in the metrics however
// short the time between them.
type reclaiming[ID any] struct {
	cur       atomic.Pointer[claimed[ID]]
	scheme    string
	reclaim   Reclaim
	build     func(context.Context, store.Claim) (idkit.Generator[ID], error)
	retry     time.Duration // between failed attempts
	logf      func(msg string, args ...any)
	lost      prometheus.Counter // claims lost
	reclaimed prometheus.Counter // claims taken again in their place

	mu      sync.Mutex
	running bool // an attempt is under way
	closed  bool
	ctx     context.Context // of the attempts; Close cancels it
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newReclaiming[ID any](scheme string, first claimed[ID], reclaim Reclaim, build func(context.Context, store.Claim) (idkit.Generator[ID], error), logf func(string, ...any), lost, reclaimed prometheus.Counter) *reclaiming[ID] {
	r := &reclaiming[ID]{scheme: scheme, reclaim: reclaim, build: build, retry: time.Second, logf: logf, lost: lost, reclaimed: reclaimed}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.cur.Store(&first)
	r.wg.Add(1)
	go r.watch(&first)
	return r
}

// watch starts claiming again once c's claim is lost, whether or not a
// request has met the loss yet.
func (r *reclaiming[ID]) watch(c *claimed[ID]) {
	defer r.wg.Done()
	select {
	case <-c.claim.Done():
		r.after(c, idkit.ErrNodeLost)
	case <-r.ctx.Done():
	}
}

func (r *reclaiming[ID]) Next() (ID, error) { return r.NextContext(context.Background()) }

func (r *reclaiming[ID]) NextContext(ctx context.Context) (ID, error) {
	c := r.cur.Load()
	id, err := c.g.NextContext(ctx)
	r.after(c, err)
	return id, err
}

func (r *reclaiming[ID]) Fill(dst []ID) (int, error) { return r.FillContext(context.Background(), dst) }

func (r *reclaiming[ID]) FillContext(ctx context.Context, dst []ID) (int, error) {
	c := r.cur.Load()
	n, err := c.g.FillContext(ctx, dst)
	r.after(c, err)
	return n, err
}

func (r *reclaiming[ID]) Stats() idkit.Stats { return r.cur.Load().g.Stats() }

func (r *reclaiming[ID]) Node() int               { return r.cur.Load().claim.Node() }
func (r *reclaiming[ID]) Check(t time.Time) error { return r.cur.Load().claim.Check(t) }

// Close stops an attempt under way and waits for it, then closes the
// generator and its claim.
func (r *reclaiming[ID]) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	c := r.cur.Load()
	return errors.Join(c.g.Close(), c.claim.Close())
}

// after starts claiming again when err, from c, says c's claim is lost,
// and c is still the claim in use: a call that began on a claim since
// replaced (and closed) reports that claim, not the one in use now.
func (r *reclaiming[ID]) after(c *claimed[ID], err error) {
	if err == nil || !errors.Is(err, idkit.ErrNodeLost) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running || r.closed || r.cur.Load() != c {
		return
	}
	r.running = true
	r.lost.Inc()
	r.wg.Add(1)
	go r.run(c)
}

// run claims a node and builds a generator on it, retrying until it
// succeeds or the server closes, then puts it in place of lost and, after
// that, closes lost. The new claim, its watch and the end of the attempt
// come under one lock, so that a loss of the new claim, however soon,
// starts a run of its own.
func (r *reclaiming[ID]) run(lost *claimed[ID]) {
	defer r.wg.Done()
	for r.ctx.Err() == nil {
		next, err := r.attempt()
		if err == nil {
			r.mu.Lock()
			r.cur.Store(next)
			r.reclaimed.Inc()
			r.running = false
			if !r.closed {
				r.wg.Add(1)
				go r.watch(next)
			}
			r.mu.Unlock()
			r.logf("serve: node claimed again", "scheme", r.scheme, "node", next.claim.Node(), "lost", lost.claim.Node())
			lost.g.Close()
			lost.claim.Close()
			return
		}
		r.logf("serve: claiming a node again failed; retrying", "scheme", r.scheme, "err", err)
		t := time.NewTimer(r.retry)
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
		}
	}
}

func (r *reclaiming[ID]) attempt() (*claimed[ID], error) {
	claim, err := r.reclaim(r.ctx, r.scheme)
	if err != nil {
		return nil, err
	}
	g, err := r.build(r.ctx, claim)
	if err != nil {
		claim.Close()
		return nil, err
	}
	return &claimed[ID]{g, claim}, nil
}
