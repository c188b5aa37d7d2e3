package clock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/stepclock"
)

// A ticking coarse view counts a wall clock stepped back against the
// monotonic clock, by the next refresh; time that merely passes is no step.
func TestCoarseCountsStepsBack(t *testing.T) {
	t.Parallel()
	var c stepclock.Clock
	coarse := clock.CoarseOf(&c)
	start := coarse.UnixNano()
	waitFor(t, func() bool { return coarse.UnixNano() > start }, "the coarse view never moved")
	assert.Zero(t, coarse.Steps(), "steps before any step")

	c.Step(-2 * time.Second)
	waitFor(t, func() bool { return coarse.Steps() == 1 }, "a step back of 2s was not counted")
	assert.Less(t, coarse.UnixNano(), start, "the coarse view shows the stepped time")

	c.Step(time.Second) // forward: not a step back
	now := coarse.UnixNano()
	waitFor(t, func() bool { return coarse.UnixNano() > now }, "the coarse view never moved")
	assert.Equal(t, uint64(1), coarse.Steps(), "a step forward counted as a step back")
}

// A Fake counts every move back, before its coarse view shows it.
func TestFakeCountsStepsBack(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	f := clock.NewFake(t0)
	coarse := f.Coarse()
	f.Advance(time.Second)
	assert.Zero(t, coarse.Steps())
	f.Advance(-500 * time.Millisecond)
	assert.Equal(t, uint64(1), coarse.Steps())
	f.Set(t0)
	assert.Equal(t, uint64(2), coarse.Steps())
}

// waitFor polls cond for up to 5 seconds of real time, as the ticking view
// refreshes on its own, and fails with msg if it never holds.
func waitFor(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		require.True(t, time.Now().Before(deadline), msg)
		time.Sleep(clock.Resolution)
	}
}
