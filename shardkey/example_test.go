package shardkey_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/shardkey"
	"github.com/idkit/idkit/snowflake"
)

func ExampleReverse() {
	for _, n := range []int64{1, 2, 3} {
		fmt.Printf("%d -> %#x\n", n, shardkey.Reverse(n))
	}
	fmt.Println(shardkey.Reverse(shardkey.Reverse(12345)))
	// Output:
	// 1 -> 0x4000000000000000
	// 2 -> 0x2000000000000000
	// 3 -> 0x6000000000000000
	// 12345
}

func ExampleNewReversed() {
	dir, err := os.MkdirTemp("", "shardkey-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	// The counters come from a segment.BlockStore: a launch log here.
	store, err := launchlog.New(launchlog.Options{Path: filepath.Join(dir, "idkit.db")})
	if err != nil {
		panic(err)
	}
	orders, err := shardkey.NewReversed(context.Background(), shardkey.ReversedOptions{
		Options: segment.Options{Store: store, Tag: "order"},
	})
	if err != nil {
		panic(err)
	}
	defer orders.Close()

	ids := make([]shardkey.ID, 4)
	if _, err := orders.Fill(ids); err != nil {
		panic(err)
	}
	for _, id := range ids {
		fmt.Printf("%19d %#016x counter %d\n", id, int64(id), id.Sequence())
	}
	// Output:
	// 4611686018427387904 0x4000000000000000 counter 1
	// 2305843009213693952 0x2000000000000000 counter 2
	// 6917529027641081856 0x6000000000000000 counter 3
	// 1152921504606846976 0x1000000000000000 counter 4
}

func ExampleNewShardBits() {
	// A fake clock keeps the output fixed; leave Clock nil in production.
	fake := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	g, err := shardkey.NewShardBits(context.Background(), shardkey.ShardBitsOptions{
		Bits:      shardkey.DefaultBits,
		Snowflake: snowflake.Options{Node: map[string]int64{"worker": 3}, Clock: fake},
	})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	fake.Advance(time.Millisecond) // a new generator issues from the next tick on

	for range 2 {
		fake.Advance(time.Millisecond)
		for range 2 {
			id, err := g.Next()
			if err != nil {
				panic(err)
			}
			p, err := g.Decode(id)
			if err != nil {
				panic(err)
			}
			fmt.Printf("%d shard %2d %s worker %d sequence %d\n", id, p.Shard,
				p.Time.Format("15:04:05.000"), p.Node["worker"], p.Sequence)
		}
	}
	// Output:
	// 2080329021418254336 shard  7 03:04:05.002 worker 3 sequence 0
	// 2368559397569966081 shard  8 03:04:05.002 worker 3 sequence 1
	// 7556706168300908544 shard 26 03:04:05.003 worker 3 sequence 0
	// 7844936544452620289 shard 27 03:04:05.003 worker 3 sequence 1
}

func ExampleHashPrefix() {
	// A Snowflake ID of the default layout, and its key with 5 bits of
	// FNV-1a 32 on top: anyone who holds the ID computes the key.
	inner, err := shardkey.DefaultLayout().Compose(snowflake.Parts{
		Time:     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Node:     map[string]int64{"worker": 3},
		Sequence: 7,
	})
	if err != nil {
		panic(err)
	}
	id, err := shardkey.HashPrefix(inner, 5)
	if err != nil {
		panic(err)
	}
	fmt.Println(inner, id, id.Shard(5), id.Inner(5) == inner)
	// Output:
	// 62716388356009991 1792098645266280455 6 true
}

func ExampleNewHashPrefixed() {
	// A fake clock keeps the output fixed; leave Clock nil in production.
	fake := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	g, err := shardkey.NewHashPrefixed(context.Background(), shardkey.ShardBitsOptions{
		Snowflake: snowflake.Options{Node: map[string]int64{"worker": 3}, Clock: fake},
	})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	fake.Advance(time.Millisecond) // a new generator issues from the next tick on

	ids := make([]shardkey.ID, 4)
	if _, err := g.Fill(ids); err != nil {
		panic(err)
	}
	for _, id := range ids {
		inner := id.Inner(g.Bits())
		key, err := shardkey.HashPrefix(inner, g.Bits())
		if err != nil {
			panic(err)
		}
		fmt.Printf("%d bucket %2d inner %d key matches %v\n", id, id.Shard(g.Bits()), inner, key == id)
	}
	// Output:
	// 350946764507852800 bucket  1 inner 62716388356141056 key matches true
	// 4097941654480105473 bucket 14 inner 62716388356141057 key matches true
	// 7844936544452358146 bucket 27 inner 62716388356141058 key matches true
	// 2368559397569835011 bucket  8 inner 62716388356141059 key matches true
}
