package engine

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sleepers returns a channel closed once n goroutines sleep on c.
func sleepers(c *clock.Fake, n int) <-chan struct{} {
	done := make(chan struct{})
	go func() { c.WaitForSleepers(n); close(done) }()
	return done
}

// TestThrottlePausesWhileBusy: a throttled load waits while the server
// is over a limit, reading it once a poll, says why once and how long it
// paused, and goes on at the limit; a stopped run ends the wait.
func TestThrottlePausesWhileBusy(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Unix(1_800_000_000, 0))
	var mu sync.Mutex
	state := Busy{Running: 5, Lag: 2 * time.Second}
	reads := 0
	var out strings.Builder
	th := &Throttle{maxLoad: 3, maxLag: time.Second, clock: fake, poll: time.Second, progress: &out, engine: "postgres",
		read: func(context.Context) (Busy, error) {
			mu.Lock()
			defer mu.Unlock()
			reads++
			return state, nil
		}}
	done := make(chan error, 1)
	go func() { done <- th.Wait(context.Background()) }()
	testwait.Recv(t, sleepers(fake, 1), "the throttle pauses")
	fake.Advance(time.Second)
	fake.WaitForWakes()
	testwait.Recv(t, sleepers(fake, 1), "still over: it pauses again")
	mu.Lock()
	state = Busy{Running: 3, Lag: time.Second} // at the limits, not over
	mu.Unlock()
	fake.Advance(time.Second)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the throttle did not go on within 30 s of the server's load falling")
	}
	assert.Equal(t, 3, reads)
	assert.Equal(t, 1, th.pauses)
	assert.Equal(t, 2*time.Second, th.paused)
	assert.Equal(t, "postgres: paused: 5 other sessions running a statement, above --max-load 3; a standby 2s behind, above --max-lag 1s\npostgres: going on after 2s\n", out.String())
	assert.Equal(t, "throttled by --max-load 3 and --max-lag 1s: the loads paused 1 times, for 2s in all", th.Note())

	// Within the limits it returns at once, without a word.
	out.Reset()
	require.NoError(t, th.Wait(context.Background()))
	assert.Empty(t, out.String())

	// A stopped run ends a pause.
	mu.Lock()
	state = Busy{Running: 9}
	mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- th.Wait(ctx) }()
	testwait.Recv(t, sleepers(fake, 1), "the throttle pauses")
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(30 * time.Second):
		t.Fatal("a stopped run's pause did not end within 30 s")
	}

	var nilThrottle *Throttle
	assert.NoError(t, nilThrottle.Wait(context.Background()), "no limit, no wait")
	assert.Empty(t, nilThrottle.Note())
}
