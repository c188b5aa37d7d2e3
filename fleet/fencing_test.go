package fleet_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// fencedScheme is a generator that takes a node claim, as the fencing
// tests drive it: IDs as int64, a batch at a time.
type fencedScheme struct {
	name  string
	space string
	// start returns a fill function of a new generator on claim c.
	start func(c *fleet.Claim, clk clock.Clock) (func(dst []int64) (int, error), error)
	// unit returns the time unit an ID was issued in (its second or tick).
	unit func(id int64) int64
	// unitEnd returns when that unit ends, on the clock of the generator
	// that issued the ID; ref is a time near it (a TraceId's second wraps).
	unitEnd func(id int64, ref time.Time) time.Time
	// lost is the scheme's ErrNodeLost.
	lost error
}

var fencedSchemes = []fencedScheme{
	{
		name: "traceid", space: "traceid",
		start: func(c *fleet.Claim, clk clock.Clock) (func([]int64) (int, error), error) {
			g, err := traceid.New(context.Background(), traceid.Options{Claim: c, Clock: clk})
			if err != nil {
				return nil, err
			}
			buf := make([]traceid.ID, batchSize)
			return func(dst []int64) (int, error) {
				n, err := g.Fill(buf[:len(dst)])
				for i := range n {
					dst[i] = int64(buf[i])
				}
				return n, err
			}, nil
		},
		unit: func(id int64) int64 { return int64(traceid.ID(id).Second()) },
		unitEnd: func(id int64, ref time.Time) time.Time {
			return traceid.ID(id).Time(ref.Add(time.Hour)).Add(time.Second)
		},
		lost: traceid.ErrNodeLost,
	},
	{
		name: "snowflake", space: "snowflake/twitter",
		start: func(c *fleet.Claim, clk clock.Clock) (func([]int64) (int, error), error) {
			g, err := snowflake.New(context.Background(), snowflake.Options{Layout: snowflake.Twitter(), Claim: c, Clock: clk})
			if err != nil {
				return nil, err
			}
			buf := make([]snowflake.ID, batchSize)
			return func(dst []int64) (int, error) {
				n, err := g.Fill(buf[:len(dst)])
				for i := range n {
					dst[i] = int64(buf[i])
				}
				return n, err
			}, nil
		},
		unit: func(id int64) int64 {
			p, _ := snowflake.Twitter().Decode(snowflake.ID(id))
			return p.Tick
		},
		unitEnd: func(id int64, _ time.Time) time.Time {
			p, _ := snowflake.Twitter().Decode(snowflake.ID(id))
			return p.Time.Add(snowflake.Twitter().Unit)
		},
		lost: snowflake.ErrNodeLost,
	},
}

// batchSize is the number of IDs a holder takes with one Fill.
const batchSize = 16

// batch is one Fill's IDs, ids[end-n:end] of its holding, with the times
// it returned: on the holder's clock, and on the test's.
type batch struct {
	end      int
	at, real time.Time
}

// holding is everything one holder issued on one claim.
type holding struct {
	holder   string
	scheme   *fencedScheme
	space    string
	node     int
	claimed  time.Time // on the test's clock, when ClaimNode returned
	ids      []int64
	batches  []batch
	err      error     // what stopped the generator
	deadline time.Time // the claim's deadline when it stopped
}

// issue takes batches of IDs from fill until it fails or stop is closed,
// pausing between batches, and records them in h; it closes first, if not
// nil, after the first batch. clk is the holder's clock.
func issue(h *holding, fill func([]int64) (int, error), clk clock.Clock, pause time.Duration, stop <-chan struct{}, first chan<- struct{}) {
	buf := make([]int64, batchSize)
	for {
		n, err := fill(buf)
		at, real := clk.Now(), time.Now()
		if n > 0 {
			h.ids = append(h.ids, buf[:n]...)
			h.batches = append(h.batches, batch{end: len(h.ids), at: at, real: real})
			if first != nil {
				close(first)
				first = nil
			}
		}
		if err != nil {
			h.err = err
			return
		}
		select {
		case <-stop:
			return
		case <-time.After(pause):
		}
	}
}

