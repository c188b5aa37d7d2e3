package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
)

// The campaign's environment: how long it runs (a Go duration; 2m by
// default, 20s with -short) and the seed of its schedule (a new one by
// default; every run prints its own).
const (
	envCampaign     = "IDKIT_FLEET_CAMPAIGN"
	envCampaignSeed = "IDKIT_FLEET_SEED"
)

// Campaign settings: 16 holders, 8 per scheme, on 2 nodes per scheme.
const (
	campaignHolders = 16
	campaignNodes   = 2 // per scheme: 4 in all
	campaignTTL     = 3 * time.Second
	campaignPace    = 5 * time.Millisecond // between a holder's batches
)

// TestCampaign is a randomized fault campaign against fencing. Holders of
// both schemes claim nodes on a 3-member etcd cluster, each through its
// own link (a proxy per member), each claim with a clock of its own: an
// offset within ±MaxSkew and a rate within ±2%. A schedule drawn from the
// seed pauses links (their bytes arrive late), cuts and restores them,
// closes claims, and crashes and restarts members. Every ID is recorded
// with the time it was handed out; the campaign fails on an ID issued
// twice, an ID handed out after its claim's deadline, or one handed out
// after a later holder claimed the node.
//
// Replay a schedule with IDKIT_FLEET_SEED, run longer with
// IDKIT_FLEET_CAMPAIGN=30m (go test -run TestCampaign -timeout 40m).
func TestCampaign(t *testing.T) {
	duration := 2 * time.Minute
	if testing.Short() {
		duration = 20 * time.Second
	}
	if v := os.Getenv(envCampaign); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "%s=%q, want a duration such as 30m", envCampaign, v)
		duration = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(envCampaignSeed); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "%s=%q, want an unsigned integer", envCampaignSeed, v)
		seed = s
	}
	t.Logf("campaign of %v, seed %d (replay: %s=%d)", duration, seed, envCampaignSeed, seed)

	c := newCampaign(t, seed)
	c.run(duration)
	n := checkHoldings(t, c.holdings)
	t.Logf("campaign: %v, seed %d: %s; %d claims, %d IDs, 0 duplicates, 0 late IDs",
		duration, seed, c.events.String(), len(c.holdings), n)
	require.NotZero(t, n, "no ID issued")
}

// campaign is the state of one campaign.
type campaign struct {
	t       *testing.T
	rng     *rand.Rand // the schedule's, used by run only
	cluster *fleettest.Cluster
	prefix  string
	holders []*campaignHolder
	events  campaignEvents

	mu       sync.Mutex // guards holdings
	holdings []*holding
}

// campaignHolder is one holder: its link, and a channel on which the
// schedule asks it to close its claim.
type campaignHolder struct {
	name    string
	scheme  fencedScheme
	links   []*tcpproxy.Proxy
	client  *clientv3.Client
	closeCh chan struct{}
	rng     *rand.Rand  // the holder's own, for its clocks and its pauses
	holding atomic.Bool // it holds a claim now
}

// campaignEvents counts what happened.
type campaignEvents struct {
	mu                                         sync.Mutex
	pauses, cuts, closes, crashes              int
	refusedFull, refusedSkew, refusedOther     int
	lostClaims, storeErrors, otherGeneratorErr int
}

func (e *campaignEvents) add(f func(e *campaignEvents)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f(e)
}

func (e *campaignEvents) String() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return fmt.Sprintf("%d link pauses, %d cuts, %d claim closes, %d member crashes; claims refused: %d no free node, %d clock skew, %d other; claims ended by loss %d, by store errors %d, by other errors %d",
		e.pauses, e.cuts, e.closes, e.crashes, e.refusedFull, e.refusedSkew, e.refusedOther,
		e.lostClaims, e.storeErrors, e.otherGeneratorErr)
}

func newCampaign(t *testing.T, seed uint64) *campaign {
	c := &campaign{t: t, rng: rand.New(rand.NewPCG(seed, 1)), cluster: fleettest.Start(t, 3)}
	c.prefix = fleettest.Prefix(t, c.cluster.Client())
	for i := range campaignHolders {
		h := &campaignHolder{
			name:    fmt.Sprintf("h%02d", i),
			scheme:  fencedSchemes[i%len(fencedSchemes)],
			closeCh: make(chan struct{}, 1),
			rng:     rand.New(rand.NewPCG(seed, uint64(i)+2)),
		}
		var eps []string
		for m := range c.cluster.Endpoints() {
			p := tcpproxy.New(t, c.cluster.Endpoint(m))
			h.links = append(h.links, p)
			eps = append(eps, p.Endpoint())
		}
		h.client = fleettest.NewClient(t, eps...)
		c.holders = append(c.holders, h)
	}
	return c
}

