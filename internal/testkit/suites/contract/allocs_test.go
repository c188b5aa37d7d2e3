package contract_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/shardkey"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// TestNoAllocationPerID: Next and Fill of every generator allocate
// nothing, once a generator is under way (its first IDs may take a slow
// path that does: a new second, a lease, a block). On the system clock a
// run may cross into a new second, whose slow path counts less than one
// allocation in a thousand calls, which AllocsPerRun's integer average
// does not show.
func TestNoAllocationPerID(t *testing.T) {
	ctx := context.Background()
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(t.TempDir(), "idkit.db")})
	require.NoError(t, err)

	tg, err := traceid.New(ctx, traceid.Options{Node: 1})
	require.NoError(t, err)
	noAllocs(t, "traceid", tg)
	sg, err := snowflake.New(ctx, snowflake.Options{Layout: snowflake.Layout{Name: "wide", Epoch: snowflake.Twitter().Epoch, Unit: 1e6, TimeBits: 41, SequenceBits: 22}})
	require.NoError(t, err)
	noAllocs(t, "snowflake", sg)
	dg, err := decimalid.New(ctx, decimalid.Options{Launch: 1, Source: log})
	require.NoError(t, err)
	noAllocs(t, "decimalid", dg)
	og, err := objectid.New(objectid.Options{})
	require.NoError(t, err)
	noAllocs(t, "objectid", og)
	fg, err := flake128.New(ctx, flake128.Options{Worker: 1})
	require.NoError(t, err)
	noAllocs(t, "flake128", fg)
	segs, err := segment.New(ctx, segment.Options{Store: log, Tag: "allocs", Step: 10_000_000}) // no reservation during the runs
	require.NoError(t, err)
	noAllocs(t, "segment", segs)
	rev, err := shardkey.NewReversed(ctx, shardkey.ReversedOptions{Options: segment.Options{Store: log, Tag: "allocs-reversed", Step: 10_000_000}})
	require.NoError(t, err)
	noAllocs(t, "shardkey reversed", rev)
	wide := snowflake.Layout{Name: "wide", Epoch: snowflake.Twitter().Epoch, Unit: 1e6, TimeBits: 41, SequenceBits: 17} // 58 bits under 5 shard bits
	sb, err := shardkey.NewShardBits(ctx, shardkey.ShardBitsOptions{Snowflake: snowflake.Options{Layout: wide}})
	require.NoError(t, err)
	noAllocs(t, "shardkey shard bits", sb)
	hp, err := shardkey.NewHashPrefixed(ctx, shardkey.ShardBitsOptions{Snowflake: snowflake.Options{Layout: wide}})
	require.NoError(t, err)
	noAllocs(t, "shardkey hash-prefixed", hp)
}

// noAllocs closes g once it has checked that its Next and Fill allocate
// nothing per call.
func noAllocs[ID any](t *testing.T, name string, g idkit.Generator[ID]) {
	t.Helper()
	defer g.Close()
	dst := make([]ID, 64)
	for range 3 { // under way: past the first IDs' slow paths
		_, err := g.Next()
		require.NoError(t, err, name)
		_, err = g.Fill(dst)
		require.NoError(t, err, name)
	}
	next := testing.AllocsPerRun(1000, func() {
		if _, err := g.Next(); err != nil {
			panic(err) // testify would allocate here
		}
	})
	fill := testing.AllocsPerRun(1000, func() {
		if _, err := g.Fill(dst); err != nil {
			panic(err)
		}
	})
	assert.Zero(t, next, "%s: allocations per Next", name)
	assert.Zero(t, fill, "%s: allocations per Fill of %d", name, len(dst))
}