// returnSlack is how much later than its claim's deadline the test may read
// the clock after a batch of IDs was handed out: on a machine whose cores
// are all busy, the goroutine can wait that long between the generator's
// return and the reading. The generator's own promise is checked exactly:
// every ID is of a unit (second, tick) that ends, plus clock.CoarseLag, by
// the deadline.
const returnSlack = 500 * time.Millisecond

// checkHoldings fails the test on an ID issued twice, an ID of a unit that
// ends after its holder's claim deadline (less clock.CoarseLag), an ID
// read back more than returnSlack after that deadline, and an ID handed
// out after a later holder of the same node claimed it. It returns the
// number of IDs.
func checkHoldings(t *testing.T, hs []*holding) int {
	t.Helper()
	type owner struct {
		h *holding
		i int
	}
	var all []int64
	byID := make(map[int64]owner)
	for _, h := range hs {
		all = append(all, h.ids...)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			for _, h := range hs {
				if j := slices.Index(h.ids, all[i]); j >= 0 {
					byID[all[i]] = owner{h, j}
					t.Errorf("ID %d issued by %s on node %d (claimed at %v)", all[i], h.holder, h.node, h.claimed.Format(time.StampMilli))
				}
			}
			t.Fatalf("ID %d issued twice", all[i])
		}
	}
	for _, h := range hs {
		if h.deadline.IsZero() {
			continue // still held when the test ended
		}
		for _, b := range h.batches {
			last := h.ids[b.end-1] // the batch's IDs increase: its last unit is its latest
			if end := h.scheme.unitEnd(last, b.at); end.Add(clock.CoarseLag).After(h.deadline) {
				t.Fatalf("%s issued ID %d on node %d, of a unit that ends at %v, after its claim's deadline %v less the coarse clock's lag",
					h.holder, last, h.node, end.Format(time.StampMicro), h.deadline.Format(time.StampMicro))
			}
			if b.at.After(h.deadline.Add(returnSlack)) {
				t.Fatalf("%s issued IDs on node %d read back at %v, %v after its claim's deadline %v", h.holder, h.node,
					b.at.Format(time.StampMicro), b.at.Sub(h.deadline), h.deadline.Format(time.StampMicro))
			}
		}
		for _, later := range hs {
			if later.space != h.space || later.node != h.node || !later.claimed.After(h.claimed) || len(h.batches) == 0 {
				continue
			}
			if last := h.batches[len(h.batches)-1].real; last.After(later.claimed) {
				t.Fatalf("%s issued IDs on node %s/%d at %v, after %s claimed it at %v", h.holder, h.space, h.node,
					last.Format(time.StampMicro), later.holder, later.claimed.Format(time.StampMicro))
			}
		}
	}
	return len(all)
}

// The scenario that repeated IDs before marks were fenced: holder A's link
// holds its bytes (they arrive late, not refused) just after a keep-alive
// and just before a new second, so that A's next mark write waits in the
// link past A's deadline. etcd frees the node and B, whose clock reads
// 3.5s behind A's (inside the default MaxSkew), claims it, reads the mark
// and issues in the very unit A is waiting to enter. Then A's link
// delivers, inside A's store timeout: A's write reaches etcd after B's.
// A must fail with ErrNodeLost, issuing nothing after its deadline, and no
// ID may be issued twice.
func TestStalledHolderHandsOver(t *testing.T) {
	t.Parallel()
	for _, s := range fencedSchemes {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			stalledHolder(t, s)
		})
	}
}

