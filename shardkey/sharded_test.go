package shardkey_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/shardkey"
	"github.com/idkit/idkit/snowflake"
)

// fnvMod is hash/fnv's FNV-1a 32 of v's 8 big-endian bytes, modulo
// 2^bits.
func fnvMod(v uint64, bits int) int64 {
	h := fnv.New32a()
	_, _ = h.Write(binary.BigEndian.AppendUint64(nil, v))
	return int64(h.Sum32() % (1 << bits))
}

// tickOf is the tick of an inner ID of the default layout.
func tickOf(inner snowflake.ID) uint64 { return uint64(inner) >> 17 }

func TestHashPrefixIsFNV1a(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10_000 {
		bits := 1 + rng.IntN(shardkey.MaxBits)
		inner := snowflake.ID(1 + rng.Int64N(1<<(63-bits)-1))
		id, err := shardkey.HashPrefix(inner, bits)
		require.NoError(t, err)
		require.Equal(t, inner, id.Inner(bits))
		require.Equal(t, fnvMod(uint64(inner), bits), id.Shard(bits), "HashPrefix(%d, %d)", inner, bits)
	}
	// FNV-1a 32 of 00 00 00 00 00 00 00 01 is 0x9ae16fd2: shard 18 of 32.
	id, err := shardkey.HashPrefix(1, 5)
	require.NoError(t, err)
	assert.Equal(t, shardkey.ID(18<<58|1), id)
}

func TestHashPrefixErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		inner snowflake.ID
		bits  int
		msg   string
	}{
		{1, 0, "bits = 0, want 1 to 15"},
		{1, 16, "bits = 16, want 1 to 15"},
		{0, 5, "Snowflake ID 0, want 1 to 288230376151711743 for 5 shard bits"},
		{-1, 5, "Snowflake ID -1, want 1 to"},
		{1 << 58, 5, "Snowflake ID 288230376151711744, want 1 to 288230376151711743"},
		{1 << 48, 15, "want 1 to 281474976710655 for 15 shard bits"},
	} {
		id, err := shardkey.HashPrefix(tt.inner, tt.bits)
		assert.Zero(t, id)
		assert.ErrorIs(t, err, shardkey.ErrInvalid)
		assert.ErrorIs(t, err, idkit.ErrInvalid)
		assert.ErrorContains(t, err, tt.msg)
	}
}

func TestShardedOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	twitter := snowflake.Twitter()
	custom := snowflake.Layout{Name: "c", Epoch: twitter.Epoch, Unit: time.Millisecond, TimeBits: 41, SequenceBits: 8}
	for _, tt := range []struct {
		name string
		o    shardkey.ShardBitsOptions
		kind error
		msg  string
	}{
		{"negative bits", shardkey.ShardBitsOptions{Bits: -1}, shardkey.ErrInvalid, "ShardBitsOptions.Bits = -1, want 1 to 15"},
		{"too many bits", shardkey.ShardBitsOptions{Bits: 16}, shardkey.ErrInvalid, "ShardBitsOptions.Bits = 16, want 1 to 15"},
		{"default layout too wide", shardkey.ShardBitsOptions{Bits: 6}, shardkey.ErrInvalid,
			"ShardBitsOptions.Snowflake.Layout uses 58 bits (time 41 + node 5 + sequence 12), want at most 57, 63 - Bits (6)"},
		{"twitter too wide", shardkey.ShardBitsOptions{Snowflake: snowflake.Options{Layout: twitter}}, shardkey.ErrInvalid,
			"ShardBitsOptions.Snowflake.Layout uses 63 bits (time 41 + node 10 + sequence 12), want at most 58"},
		{"custom too wide", shardkey.ShardBitsOptions{Bits: 15, Snowflake: snowflake.Options{Layout: custom}}, shardkey.ErrInvalid,
			"uses 49 bits (time 41 + node 0 + sequence 8), want at most 48, 63 - Bits (15)"},
		{"bad layout", shardkey.ShardBitsOptions{Snowflake: snowflake.Options{Layout: snowflake.Layout{TimeBits: 40}}}, snowflake.ErrInvalid,
			"ShardBitsOptions.Snowflake: snowflake: invalid: Layout.Epoch"},
		{"bad node", shardkey.ShardBitsOptions{Snowflake: snowflake.Options{Node: map[string]int64{"worker": 32}}}, snowflake.ErrInvalid,
			`Options.Node["worker"] = 32, want 0 to 31`},
		{"unknown node", shardkey.ShardBitsOptions{Snowflake: snowflake.Options{Node: map[string]int64{"datacenter": 1}}}, snowflake.ErrInvalid,
			`Options.Node["datacenter"]`},
	} {
		for _, hashed := range []bool{false, true} {
			s, err := construct(hashed)(ctx, tt.o)
			assert.Nil(t, s, "%s, %s", tt.name, form(hashed))
			assert.ErrorIs(t, err, tt.kind, "%s, %s", tt.name, form(hashed))
			assert.ErrorIs(t, err, idkit.ErrInvalid, "%s, %s", tt.name, form(hashed))
			assert.ErrorContains(t, err, tt.msg, "%s, %s", tt.name, form(hashed))
		}
	}
}

