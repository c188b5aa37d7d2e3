package traceid

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/claimtest"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

func TestClaimSuppliesNode(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 9, Deadline: t0.Add(time.Hour)}
	g, _ := start(t, Options{Claim: claim})
	assert.Equal(t, 9, g.Node())
	assert.Equal(t, 9, next(t, g).Node())

	_, err := New(context.Background(), Options{Node: 3, Claim: claim, Clock: clock.NewFake(t0)})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "Options.Node = 3 but Options.Claim holds node 9")

	_, err = New(context.Background(), Options{Claim: claim, Store: &memstore.Store{}, Clock: clock.NewFake(t0)})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "Options.Store and Options.Claim are both set")
}

func TestClaimLostAtNew(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 1, Deadline: t0}
	_, err := New(context.Background(), Options{Claim: claim, Clock: clock.NewFake(t0)})
	require.ErrorIs(t, err, ErrNodeLost)
	require.ErrorIs(t, err, claimtest.ErrLost)
}

// The claim is checked at each new second, not per ID; a second is entered
// only if the claim holds until it ends (plus clock.CoarseLag), so no ID is
// handed out after the deadline, and once lost nothing more is issued,
// whatever the clock does next.
func TestClaimLostStopsIssuing(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 1, Deadline: t0.Add(3500 * time.Millisecond)}
	g, fake := start(t, Options{Claim: claim})
	ids := take(t, g, 10_000)
	fill := make([]ID, 10_000)
	n, err := g.Fill(fill)
	require.NoError(t, err)
	require.Equal(t, len(fill), n)
	assert.LessOrEqual(t, claim.Checks(), int64(4), "checks in New and at the first second (before and after leasing it), not per ID")

	fake.Advance(time.Second) // t0+2s: second 2 ends at 3s, before the deadline
	ids = append(ids, next(t, g))
	requireIncreasing(t, ids)

	fake.Advance(time.Second) // t0+3s: second 3 would end after the deadline
	_, err = g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
	assert.True(t, fake.Now().Before(claim.Deadline), "lost before the deadline: the second would outlast it")
	_, err = g.Fill(fill)
	require.ErrorIs(t, err, ErrNodeLost)
	_, err = g.Shard().Next()
	require.ErrorIs(t, err, ErrNodeLost)

	fake.Advance(-2 * time.Second) // stepping the clock back revives nothing
	_, err = g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
}

// While the wall clock is behind, IDs continue under the last second; the
// claim is checked on that path too, so a claim lost meanwhile stops them.
func TestClaimCheckedWhileClockBehind(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 1, Deadline: t0.Add(time.Hour)}
	g, fake := start(t, Options{Claim: claim})
	next(t, g)
	fake.Advance(-10 * time.Second)
	next(t, g)
	claim.Revoke() // as etcd revoking the lease would
	_, err := g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
}

// The claim keeps the node's marks: a later generator on a claim of the
// same node, sharing the marks, starts after every second the first leased.
func TestClaimKeepsTheMarks(t *testing.T) {
	t.Parallel()
	first := &claimtest.Claim{Number: 4, Deadline: t0.Add(time.Hour)}
	g, fake := start(t, Options{Claim: first, Lease: 5 * time.Second})
	last := next(t, g)
	mark, err := first.Marks.HighWater(context.Background(), "traceid/node/4")
	require.NoError(t, err)
	assert.False(t, mark.Before(t0.Add(time.Second)), "the mark covers the second issued in")

	first.Revoke()
	second := &claimtest.Claim{Number: 4, Deadline: t0.Add(time.Hour)}
	mark, err = first.Marks.HighWater(context.Background(), "traceid/node/4")
	require.NoError(t, err)
	_, err = second.Marks.AdvanceHighWater(context.Background(), "traceid/node/4", mark)
	require.NoError(t, err)
	h, err := New(context.Background(), Options{Claim: second, Clock: fake})
	require.NoError(t, err)
	fake.Set(mark.Add(time.Second)) // past the old holder's lease
	id := next(t, h)
	assert.Greater(t, sec(id), sec(last), "the new holder starts after the old one's lease")
	assert.Greater(t, sec(id), mark.Unix(), "and after the mark")
}