func stalledHolder(t *testing.T, s fencedScheme) {
	cluster := fleettest.Start(t, 3)
	direct := cluster.Client()
	prefix := fleettest.Prefix(t, direct)
	var proxies []*tcpproxy.Proxy
	var viaProxies []string
	for i := range cluster.Endpoints() {
		p := tcpproxy.New(t, cluster.Endpoint(i))
		proxies = append(proxies, p)
		viaProxies = append(viaProxies, p.Endpoint())
	}
	o := fleet.ClaimOptions{Prefix: prefix, Space: s.space, TTL: 3 * time.Second} // the default Timeout, 5s
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	aClock := clock.System()
	ao := o
	ao.Client, ao.Clock = fleettest.NewClient(t, viaProxies...), aClock
	a, err := fleet.ClaimNode(ctx, ao)
	require.NoError(t, err)
	t.Cleanup(func() { a.Close() })
	aFill, err := s.start(a, aClock)
	require.NoError(t, err)
	aHeld := &holding{holder: "A", scheme: &s, space: s.space, node: a.Node(), claimed: time.Now()}
	aDone := make(chan struct{})
	go func() {
		defer close(aDone)
		issue(aHeld, aFill, aClock, time.Millisecond, ctx.Done(), nil)
		aHeld.deadline = a.Deadline()
	}()

	// Just after a keep-alive is acknowledged, 30 ms before a new second.
	// A loaded machine may overshoot the moment; then the links resume and
	// the next keep-alive gives another try.
	var paused time.Time
	for try := 1; ; try++ {
		renewedFrom := a.Deadline()
		testwait.Until(t, func() bool { return !a.Deadline().Equal(renewedFrom) }, "a keep-alive acknowledged")
		now := time.Now()
		boundary := now.Truncate(time.Second).Add(time.Second)
		if boundary.Sub(now) < 30*time.Millisecond {
			boundary = boundary.Add(time.Second)
		}
		time.Sleep(time.Until(boundary.Add(-30 * time.Millisecond)))
		for _, p := range proxies {
			p.Pause()
		}
		if paused = time.Now(); paused.Before(boundary) {
			break
		}
		for _, p := range proxies {
			p.Resume()
		}
		require.Less(t, try, 10, "no pause landed before a second boundary in 10 tries")
	}
	deadline := a.Deadline()
	t.Logf("A's link paused at %v; A's deadline %v", paused.Format(time.StampMilli), deadline.Format(time.StampMilli))

	// B, 3.5s behind, claims the node once etcd frees it.
	bClock := clock.Offset(clock.System(), -3500*time.Millisecond)
	bo := o
	bo.Client, bo.Clock, bo.Min, bo.Max = direct, bClock, a.Node(), a.Node()
	bo.TTL = fleet.DefaultTTL // B is not the one stalled: room for late renewals on a loaded machine
	var b *fleet.Claim
	for b == nil {
		c, err := fleet.ClaimNode(ctx, bo)
		if errors.Is(err, fleet.ErrNoFreeNode) {
			require.NoError(t, ctx.Err(), "node %d never freed", a.Node())
			time.Sleep(20 * time.Millisecond)
			continue
		}
		require.NoError(t, err)
		b = c
	}
	t.Cleanup(func() { b.Close() })
	bHeld := &holding{holder: "B", scheme: &s, space: s.space, node: b.Node(), claimed: time.Now()}
	require.True(t, deadline.Before(bHeld.claimed), "A's deadline %v passed before B claimed the node at %v", deadline, bHeld.claimed)
	bFill, err := s.start(b, bClock)
	require.NoError(t, err)
	bStop, bIssued, bDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(bDone)
		issue(bHeld, bFill, bClock, time.Millisecond, bStop, bIssued)
	}()

	// Once B has issued, A's link delivers what it held.
	select {
	case <-bIssued:
	case <-bDone:
		t.Fatalf("B failed before its first ID: %v", bHeld.err)
	case <-ctx.Done():
		t.Fatal("B issued nothing in 2 minutes")
	}
	for _, p := range proxies {
		p.Resume()
	}
	t.Logf("A's link delivered at %v, %v after the pause", time.Now().Format(time.StampMilli), time.Since(paused).Round(time.Millisecond))
	select {
	case <-aDone:
	case <-ctx.Done():
		t.Fatal("A still issues 2 minutes after its node was taken over")
	}
	require.ErrorIs(t, aHeld.err, s.lost)
	require.ErrorIs(t, aHeld.err, fleet.ErrNodeLost)
	close(bStop)
	testwait.Recv(t, bDone, "B's stop")
	require.NoError(t, bHeld.err)

	n := checkHoldings(t, []*holding{aHeld, bHeld})
	aLast := s.unit(aHeld.ids[len(aHeld.ids)-1])
	bFirst := s.unit(bHeld.ids[0])
	t.Logf("%d IDs; A's last %s %d, B's first %d; A stopped with: %v", n, s.name, aLast, bFirst, aHeld.err)
	assert.Greater(t, bFirst, aLast, "B starts above every unit A issued in")
}