func TestShardedDefaults(t *testing.T) {
	t.Parallel()
	s, _ := newSharded(t, false, shardkey.ShardBitsOptions{Snowflake: snowflake.Options{Node: map[string]int64{"worker": 3}}})
	assert.Equal(t, shardkey.DefaultBits, s.Bits())
	l := s.Layout()
	assert.Equal(t, shardkey.DefaultLayout().String(), l.String())
	assert.Equal(t, 58, l.Bits())
	assert.Equal(t, "shardkey: 41 x 1ms since 2010-11-04T01:42:54.657Z | worker 5 | sequence 12", l.String())
	assert.Equal(t, map[string]int64{"worker": 3}, s.Node())
}

// The IDs of one tick take the shards in turn from the hash of the tick,
// so that a tick's IDs spread however many a tick holds, and the IDs in
// a shard increase; consecutive ticks start their turns on every shard.
func TestShardBitsTakeTurns(t *testing.T) {
	t.Parallel()
	s, fake := newSharded(t, false, shardkey.ShardBitsOptions{Snowflake: snowflake.Options{Node: map[string]int64{"worker": 3}}})
	const ticks = 1024
	perShard := map[int64]int{}
	dst := make([]shardkey.ID, 5)
	for k := range ticks {
		if k > 0 {
			fake.Advance(time.Millisecond)
		}
		var ids []shardkey.ID
		for range 3 {
			id, err := s.Next()
			require.NoError(t, err)
			ids = append(ids, id)
		}
		n, err := s.Fill(dst)
		require.NoError(t, err)
		require.Equal(t, len(dst), n)
		ids = append(ids, dst...)
		shard := ids[0].Shard(5)
		tick := tickOf(ids[0].Inner(5))
		assert.Equal(t, fnvMod(tick, 5), shard, "the tick's first ID, sequence 0, is on the hash of the tick")
		for i, id := range ids {
			require.Equal(t, (shard+int64(i))%32, id.Shard(5), "tick %d, ID %d: the shard after the one before", k, i)
			require.Equal(t, tick, tickOf(id.Inner(5)), "tick %d, ID %d", k, i)
			if i > 0 {
				require.Greater(t, id.Inner(5), ids[i-1].Inner(5), "the Snowflake IDs of a tick increase")
			}
			p, err := s.Decode(id)
			require.NoError(t, err)
			assert.Equal(t, id.Shard(5), p.Shard)
			assert.Equal(t, id.Inner(5), p.Inner)
			assert.Equal(t, fake.Now().Truncate(time.Millisecond), p.Time)
			assert.Equal(t, map[string]int64{"worker": 3}, p.Node)
			assert.Equal(t, int64(i), p.Sequence)
			key, err := s.Key(p.Inner)
			require.NoError(t, err)
			assert.Equal(t, id, key)
		}
		perShard[shard]++
	}
	assert.Len(t, perShard, 32, "1024 consecutive ticks reach every shard")
	for shard, n := range perShard {
		// 31 aligned runs of 32 ticks, each on every shard once, and the
		// parts of two more.
		assert.InDelta(t, ticks/32, n, 1, "shard %d", shard)
	}
}

