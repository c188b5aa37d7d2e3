package idkit_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/shardkey"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// Every generator has the one shape.
var (
	_ idkit.Generator[traceid.ID]   = (*traceid.Generator)(nil)
	_ idkit.Generator[snowflake.ID] = (*snowflake.Generator)(nil)
	_ idkit.Generator[decimalid.ID] = (*decimalid.Generator)(nil)
	_ idkit.Generator[objectid.ID]  = (*objectid.Generator)(nil)
	_ idkit.Generator[flake128.ID]  = (*flake128.Generator)(nil)
	_ idkit.Generator[segment.ID]   = (*segment.Allocator)(nil)
	_ idkit.Generator[shardkey.ID]  = (*shardkey.Reversed)(nil)
	_ idkit.Generator[shardkey.ID]  = (*shardkey.Sharded)(nil)
)

// TestOneShape drives every generator through the same code: Next, Fill,
// their context forms, Stats and Close.
func TestOneShape(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	t.Run("traceid", func(t *testing.T) {
		fake := clock.NewFake(start)
		g, err := traceid.New(context.Background(), traceid.Options{Node: 3, Clock: fake, Store: &memstore.Store{}})
		require.NoError(t, err)
		fake.Advance(time.Second) // a fresh generator starts in the next second
		checkShape(t, g, func(s idkit.Stats) bool { return s.StoreWrites > 0 })
	})
	t.Run("snowflake", func(t *testing.T) {
		fake := clock.NewFake(start)
		g, err := snowflake.New(context.Background(), snowflake.Options{Clock: fake, Store: &memstore.Store{}})
		require.NoError(t, err)
		fake.Advance(time.Millisecond)
		checkShape(t, g, func(s idkit.Stats) bool { return s.StoreWrites > 0 })
	})
	t.Run("decimalid", func(t *testing.T) {
		g, err := decimalid.New(context.Background(), decimalid.Options{Launch: 9, Source: &generators{}, StartCounter: decimalid.MaxCounter - 10})
		require.NoError(t, err)
		checkShape(t, g, func(s idkit.Stats) bool { return s.Exhausted == 1 && s.StoreWrites == 2 })
	})
	t.Run("objectid", func(t *testing.T) {
		g, err := objectid.New(objectid.Options{Clock: clock.NewFake(start)})
		require.NoError(t, err)
		checkShape(t, g, func(s idkit.Stats) bool { return s == idkit.Stats{} })
	})
	t.Run("flake128", func(t *testing.T) {
		g, err := flake128.New(context.Background(), flake128.Options{Worker: 5, Clock: clock.NewFake(start), Store: &memstore.Store{}})
		require.NoError(t, err)
		checkShape(t, g, func(s idkit.Stats) bool { return s.StoreWrites > 0 })
	})
	t.Run("segment", func(t *testing.T) {
		a, err := segment.New(context.Background(), segment.Options{Store: &blocks{}, Tag: "t", Step: 8, MinStep: 8, MaxStep: 8})
		require.NoError(t, err)
		checkShape(t, a, func(s idkit.Stats) bool { return s.StoreWrites >= 3 })
	})
}

// checkShape takes 40 IDs from g through the interface, all distinct, and
// checks its Stats with statsOK.
func checkShape[ID comparable](t *testing.T, g idkit.Generator[ID], statsOK func(idkit.Stats) bool) {
	t.Helper()
	seen := map[ID]bool{}
	add := func(ids ...ID) {
		for _, id := range ids {
			assert.False(t, seen[id], "%v issued twice", id)
			seen[id] = true
		}
	}
	ctx := context.Background()
	for range 5 {
		id, err := g.Next()
		require.NoError(t, err)
		add(id)
		id, err = g.NextContext(ctx)
		require.NoError(t, err)
		add(id)
	}
	dst := make([]ID, 15)
	n, err := g.Fill(dst)
	require.NoError(t, err)
	require.Equal(t, len(dst), n)
	add(dst...)
	n, err = g.FillContext(ctx, dst)
	require.NoError(t, err)
	require.Equal(t, len(dst), n)
	add(dst...)
	assert.Len(t, seen, 40)
	st := g.Stats()
	assert.True(t, statsOK(st), "Stats: %+v", st)
	assert.NoError(t, g.Close())
}

// generators hands out generator ids 1, 2, ..., as a launch log does.
type generators struct {
	mu   sync.Mutex
	last int
}

func (g *generators) NextGenerator(ctx context.Context, launch int) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.last++
	return g.last, ctx.Err()
}

// blocks reserves consecutive blocks of one tag.
type blocks struct {
	mu   sync.Mutex
	last int64
}

func (b *blocks) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	first := b.last + 1
	b.last += step
	return segment.Block{First: first, Last: b.last}, ctx.Err()
}
