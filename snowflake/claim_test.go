package snowflake

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/claimtest"
)

func TestClaimSplitsIntoNodeFields(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 2<<5 | 3, Deadline: t0.Add(time.Hour)}
	g, _ := start(t, Options{Layout: Twitter(), Claim: claim})
	assert.Equal(t, map[string]int64{"datacenter": 2, "worker": 3}, g.Node())
	assert.Equal(t, map[string]int64{"datacenter": 2, "worker": 3}, parts(t, g, next(t, g)).Node)

	_, err := New(context.Background(), Options{Layout: Twitter(), Claim: claim, Node: map[string]int64{"worker": 3}, Clock: clock.NewFake(t0)})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "Options.Node and Options.Claim are both set")

	_, err = New(context.Background(), Options{Layout: Twitter(), Claim: &claimtest.Claim{Number: 1024, Deadline: t0.Add(time.Hour)}, Clock: clock.NewFake(t0)})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "node number 1024, want 0 to 1023")
}

// A tick is entered only if the claim holds until it ends, plus
// clock.CoarseLag, so that no ID is handed out after the deadline.
func TestClaimLostStopsIssuing(t *testing.T) {
	t.Parallel()
	lag := clock.CoarseLag
	claim := &claimtest.Claim{Number: 5, Deadline: t0.Add(3*time.Millisecond + lag + time.Millisecond/2)}
	g, fake := start(t, Options{Layout: small(), Claim: claim})
	ids := take(t, g, 4) // one tick's worth
	fake.Advance(time.Millisecond)
	ids = append(ids, take(t, g, 4)...) // tick 2 ends at 3 ms, lag before the deadline
	requireIncreasing(t, ids)
	fake.Advance(time.Millisecond) // tick 3 would end too late
	_, err := g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
	assert.True(t, fake.Now().Before(claim.Deadline), "lost before the deadline: the tick would outlast it")
	fake.Advance(-time.Second)
	_, err = g.Next()
	require.ErrorIs(t, err, ErrNodeLost, "a lost claim stays lost")
}

// A generator checks its claim after every store call: a write that kept
// it waiting past the deadline hands out no ID, even though it succeeded.
func TestClaimCheckedAfterTheStoreWrite(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 5, Deadline: t0.Add(10 * time.Second)}
	fake := clock.NewFake(t0)
	g, err := New(context.Background(), Options{Layout: small(), Claim: claim, Clock: fake})
	require.NoError(t, err)
	fake.Advance(time.Millisecond)
	claim.During(func() { fake.Set(t0.Add(20 * time.Second)) }) // the write stalls past the deadline
	_, err = g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
	require.ErrorIs(t, err, claimtest.ErrLost)
	assert.Positive(t, claim.Marks.Calls(), "the write was made")
}

// The claim keeps the node's marks, and a claim lost while its mark write
// waits fails the write: the generator reports the lost claim.
func TestClaimKeepsTheMarks(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 5, Deadline: t0.Add(time.Hour)}
	g, fake := start(t, Options{Layout: small(), Claim: claim})
	next(t, g)
	mark, err := claim.Marks.HighWater(context.Background(), "snowflake/small/node=5")
	require.NoError(t, err)
	assert.True(t, mark.After(fake.Now()), "the mark covers the tick issued in")

	claim.During(claim.Revoke)
	fake.Set(mark.Add(time.Millisecond)) // a tick the lease does not cover
	_, err = g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
	assert.NotErrorIs(t, err, ErrStore)
}

// Under ClockContinue the generator may issue on its last tick for as long
// as the clock stays behind; with a claim every such ID checks it.
func TestClaimCheckedWhileClockBehind(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 5, Deadline: t0.Add(time.Hour)}
	l := small()
	l.SequenceBits = 12
	g, fake := start(t, Options{Layout: l, Claim: claim, ClockPolicy: ClockContinue})
	next(t, g)
	fake.Advance(-time.Minute)
	next(t, g)
	next(t, g)
	claim.Revoke()
	_, err := g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
}

func TestSplitNodeAndNodeRange(t *testing.T) {
	t.Parallel()
	l := Twitter()
	fields, err := l.SplitNode(2<<5 | 31)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"datacenter": 2, "worker": 31}, fields)
	_, err = l.SplitNode(-1)
	require.ErrorIs(t, err, ErrInvalid)

	lo, hi, err := l.NodeRange(map[string]int64{"datacenter": 2})
	require.NoError(t, err)
	assert.Equal(t, [2]int64{64, 95}, [2]int64{lo, hi})
	lo, hi, err = l.NodeRange(nil)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{0, 1023}, [2]int64{lo, hi})
	lo, hi, err = l.NodeRange(map[string]int64{"datacenter": 1, "worker": 7})
	require.NoError(t, err)
	assert.Equal(t, [2]int64{39, 39}, [2]int64{lo, hi})

	_, _, err = l.NodeRange(map[string]int64{"worker": 3})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), `fixed field "worker" follows a free field`)
	_, _, err = l.NodeRange(map[string]int64{"datacenter": 32})
	require.ErrorIs(t, err, ErrInvalid)
}

// A claim lost while Reserve waits on a mark write is ErrNodeLost, as on
// every other path, not a store failure.
func TestClaimLostDuringReserve(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 33, Deadline: t0.Add(time.Hour)}
	claim.During(claim.Revoke)
	err := Reserve(context.Background(), Options{Claim: claim, Clock: clock.NewFake(t0)}, make([]ID, 3))
	require.ErrorIs(t, err, ErrNodeLost)
	assert.NotErrorIs(t, err, ErrStore)
}

// Every time a generator asks its claim about carries a monotonic clock
// reading (see the TraceId test of the same name).
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
	checks := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(asked)
	}
	// The claim is asked at each new tick: issue until it was asked a few
	// times, within a bounded number of IDs.
	for i := 0; checks() < 5; i++ {
		require.Less(t, i, 10_000_000, "10 million IDs and the claim asked %d times", checks())
		_, err := g.Next()
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, a := range asked {
		assert.Contains(t, a.String(), " m=", "the claim was asked about %v, a time with no monotonic reading", a)
	}
}