// Up to 8 bits, every aligned run of 2^bits consecutive ticks takes
// every shard once; with more bits, 2^16 consecutive ticks spread over
// the shards about evenly.
func TestTickShardsEven(t *testing.T) {
	t.Parallel()
	const ticks = 1 << 16
	for _, bits := range []int{1, 2, 5, 8, 9, 12} {
		counts := make([]int, 1<<bits)
		run := map[int64]bool{}
		for tick := uint64(500_000_000_000); tick < 500_000_000_000+ticks; tick++ {
			shard := fnvMod(tick, bits)
			counts[shard]++
			if bits > 8 {
				continue
			}
			require.False(t, run[shard], "bits %d, tick %d: shard %d twice in an aligned run", bits, tick, shard)
			run[shard] = true
			if tick%(1<<bits) == 1<<bits-1 {
				clear(run)
			}
		}
		want := ticks >> bits
		for shard, n := range counts {
			if bits <= 8 {
				assert.Equal(t, want, n, "bits %d, shard %d", bits, shard)
			} else {
				assert.True(t, want/2 <= n && n <= want*2, "bits %d, shard %d: %d ticks, want about %d", bits, shard, n, want)
			}
		}
	}
	// A generator's shard is the tick's hash plus the sequence.
	s, _ := newSharded(t, false, shardkey.ShardBitsOptions{})
	l := s.Layout()
	for tick := int64(500_000_000_000); tick < 500_000_000_064; tick++ {
		inner, err := l.Compose(snowflake.Parts{Tick: tick, Node: map[string]int64{"worker": 3}, Sequence: 9})
		require.NoError(t, err)
		id, err := s.Key(inner)
		require.NoError(t, err)
		assert.Equal(t, (fnvMod(uint64(tick), 5)+9)%32, id.Shard(5), "the tick's hash plus the sequence")
	}
}

// Consecutive Snowflake IDs spread over the buckets evenly: every aligned
// run of 2^bits consecutive IDs of a tick takes every bucket once.
func TestHashPrefixBucketsEven(t *testing.T) {
	t.Parallel()
	l := shardkey.DefaultLayout()
	for _, bits := range []int{1, 2, 5, 8} {
		counts := make([]int, 1<<bits)
		run := map[int64]bool{}
		n := 0
		for tick := int64(200_000_000_000); tick < 200_000_000_016; tick++ { // IDs within 55 bits
			for seq := range int64(4096) {
				inner, err := l.Compose(snowflake.Parts{Tick: tick, Node: map[string]int64{"worker": 3}, Sequence: seq})
				require.NoError(t, err)
				id, err := shardkey.HashPrefix(inner, bits)
				require.NoError(t, err)
				bucket := id.Shard(bits)
				counts[bucket]++
				n++
				require.False(t, run[bucket], "bits %d, tick %d, sequence %d: bucket %d twice in an aligned run", bits, tick, seq, bucket)
				run[bucket] = true
				if seq%(1<<bits) == 1<<bits-1 {
					clear(run)
				}
			}
		}
		for bucket, c := range counts {
			assert.Equal(t, n>>bits, c, "bits %d, bucket %d", bits, bucket)
		}
	}
}

