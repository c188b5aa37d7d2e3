package traceid

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/claimtest"
	"github.com/idkit/idkit/internal/testkit/stepclock"
)

// TestNoIDAfterTheDeadlineWhenTheWallClockStepsBack steps a holder's wall
// clock back by 1, 2 and 3 s in the middle of a second whose claim check
// foresaw its end, as settimeofday or an NTP step would, while its claim's
// deadline (on the monotonic clock) runs out: no call that starts after
// the deadline may return an ID. The holder either keeps asking through
// the step (busy), or asks nothing until its wall clock is back in the
// second it had entered (idle), which only a count of the clock's steps
// can reveal to it.
func TestNoIDAfterTheDeadlineWhenTheWallClockStepsBack(t *testing.T) {
	t.Parallel()
	for _, step := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		for _, idle := range []bool{false, true} {
			t.Run(fmt.Sprintf("step %v idle %v", step, idle), func(t *testing.T) {
				t.Parallel()
				steppedClockRun(t, step, idle, func(g *Generator) func() (ID, error) { return g.Next })
			})
		}
	}
	// The views' own fast paths: a processor's run and a shard's chunk.
	for _, view := range []struct {
		name string
		next func(g *Generator) func() (ID, error)
	}{
		{"PerCore", func(g *Generator) func() (ID, error) { return g.PerCore().Next }},
		{"Shard", func(g *Generator) func() (ID, error) { return g.Shard().Next }},
	} {
		t.Run(view.name, func(t *testing.T) {
			t.Parallel()
			steppedClockRun(t, time.Second, true, view.next)
		})
	}
}

func steppedClockRun(t *testing.T, step time.Duration, idle bool, view func(*Generator) func() (ID, error)) {
	sc := &stepclock.Clock{}
	// Begin just after a second starts, so that the generator enters the
	// next one, X+1, with a claim check that foresees its end.
	now := waitWall(t, sc, func(w time.Time) bool { return w.Nanosecond() < int(100*time.Millisecond) })
	x := now.Truncate(time.Second)
	// The deadline: 200 ms after what the check on entering X+1 needs (its
	// end plus clock.CoarseLag), as a reading of the monotonic clock.
	deadline := now.Add(x.Add(2*time.Second + clock.CoarseLag + 200*time.Millisecond).Sub(now))
	claim := &claimtest.Claim{Number: 1, Deadline: deadline}
	g, err := New(context.Background(), Options{Claim: claim, Clock: sc})
	require.NoError(t, err)
	defer g.Close()
	next := view(g)

	stepped, after, issued := false, 0, 0
	for {
		start := sc.Now()
		require.True(t, start.Before(deadline.Add(3*time.Second)), "still issuing 3 s after the deadline (%d IDs after it)", after)
		_, err := next()
		if err != nil {
			require.ErrorIs(t, err, ErrNodeLost)
			break
		}
		issued++
		if !start.Before(deadline) {
			after++
		}
		if !stepped && !sc.Now().Before(x.Add(1500*time.Millisecond)) {
			sc.Step(-step)
			stepped = true
			if idle {
				// Ask nothing until the wall clock is back in X+1.
				waitWall(t, sc, func(w time.Time) bool { return !w.Before(x.Add(time.Second + 20*time.Millisecond)) })
			}
		}
		time.Sleep(100 * time.Microsecond)
	}
	require.True(t, stepped, "the clock was never stepped")
	assert.Positive(t, issued)
	assert.Zero(t, after, "IDs returned by calls that began after the claim's deadline")
}

// waitWall polls the stepped clock's wall time until cond holds, for at
// most 10 s of real time.
func waitWall(t *testing.T, sc *stepclock.Clock, cond func(time.Time) bool) time.Time {
	t.Helper()
	limit := time.Now().Add(10 * time.Second)
	for {
		now := sc.Now()
		if cond(now) {
			return now
		}
		require.True(t, time.Now().Before(limit), "the clock never reached the wanted wall time (reads %v)", now)
		time.Sleep(time.Millisecond)
	}
}
