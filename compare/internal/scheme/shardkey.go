package scheme

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/shardkey"
)

// The schemes made for range-sharded stores (package shardkey). They run
// when a run measures shards (Options.Spider) or names them, so that the
// default run keeps its length: ForShards lists them, and Schemes leaves
// them out.
var shardSchemes = []Scheme{bitReversedScheme, shardBitsScheme(false), shardBitsScheme(true)}

func init() { register(shardSchemes...) }

// ForShards returns the schemes made for range-sharded stores.
func ForShards() []Scheme { return append([]Scheme(nil), shardSchemes...) }

// forShards says s is one of ForShards.
func forShards(name string) bool {
	for _, s := range shardSchemes {
		if s.Name == name {
			return true
		}
	}
	return false
}

// bitReversedScheme is shardkey.Reversed on a launch log in a scratch
// directory, every writer an allocator of one tag, as the segment rows.
var bitReversedScheme = Scheme{
	Name:    "bitreversed",
	Kind:    Ours,
	Module:  "github.com/idkit/idkit/shardkey",
	Summary: "bit-reversed sequence (Spanner's bit_reversed_positive): a segment counter's 63 bits reversed, one allocator per writer on one tag",
	KeyLen:  8,
	New: func(writers int) ([]Generator, error) {
		sc, err := openBolt("")
		if err != nil {
			return nil, fmt.Errorf("compare: bitreversed: %w", err)
		}
		var all []*shardkey.Reversed
		gens, err := Each(writers, func(k int) (Generator, error) {
			g, err := shardkey.NewReversed(context.Background(), shardkey.ReversedOptions{Options: segment.Options{Store: sc.store, Tag: sc.tag}})
			if err != nil {
				return nil, fmt.Errorf("compare: bitreversed writer %d: %w", k, err)
			}
			all = append(all, g)
			return ours[shardkey.ID]{g, int64Key[shardkey.ID]}, nil
		})
		return closing(gens, err, func() error {
			var errs []error
			for _, g := range all {
				errs = append(errs, g.Close())
			}
			return errors.Join(append(errs, sc.close())...)
		})
	},
	Design: func() Design {
		return FromMaxBits(Design{
			Bits:     64,
			MaxBits:  63,
			Capacity: 1<<63 - 1,
			Dense:    true,
			Note:     "no time field: a dense counter from blocks of one tag, its bits reversed so that consecutive IDs differ in their top bits and spread over the whole key space; a crash loses the rest of a block, never repeats one",
		})
	},
}

// shardBitsScheme is shardkey's shard bits (TiDB's AUTO_RANDOM) or, with
// hashed, its hash prefix (CockroachDB's hash-sharded index), on the
// default layout, one worker per writer.
func shardBitsScheme(hashed bool) Scheme {
	name, summary := "shardbits", "shard bits on top (TiDB AUTO_RANDOM(5)): a hash of the millisecond | Snowflake ms | worker | sequence, one worker per writer"
	newGen := shardkey.NewShardBits
	if hashed {
		name, summary = "hashprefix", "hash prefix (CockroachDB hash-sharded index): 5 bits of a hash of the Snowflake ID | Snowflake ms | worker | sequence, one worker per writer"
		newGen = shardkey.NewHashPrefixed
	}
	return Scheme{
		Name:    name,
		Kind:    Ours,
		Module:  "github.com/idkit/idkit/shardkey",
		Summary: summary,
		KeyLen:  8,
		New: func(writers int) ([]Generator, error) {
			l := shardkey.DefaultLayout()
			return Each(writers, func(k int) (Generator, error) {
				o := shardkey.ShardBitsOptions{Bits: shardkey.DefaultBits}
				o.Snowflake.Layout, o.Snowflake.Node = l, nodeFields(l, k)
				g, err := newGen(context.Background(), o)
				if err != nil {
					return nil, fmt.Errorf("compare: %s writer %d: %w", name, k, err)
				}
				return ours[shardkey.ID]{g, int64Key[shardkey.ID]}, nil
			})
		},
		Design: func() Design {
			l := shardkey.DefaultLayout()
			note := "the shard bits lead: 32 shards, each ordered by time, so inserts go to 32 places; a tick's IDs share a shard"
			if hashed {
				note = "the hash prefix leads: each ID in one of 32 buckets, each ordered by time, so inserts go to 32 places; the key follows from the Snowflake ID (shardkey.HashPrefix)"
			}
			return FromMaxBits(Design{
				Bits:      64,
				MaxBits:   63,
				TimeUnit:  time.Duration(l.Unit),
				TimeBits:  l.TimeBits,
				Epoch:     l.Epoch,
				NodeBits:  l.NodeBits(),
				PerSecond: int64(l.Rate()),
				Waits:     true,
				Note:      note,
			})
		},
	}
}
