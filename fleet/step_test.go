package fleet_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/stepclock"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// issuer starts a generator of one scheme on a claim, with the given
// clock, and returns its Next as uint64s.
type issuer func(c *fleet.Claim, clk clock.Clock) (func() (uint64, error), error)

var steppedSchemes = map[string]issuer{
	"traceid": func(c *fleet.Claim, clk clock.Clock) (func() (uint64, error), error) {
		g, err := traceid.New(context.Background(), traceid.Options{Claim: c, Clock: clk, Lease: 10 * time.Second})
		if err != nil {
			return nil, err
		}
		return func() (uint64, error) { id, err := g.Next(); return uint64(id), err }, nil
	},
	"snowflake": func(c *fleet.Claim, clk clock.Clock) (func() (uint64, error), error) {
		g, err := snowflake.New(context.Background(), snowflake.Options{Claim: c, Clock: clk, Lease: 10 * time.Second})
		if err != nil {
			return nil, err
		}
		return func() (uint64, error) { id, err := g.Next(); return uint64(id), err }, nil
	},
}

// TestSteppedHolderCutOff cuts a holder off from etcd right after a
// renewal etcd acknowledged, and steps its wall clock back by 1, 2 and
// 3 s, as an NTP step or settimeofday would, while its claim runs out
// on the monotonic clock. A successor takes the node once it is free. The
// holder must return no ID from a call that began after its claim's
// deadline or after the successor took the node, and the two must share
// no ID.
func TestSteppedHolderCutOff(t *testing.T) {
	t.Parallel()
	for name, start := range steppedSchemes {
		for _, step := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
			t.Run(fmt.Sprintf("%s step %v", name, step), func(t *testing.T) {
				t.Parallel()
				steppedHolderCutOff(t, name, start, step)
			})
		}
	}
}

type issued struct {
	id    uint64
	start time.Time // when the call began, with a monotonic reading
}

func steppedHolderCutOff(t *testing.T, space string, start issuer, step time.Duration) {
	cluster := fleettest.Start(t, 1)
	direct := cluster.Client()
	prefix := fleettest.Prefix(t, direct)
	proxy := tcpproxy.New(t, cluster.Endpoint(0))
	viaProxy := fleettest.NewClient(t, proxy.Endpoint())
	o := fleet.ClaimOptions{Prefix: prefix, Space: space, Max: 0, TTL: 3 * time.Second, Timeout: 2 * time.Second}

	sc := &stepclock.Clock{}
	first := o
	first.Client, first.Clock = viaProxy, sc
	a := claim(t, first)
	next, err := start(a, sc)
	require.NoError(t, err)

	// The holder issues until its generator reports the node lost. It
	// asks again after any other refusal, as a service would: Snowflake
	// refuses while its clock is behind beyond its tolerance.
	var out []issued
	done := make(chan error, 1)
	firstID := make(chan struct{})
	go func() {
		for {
			began := sc.Now()
			id, err := next()
			if errors.Is(err, idkit.ErrNodeLost) {
				done <- err
				return
			}
			if err != nil {
				time.Sleep(time.Millisecond)
				continue
			}
			out = append(out, issued{id, began})
			if len(out) == 1 {
				close(firstID)
			}
			time.Sleep(200 * time.Microsecond)
		}
	}()
	select {
	case <-firstID:
	case err := <-done:
		t.Fatalf("the holder lost its node before its first ID: %v", err)
	case <-time.After(testwait.Bound):
		t.Fatalf("the holder issued no ID within %v", testwait.Bound)
	}
	// Right after a renewal etcd acknowledged: the deadline moves.
	renewed := a.Deadline()
	testwait.Until(t, func() bool { return a.Deadline().After(renewed) }, "a renewal of the holder's claim")
	proxy.Cut()
	sc.Step(-step)

	// The node frees itself a TTL after the cut; a minute is ample.
	second := o
	second.Client = direct
	second.TTL = fleet.DefaultTTL
	b := claimOnceFree(t, second)
	takenAt := time.Now()
	select {
	case err := <-done:
		require.ErrorIs(t, err, idkit.ErrNodeLost)
	case <-time.After(time.Minute):
		t.Fatal("the cut-off holder still issues IDs a minute after its node was taken over")
	}
	deadline := a.Deadline()
	require.Contains(t, deadline.String(), " m=", "the claim's deadline carries a monotonic reading")

	after, afterTaken := 0, 0
	seen := make(map[uint64]bool, len(out))
	for _, x := range out {
		seen[x.id] = true
		if !x.start.Before(deadline) {
			after++
		}
		if !x.start.Before(takenAt) {
			afterTaken++
		}
	}
	assert.Zero(t, after, "IDs from calls that began after the claim's deadline, of %d", len(out))
	assert.Zero(t, afterTaken, "IDs from calls that began after the successor took the node, of %d", len(out))

	nextB, err := start(b, clock.System())
	require.NoError(t, err)
	for range 1000 {
		id, err := nextB()
		require.NoError(t, err)
		require.False(t, seen[id], "ID %d issued by both holders", id)
	}
}