func TestHashPrefixedGenerator(t *testing.T) {
	t.Parallel()
	s, fake := newSharded(t, true, shardkey.ShardBitsOptions{Bits: 8, Snowflake: snowflake.Options{
		Layout: snowflake.Layout{Name: "narrow", Epoch: snowflake.Twitter().Epoch, Unit: time.Millisecond, TimeBits: 41, Fields: []snowflake.Field{{Name: "worker", Bits: 2}}, SequenceBits: 12},
		Node:   map[string]int64{"worker": 1},
	}})
	assert.Equal(t, 8, s.Bits())
	buckets := map[int64]bool{}
	dst := make([]shardkey.ID, 61)
	for k := range 4 {
		if k > 0 {
			fake.Advance(time.Millisecond)
		}
		ids := make([]shardkey.ID, 3, 64)
		for i := range ids {
			var err error
			ids[i], err = s.NextContext(context.Background())
			require.NoError(t, err)
		}
		n, err := s.FillContext(context.Background(), dst)
		require.NoError(t, err)
		ids = append(ids, dst[:n]...)
		for i, id := range ids {
			inner := id.Inner(8)
			want, err := shardkey.HashPrefix(inner, 8)
			require.NoError(t, err)
			require.Equal(t, want, id, "anyone with the Snowflake ID computes the key")
			key, err := s.Key(inner)
			require.NoError(t, err)
			require.Equal(t, want, key)
			p, err := s.Decode(id)
			require.NoError(t, err)
			assert.Equal(t, int64(i), p.Sequence)
			assert.Equal(t, map[string]int64{"worker": 1}, p.Node)
			assert.Equal(t, fake.Now().Truncate(time.Millisecond), p.Time)
			buckets[id.Shard(8)] = true
		}
	}
	assert.Greater(t, len(buckets), 128, "256 IDs of 4 ticks over 256 buckets")
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	bits, _ := newSharded(t, false, shardkey.ShardBitsOptions{})
	hashed, _ := newSharded(t, true, shardkey.ShardBitsOptions{})
	id, err := hashed.Next()
	require.NoError(t, err)
	_, err = hashed.Decode(id)
	require.NoError(t, err)
	inner := id.Inner(5)
	other := shardkey.ID(int64(id) ^ 1<<62) // the same Snowflake ID in another shard
	for _, tt := range []struct {
		s   *shardkey.Sharded
		id  shardkey.ID
		msg string
	}{
		{hashed, 0, "0, want 1 to 9223372036854775807"},
		{hashed, -1, "-1, want 1 to 9223372036854775807"},
		{hashed, other, "want " + int64Text(id.Shard(5)) + " for Snowflake ID " + inner.String()},
		{hashed, shardkey.ID(int64(id) &^ (1<<58 - 1)), "Snowflake ID 0"},
	} {
		_, err := tt.s.Decode(tt.id)
		assert.ErrorIs(t, err, shardkey.ErrRange, "%d", tt.id)
		assert.ErrorContains(t, err, tt.msg)
	}
	// The two forms' shards differ for most IDs: one of these is another's.
	found := false
	for range 64 {
		id, err := hashed.Next()
		require.NoError(t, err)
		if _, err := bits.Decode(id); err != nil {
			assert.ErrorIs(t, err, shardkey.ErrRange)
			found = true
			break
		}
	}
	assert.True(t, found, "a hash-prefixed ID that the shard-bits form does not issue")
	for _, inner := range []snowflake.ID{0, -1, 1 << 58} {
		_, err := bits.Key(inner)
		assert.ErrorIs(t, err, shardkey.ErrInvalid, "Key(%d)", inner)
		assert.ErrorContains(t, err, "want 1 to 288230376151711743 for layout shardkey")
	}
}

func int64Text(v int64) string { return shardkey.ID(v).String() }

// A generator of each form with a launch log as its store issues IDs, is
// closed, and starts again on the same file after the clock was stepped
// back while it was down: the second run repeats no ID of the first.
func TestShardedRestartRepeatsNothing(t *testing.T) {
	t.Parallel()
	for _, hashed := range []bool{false, true} {
		t.Run(form(hashed), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "idkit.db")
			fake := clock.NewFake(t0)
			run := func() []shardkey.ID {
				log, err := launchlog.New(launchlog.Options{Path: path})
				require.NoError(t, err)
				s, err := construct(hashed)(context.Background(), shardkey.ShardBitsOptions{Snowflake: snowflake.Options{
					Node: map[string]int64{"worker": 7}, Clock: fake, Store: log, Lease: 20 * time.Millisecond,
				}})
				require.NoError(t, err)
				defer s.Close()
				var ids []shardkey.ID
				dst := make([]shardkey.ID, 4)
				for range 30 {
					fake.Advance(time.Millisecond)
					id, err := drive(s, fake, time.Millisecond) // the first waits past the mark
					require.NoError(t, err)
					_, err = driveCall(fake, time.Millisecond, func() (shardkey.ID, error) {
						n, err := s.Fill(dst)
						if n != len(dst) && err == nil {
							err = fmt.Errorf("Fill filled %d of %d", n, len(dst))
						}
						return 0, err
					})
					require.NoError(t, err)
					ids = append(append(ids, id), dst...)
				}
				for _, id := range ids {
					_, err := s.Decode(id)
					require.NoError(t, err)
				}
				return ids
			}
			first := run()
			fake.Advance(-25 * time.Millisecond) // down; the clock steps back
			second := run()
			requireDistinct(t, append(first, second...))
		})
	}
}
