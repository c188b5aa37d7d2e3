package shardkey_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/shardkey"
)

// reverse is Reverse bit by bit: bit i of v to bit 62-i.
func reverse(v int64) int64 {
	var r int64
	for i := range 63 {
		if v>>i&1 == 1 {
			r |= 1 << (62 - i)
		}
	}
	return r
}

func TestReverseVectors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want int64 }{
		{0, 0},
		{1, 1 << 62}, // Spanner's first value of a bit_reversed_positive sequence
		{2, 1 << 61},
		{3, 6917529027641081856}, // 0x6000000000000000
		{4, 1 << 60},
		{1 << 62, 1},
		{1<<63 - 1, 1<<63 - 1},
		{0x0123456789abcdef, reverse(0x0123456789abcdef)},
	} {
		assert.Equal(t, tt.want, shardkey.Reverse(tt.in), "Reverse(%#x)", tt.in)
		assert.Equal(t, tt.in, shardkey.Reverse(tt.want), "Reverse(%#x)", tt.want)
	}
	assert.Equal(t, int64(0x6000000000000000), shardkey.Reverse(3))
	assert.Equal(t, int64(3), shardkey.ID(0x6000000000000000).Sequence())
}

// Reverse is its own inverse over 0 to 2^63-1, agrees with reversing bit
// by bit, and ignores bit 63.
func TestReverseInvolution(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		v := rng.Int64() // 0 to 2^63-1
		r := shardkey.Reverse(v)
		require.GreaterOrEqual(t, r, int64(0), "Reverse(%#x)", v)
		require.Equal(t, reverse(v), r, "Reverse(%#x)", v)
		require.Equal(t, v, shardkey.Reverse(r), "Reverse(Reverse(%#x))", v)
		require.Equal(t, r, shardkey.Reverse(v|-1<<63), "bit 63 of %#x", v)
		require.Equal(t, v, shardkey.ID(r).Sequence())
	}
}

// Consecutive counters fall into opposite halves of the key space, and
// over 2^16 of them the top two bits take each value equally often.
func TestReverseSpreads(t *testing.T) {
	t.Parallel()
	var quarters [4]int
	for n := int64(1); n <= 1<<16; n++ {
		r := shardkey.Reverse(n)
		quarters[r>>61]++
		if n > 1 {
			require.NotEqual(t, shardkey.Reverse(n-1)>>62, r>>62, "counters %d and %d in one half", n-1, n)
		}
	}
	assert.Equal(t, [4]int{1 << 14, 1 << 14, 1 << 14, 1 << 14}, quarters)
}

func TestReversedIssuesReversedCounters(t *testing.T) {
	t.Parallel()
	r := newReversed(t, 10)
	assert.Equal(t, "order", r.Tag())
	want := int64(1)
	for range 25 {
		id, err := r.Next()
		require.NoError(t, err)
		require.Equal(t, shardkey.ID(shardkey.Reverse(want)), id)
		require.Equal(t, want, id.Sequence())
		want++
	}
	id, err := r.NextContext(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, id.Sequence())
	want++
	// Sizes below, at and across block ends, and far beyond one block.
	for _, n := range []int{0, 1, 3, 10, 7, 64, 2} {
		dst := make([]shardkey.ID, n+1)
		got, err := r.Fill(dst[:n])
		require.NoError(t, err)
		require.Equal(t, n, got)
		for i, id := range dst[:n] {
			require.Positive(t, int64(id))
			require.Equal(t, want, id.Sequence(), "Fill(%d)[%d]", n, i)
			want++
		}
		require.Zero(t, dst[n], "written past the slice")
	}
	dst := make([]shardkey.ID, 5)
	got, err := r.FillContext(context.Background(), dst)
	require.NoError(t, err)
	require.Equal(t, 5, got)
	assert.Equal(t, want, dst[0].Sequence())
	assert.Positive(t, r.Stats().StoreWrites)
	assert.Equal(t, int64(10), r.State().Step)
}

func TestReversedOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		o    segment.Options
		name string
	}{
		{segment.Options{Tag: "order"}, "Options.Store"},
		{segment.Options{Store: &blocks{}, Tag: "no spaces"}, "Options.Tag"},
		{segment.Options{Store: &blocks{}, Tag: "order", Step: -1}, "Options.Step = -1, want 1 to"},
		{segment.Options{Store: &blocks{}, Tag: "order", Timeout: -1}, "Options.Timeout"},
	} {
		r, err := shardkey.NewReversed(ctx, shardkey.ReversedOptions{Options: tt.o})
		assert.Nil(t, r)
		assert.ErrorIs(t, err, idkit.ErrInvalid, tt.name)
		assert.ErrorContains(t, err, tt.name)
	}
}

// A Reversed generator on a launch log issues IDs, is closed and starts
// again on the same file: the second run repeats no ID of the first.
func TestReversedRestartRepeatsNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "idkit.db")
	run := func() []shardkey.ID {
		log, err := launchlog.New(launchlog.Options{Path: path})
		require.NoError(t, err)
		r, err := shardkey.NewReversed(context.Background(), shardkey.ReversedOptions{
			Options: segment.Options{Store: log, Tag: "order", Step: 100, MinStep: 100, MaxStep: 100},
		})
		require.NoError(t, err)
		defer r.Close()
		ids := make([]shardkey.ID, 150)
		for i := range 50 {
			ids[i], err = r.Next()
			require.NoError(t, err)
		}
		_, err = r.Fill(ids[50:])
		require.NoError(t, err)
		return ids
	}
	first := run()
	second := run()
	requireDistinct(t, append(first, second...))
	var last int64
	for _, id := range first {
		last = max(last, id.Sequence())
	}
	for _, id := range second {
		assert.Greater(t, id.Sequence(), last, "a restart leaves a gap and goes on above it")
	}
}
