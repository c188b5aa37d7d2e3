package shardkey_test

import (
	"context"
	"testing"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/shardkey"
	"github.com/idkit/idkit/snowflake"
)

// wide is a layout of 58 bits with 2^17 IDs a millisecond, so that the
// benchmarks measure the generators rather than wait for the clock, as
// the default layout's 4,096 a millisecond would make them.
var wide = snowflake.Layout{Name: "wide", Epoch: snowflake.Twitter().Epoch, Unit: time.Millisecond, TimeBits: 41, SequenceBits: 17}

// benchGenerators returns a generator of each form on the system clock.
func benchGenerators(b *testing.B) map[string]idkit.Generator[shardkey.ID] {
	b.Helper()
	ctx := context.Background()
	r, err := shardkey.NewReversed(ctx, shardkey.ReversedOptions{
		Options: segment.Options{Store: &blocks{}, Tag: "bench", Step: 1_000_000},
	})
	if err != nil {
		b.Fatal(err)
	}
	bits, err := shardkey.NewShardBits(ctx, shardkey.ShardBitsOptions{Snowflake: snowflake.Options{Layout: wide}})
	if err != nil {
		b.Fatal(err)
	}
	hashed, err := shardkey.NewHashPrefixed(ctx, shardkey.ShardBitsOptions{Snowflake: snowflake.Options{Layout: wide}})
	if err != nil {
		b.Fatal(err)
	}
	gens := map[string]idkit.Generator[shardkey.ID]{"Reversed": r, "ShardBits": bits, "HashPrefixed": hashed}
	b.Cleanup(func() {
		for _, g := range gens {
			_ = g.Close()
		}
	})
	return gens
}

func BenchmarkNext(b *testing.B) {
	for _, name := range []string{"Reversed", "ShardBits", "HashPrefixed"} {
		b.Run(name, func(b *testing.B) {
			g := benchGenerators(b)[name]
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFill(b *testing.B) {
	for _, name := range []string{"Reversed", "ShardBits", "HashPrefixed"} {
		b.Run(name, func(b *testing.B) {
			g := benchGenerators(b)[name]
			dst := make([]shardkey.ID, 256)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Fill(dst); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(dst)), "ns/ID")
		})
	}
}

// BenchmarkReverse is the transform alone.
func BenchmarkReverse(b *testing.B) {
	var sink int64
	for i := int64(1); b.Loop(); i++ {
		sink += shardkey.Reverse(i)
	}
	_ = sink
}