// A generator checks its claim after every store call: a write that kept
// it waiting past the deadline hands out no ID, even though it succeeded.
func TestClaimCheckedAfterTheStoreWrite(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 2, Deadline: t0.Add(10 * time.Second)}
	fake := clock.NewFake(t0)
	g, err := New(context.Background(), Options{Claim: claim, Clock: fake})
	require.NoError(t, err)
	fake.Advance(time.Second)
	claim.During(func() { fake.Set(t0.Add(20 * time.Second)) }) // the write stalls past the deadline
	_, err = g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
	require.ErrorIs(t, err, claimtest.ErrLost)
	assert.Positive(t, claim.Marks.Calls(), "the write was made")
}

// A claim lost while its mark write waits fails the write, and the
// generator reports the lost claim, not a store failure.
func TestClaimLostDuringTheStoreWrite(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 2, Deadline: t0.Add(time.Hour)}
	g, fake := start(t, Options{Claim: claim})
	claim.During(claim.Revoke)
	_, err := g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
	assert.NotErrorIs(t, err, ErrStore)
	fake.Advance(time.Second)
	_, err = g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
}

// A claim lost while Reserve waits on a mark write is ErrNodeLost, as on
// every other path, not a store failure.
func TestClaimLostDuringReserve(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 2, Deadline: t0.Add(time.Hour)}
	// A position from an earlier call, so that Reserve needs no wait.
	_, err := claim.Marks.AdvanceHighWater(context.Background(), "traceid/node/2/last", t0.Add(-time.Minute))
	require.NoError(t, err)
	claim.During(claim.Revoke)
	err = Reserve(context.Background(), Options{Claim: claim, Clock: clock.NewFake(t0)}, make([]ID, 3))
	require.ErrorIs(t, err, ErrNodeLost)
	assert.NotErrorIs(t, err, ErrStore)
}

// Every time a generator asks its claim about carries a monotonic clock
// reading, so that the claim compares it with its deadline on the
// monotonic clock: a wall clock stepped back cannot make a time past the
// deadline look before it. The end of a second, which the generator asks
// about on entering it, is a wall time made into a reading of the clock.
func TestClaimAskedOnTheMonotonicClock(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []time.Time
	claim := &claimtest.Claim{Number: 4, Deadline: time.Now().Add(time.Hour), OnCheck: func(t time.Time) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, t)
	}}
	g, err := New(context.Background(), Options{Claim: claim})
	require.NoError(t, err)
	defer g.Close()
	for range 3 {
		_, err := g.Next()
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, asked, "the generator never asked its claim")
	for _, a := range asked {
		assert.Contains(t, a.String(), " m=", "the claim was asked about %v, a time with no monotonic reading", a)
	}
}

// lostClaim is a claimtest.Claim that also says when it is lost, as a
// fleet claim does with Done.
type lostClaim struct {
	*claimtest.Claim
	done chan struct{}
}

func (c lostClaim) Done() <-chan struct{} { return c.done }

// A claim found lost in the background (its Done closed) stops every fast
// path at once, within the second whose check passed: Next, a PerCore and
// a Shard report ErrNodeLost without the clock moving on.
func TestClaimLostStopsTheFastPaths(t *testing.T) {
	t.Parallel()
	claim := lostClaim{&claimtest.Claim{Number: 3, Deadline: t0.Add(time.Hour)}, make(chan struct{})}
	g, _ := start(t, Options{Claim: claim, ThreadBits: 4}) // 16 chunks a second: room for all three
	defer g.Close()
	p, s := g.PerCore(), g.Shard()
	// The shard first: it takes a whole chunk of the second.
	for _, next := range []func() (ID, error){s.Next, g.Next, p.Next} {
		_, err := next()
		require.NoError(t, err)
	}
	claim.Revoke()
	close(claim.done)
	for name, next := range map[string]func() (ID, error){"Next": g.Next, "PerCore": p.Next, "Shard": s.Next} {
		testwait.Until(t, func() bool {
			_, err := next()
			return errors.Is(err, ErrNodeLost)
		}, name+" reporting the lost claim")
	}
}
