package launchlog

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	idstore "github.com/idkit/idkit/store"
)

// TestAdvanceCounters restores a log from a backup: AdvanceCounters
// refuses the log, which knows it was written back, and Adopt moves it
// past what was handed out since: launches, generator ids, blocks and
// marks continue after those values, Reserve positions stay below the
// marks. AdvanceCounters then moves nothing back, and a held key stops it.
func TestAdvanceCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idkit.db")
	l, err := New(Options{Path: path, Clock: clock.NewFake(time.Unix(150, 0))})
	require.NoError(t, err)
	_, err = l.Begin(ctx, idstore.Info{})
	require.NoError(t, err)
	_, err = l.NextGenerator(ctx, 1)
	require.NoError(t, err)
	_, err = l.ReserveBlock(ctx, "orders", 10)
	require.NoError(t, err)
	_, err = l.AdvanceHighWater(ctx, "traceid/node/3", time.Unix(100, 0))
	require.NoError(t, err)
	_, err = l.AdvanceHighWater(ctx, "traceid/node/3/last", time.Unix(90, 5))
	require.NoError(t, err)
	backup, err := os.ReadFile(path)
	require.NoError(t, err)

	// Since the backup: launch 2, generator 1 of launch 1, IDs 11 to 20.
	_, err = l.Begin(ctx, idstore.Info{})
	require.NoError(t, err)
	_, err = l.NextGenerator(ctx, 1)
	require.NoError(t, err)
	_, err = l.ReserveBlock(ctx, "orders", 10)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, backup, 0o600))

	c := Counters{Launch: 2, Generators: map[int]int{1: 1, 7: 4}, Blocks: map[string]int64{"orders": 20}, Marks: time.Unix(200, 0)}
	_, err = l.AdvanceCounters(ctx, c)
	assert.ErrorIs(t, err, ErrDisplaced, "a log written back in place is adopted, not advanced")
	a, err := l.Adopt(ctx, AdoptOptions{Counters: c})
	require.NoError(t, err)
	assert.Equal(t, Counters{Launch: 2, Generators: map[int]int{1: 1, 7: 4}, Blocks: map[string]int64{"orders": 20}, Marks: time.Unix(200, 0).UTC()}, a.Advanced)
	assert.Empty(t, a.Ended, "every launch with generator ids was named")
	moved, err := l.AdvanceCounters(ctx, c)
	require.NoError(t, err)
	assert.Zero(t, moved, "a second run moves nothing")
	moved, err = l.AdvanceCounters(ctx, Counters{Launch: 1, Blocks: map[string]int64{"orders": 5}})
	require.NoError(t, err)
	assert.Zero(t, moved, "nothing moves back")

	launch, err := l.Begin(ctx, idstore.Info{})
	require.NoError(t, err)
	assert.Equal(t, 3, launch.ID)
	for launch, want := range map[int]int{1: 2, 7: 5, 8: 0} {
		g, err := l.NextGenerator(ctx, launch)
		require.NoError(t, err)
		assert.Equal(t, want, g, "launch %d", launch)
	}
	b, err := l.ReserveBlock(ctx, "orders", 10)
	require.NoError(t, err)
	assert.Equal(t, int64(21), b.First)
	mark, err := l.HighWater(ctx, "traceid/node/3")
	require.NoError(t, err)
	assert.Equal(t, time.Unix(200, 0).UTC(), mark)
	last, err := l.HighWater(ctx, "traceid/node/3/last")
	require.NoError(t, err)
	assert.Equal(t, time.Unix(90, 5).UTC(), last, "a Reserve position stays below the mark")

	h, err := l.Hold(ctx, "traceid/node/3")
	require.NoError(t, err)
	_, err = l.AdvanceCounters(ctx, Counters{Launch: 10})
	var held *HeldError
	require.ErrorAs(t, err, &held, "a held key")
	assert.Equal(t, "traceid/node/3", held.Key)
	assert.Equal(t, os.Getpid(), held.Holder.PID)
	require.NoError(t, h.Close())
	_, err = l.AdvanceCounters(ctx, Counters{Launch: 10})
	require.NoError(t, err, "once the key is released")

	for name, bad := range map[string]Counters{
		"a launch past the last":       {Launch: MaxLaunch + 1},
		"a generator id past the last": {Generators: map[int]int{1: MaxGenerator + 1}},
		"a launch of a generator":      {Generators: map[int]int{-1: 1}},
		"a block ID below 1":           {Blocks: map[string]int64{"orders": 0}},
		"an empty tag":                 {Blocks: map[string]int64{"": 5}},
		"a time out of range":          {Marks: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		_, err := l.AdvanceCounters(ctx, bad)
		assert.ErrorIs(t, err, ErrInvalid, name)
	}

	// A log lost whole: a new file, moved past the old one's counters.
	fresh, err := New(Options{Path: filepath.Join(t.TempDir(), "new.db")})
	require.NoError(t, err)
	_, err = fresh.AdvanceCounters(ctx, Counters{Launch: 41})
	require.NoError(t, err)
	launch, err = fresh.Begin(ctx, idstore.Info{})
	require.NoError(t, err)
	assert.Equal(t, 42, launch.ID)
}