// run runs the holders and the schedule for d, then heals every link and
// member and waits for the holders to stop.
func (c *campaign) run(d time.Duration) {
	t := c.t
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, h := range c.holders {
		wg.Go(func() { c.hold(ctx, h) })
	}

	var timers sync.WaitGroup
	later := func(after time.Duration, f func()) {
		timers.Add(1)
		time.AfterFunc(after, func() { defer timers.Done(); f() })
	}
	memberDown := false
	var downMu sync.Mutex
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(200+c.rng.IntN(1300)) * time.Millisecond)
		h := c.pick()
		length := time.Duration(200+c.rng.IntN(5800)) * time.Millisecond
		switch r := c.rng.IntN(100); {
		case r < 40:
			for _, l := range h.links {
				l.Pause()
			}
			c.events.add(func(e *campaignEvents) { e.pauses++ })
			later(length, func() {
				for _, l := range h.links {
					l.Resume()
				}
			})
		case r < 60:
			for _, l := range h.links {
				l.Cut()
			}
			c.events.add(func(e *campaignEvents) { e.cuts++ })
			later(length, func() {
				for _, l := range h.links {
					l.Restore()
				}
			})
		case r < 90:
			select {
			case h.closeCh <- struct{}{}:
				c.events.add(func(e *campaignEvents) { e.closes++ })
			default:
			}
		default:
			downMu.Lock()
			if !memberDown {
				memberDown = true
				m := c.rng.IntN(3)
				c.cluster.Crash(m)
				c.events.add(func(e *campaignEvents) { e.crashes++ })
				later(time.Duration(2000+c.rng.IntN(6000))*time.Millisecond, func() {
					c.cluster.Restart(m)
					downMu.Lock()
					memberDown = false
					downMu.Unlock()
				})
			}
			downMu.Unlock()
		}
	}
	stop()
	waitFor(t, &timers, time.Minute, "the schedule's restores")
	for _, h := range c.holders {
		for _, l := range h.links {
			l.Resume()
			l.Restore()
		}
	}
	waitFor(t, &wg, 2*time.Minute, "the holders to stop")
}

// pick returns the target of the next event: in three cases of four a
// holder that holds a claim now, if any does.
func (c *campaign) pick() *campaignHolder {
	if c.rng.IntN(4) > 0 {
		var active []*campaignHolder
		for _, h := range c.holders {
			if h.holding.Load() {
				active = append(active, h)
			}
		}
		if len(active) > 0 {
			return active[c.rng.IntN(len(active))]
		}
	}
	return c.holders[c.rng.IntN(len(c.holders))]
}

// hold claims a node for h again and again until ctx ends, issuing IDs on
// each claim until the claim is lost or the schedule closes it.
func (c *campaign) hold(ctx context.Context, h *campaignHolder) {
	o := fleet.ClaimOptions{
		Client: h.client, Prefix: c.prefix, Space: h.scheme.space, Min: 0, Max: campaignNodes - 1,
		TTL: campaignTTL, Holder: h.name, Timeout: 2 * time.Second,
	}
	for ctx.Err() == nil {
		// A clock of the claim's own: an offset within ±MaxSkew and a
		// rate within ±2%.
		offset := time.Duration(h.rng.Int64N(int64(2*fleet.DefaultMaxSkew))) - fleet.DefaultMaxSkew
		rate := 0.98 + 0.04*h.rng.Float64()
		clk := newDriftClock(offset, rate)
		o.Clock = clk
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		claim, err := fleet.ClaimNode(cctx, o)
		cancel()
		if err != nil {
			c.events.add(func(e *campaignEvents) {
				switch {
				case errors.Is(err, fleet.ErrNoFreeNode):
					e.refusedFull++
				case errors.Is(err, fleet.ErrClockSkew):
					e.refusedSkew++
				default:
					e.refusedOther++
				}
			})
			sleepCtx(ctx, time.Duration(20+h.rng.IntN(200))*time.Millisecond)
			continue
		}
		held := &holding{holder: h.name, scheme: &h.scheme, space: h.scheme.space, node: claim.Node(), claimed: time.Now()}
		h.holding.Store(true)
		if fill, err := h.scheme.start(claim, clk); err != nil {
			held.err = err
		} else {
			stop := make(chan struct{})
			go func() {
				select {
				case <-ctx.Done():
				case <-h.closeCh:
				}
				close(stop)
			}()
			issue(held, fill, clk, campaignPace, stop, nil)
		}
		held.deadline = claim.Deadline()
		h.holding.Store(false)
		claim.Close()
		c.events.add(func(e *campaignEvents) {
			switch {
			case held.err == nil:
			case errors.Is(held.err, fleet.ErrNodeLost):
				e.lostClaims++
			case errors.Is(held.err, fleet.ErrUnavailable):
				e.storeErrors++
			default:
				e.otherGeneratorErr++
				c.t.Logf("%s on node %d: %v", h.name, held.node, held.err)
			}
		})
		c.mu.Lock()
		c.holdings = append(c.holdings, held)
		c.mu.Unlock()
	}
}

// driftClock is a clock that reads offset from the system clock and runs
// at rate times its speed.
type driftClock struct {
	base   time.Time
	offset time.Duration
	rate   float64
}

func newDriftClock(offset time.Duration, rate float64) *driftClock {
	return &driftClock{base: time.Now(), offset: offset, rate: rate}
}

func (c *driftClock) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.base))*c.rate) + c.offset)
}

func (c *driftClock) Sleep(d time.Duration) { time.Sleep(time.Duration(float64(d) / c.rate)) }

var _ clock.Clock = (*driftClock)(nil)

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// waitFor waits for wg, failing the test after bound.
func waitFor(t *testing.T, wg *sync.WaitGroup, bound time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("still waiting for %s after %v", what, bound)
	}
}
