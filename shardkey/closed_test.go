package shardkey_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/shardkey"
	"github.com/idkit/idkit/snowflake"
)

// generators returns a generator of each form, closed at the end of the
// test. The Sharded ones stand on a fake clock with 4096 IDs in the
// current tick, which the tests do not use up: a call past them would
// wait for the clock.
func generators(t *testing.T) map[string]idkit.Generator[shardkey.ID] {
	t.Helper()
	bits, _ := newSharded(t, false, shardkey.ShardBitsOptions{})
	narrow := snowflake.Layout{Name: "narrow", Epoch: snowflake.JSSafe().Epoch, Unit: time.Millisecond, TimeBits: 41, Fields: []snowflake.Field{{Name: "worker", Bits: 5}}, SequenceBits: 12}
	hashed, _ := newSharded(t, true, shardkey.ShardBitsOptions{Bits: 5, Snowflake: snowflake.Options{Layout: narrow}})
	return map[string]idkit.Generator[shardkey.ID]{
		"reversed":     newReversed(t, 1_000_000), // no reservation during the runs
		"shardbits":    bits,
		"hashprefixed": hashed,
	}
}

// After Close every call fails at once with an error of kind
// idkit.ErrClosed and issues nothing; Stats still works, and a second
// Close does nothing.
func TestClosed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, g := range generators(t) {
		_, err := g.Next()
		require.NoError(t, err, name)
		require.NoError(t, g.Close(), name)
		require.NoError(t, g.Close(), "%s: a second Close", name)

		id, err := g.Next()
		assert.ErrorIs(t, err, idkit.ErrClosed, "%s: Next", name)
		assert.Zero(t, id, "%s: Next", name)
		id, err = g.NextContext(ctx)
		assert.ErrorIs(t, err, idkit.ErrClosed, "%s: NextContext", name)
		assert.Zero(t, id, "%s: NextContext", name)
		dst := make([]shardkey.ID, 8)
		n, err := g.Fill(dst)
		assert.ErrorIs(t, err, idkit.ErrClosed, "%s: Fill", name)
		assert.Zero(t, n, "%s: Fill", name)
		n, err = g.FillContext(ctx, dst)
		assert.ErrorIs(t, err, idkit.ErrClosed, "%s: FillContext", name)
		assert.Zero(t, n, "%s: FillContext", name)
		assert.Equal(t, make([]shardkey.ID, 8), dst, "%s: nothing written after Close", name)
		_ = g.Stats()
	}
}

// Next and Fill of every form allocate nothing once under way. The calls
// take 1,740 IDs in all, within the tick.
func TestNoAllocationPerID(t *testing.T) {
	for name, g := range generators(t) {
		dst := make([]shardkey.ID, 64)
		for range 3 {
			_, err := g.Next()
			require.NoError(t, err, name)
			_, err = g.Fill(dst)
			require.NoError(t, err, name)
		}
		next := testing.AllocsPerRun(200, func() {
			if _, err := g.Next(); err != nil {
				panic(err)
			}
		})
		fill := testing.AllocsPerRun(20, func() {
			if _, err := g.Fill(dst); err != nil {
				panic(err)
			}
		})
		assert.Zero(t, next, "%s: allocations per Next", name)
		assert.Zero(t, fill, "%s: allocations per Fill of %d", name, len(dst))
	}
}
