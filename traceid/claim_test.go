package traceid

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/claimtest"
)

func TestClaimSuppliesNode(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 9, Deadline: t0.Add(time.Hour)}
	g, _ := start(t, Options{Claim: claim})
	assert.Equal(t, 9, g.Node())
	assert.Equal(t, 9, next(t, g).Node())

	_, err := New(Options{Node: 3, Claim: claim, Clock: clock.NewFake(t0)})
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "Options.Node = 3 but Options.Claim holds node 9")
}

func TestClaimLostAtNew(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 1, Deadline: t0}
	_, err := New(Options{Claim: claim, Clock: clock.NewFake(t0)})
	require.ErrorIs(t, err, ErrNodeLost)
	require.ErrorIs(t, err, claimtest.ErrLost)
}

// The claim is checked at each new second, not per ID, and once its
// deadline passes no ID is issued, whatever the clock does next.
func TestClaimLostStopsIssuing(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 1, Deadline: t0.Add(2500 * time.Millisecond)}
	g, fake := start(t, Options{Claim: claim})
	ids := take(t, g, 10_000)
	fill := make([]ID, 10_000)
	n, err := g.Fill(fill)
	require.NoError(t, err)
	require.Equal(t, len(fill), n)
	assert.LessOrEqual(t, claim.Checks(), int64(3), "checks in New and at the new second only")

	fake.Advance(time.Second) // t0+2s: a new second before the deadline
	ids = append(ids, next(t, g))
	requireIncreasing(t, ids)

	fake.Advance(time.Second) // t0+3s: past the deadline
	_, err = g.Next()
	require.ErrorIs(t, err, ErrNodeLost)
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
