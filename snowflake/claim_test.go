package snowflake

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/claimtest"
)

func TestClaimSplitsIntoNodeFields(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 2<<5 | 3, Deadline: t0.Add(time.Hour)}
	g, _ := start(t, Options{Layout: Twitter(), Claim: claim})
	assert.Equal(t, map[string]int64{"datacenter": 2, "worker": 3}, g.Node())
	assert.Equal(t, map[string]int64{"datacenter": 2, "worker": 3}, parts(t, g, next(t, g)).Node)

	_, err := New(Options{Layout: Twitter(), Claim: claim, Node: map[string]int64{"worker": 3}, Clock: clock.NewFake(t0)})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "Options.Node and Options.Claim are both set")

	_, err = New(Options{Layout: Twitter(), Claim: &claimtest.Claim{Number: 1024, Deadline: t0.Add(time.Hour)}, Clock: clock.NewFake(t0)})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "node number 1024, want 0 to 1023")
}

func TestClaimLostStopsIssuing(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 5, Deadline: t0.Add(3 * time.Millisecond)}
	g, fake := start(t, Options{Layout: small(), Claim: claim})
	ids := take(t, g, 4) // one tick's worth
	fake.Advance(time.Millisecond)
	ids = append(ids, take(t, g, 4)...)
	requireIncreasing(t, ids)
	fake.Advance(time.Millisecond) // past the deadline
	_, err := g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
	fake.Advance(-time.Second)
	_, err = g.Next()
	require.ErrorIs(t, err, ErrNodeLost, "a lost claim stays lost")
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
