package snowflake_test

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/idkit/idkit/snowflake"
)

func ExampleNew() {
	g, err := snowflake.New(context.Background(), snowflake.Options{
		Layout: snowflake.Twitter(),
		Node:   map[string]int64{"datacenter": 3, "worker": 17},
	})
	if err != nil {
		panic(err)
	}
	a, _ := g.Next()
	b, _ := g.Next()
	p, _ := snowflake.Twitter().Decode(b)
	fmt.Println(b > a, p.Node["datacenter"], p.Node["worker"])
	// Output: true 3 17
}

// The policies are options; their zero values are ClockHybrid, ExhaustWait
// and StartZero. Here a ShardingSphere-style generator waits up to 10 ms
// for a clock stepped back and fails beyond, and borrows up to 5 ms ahead
// when a millisecond's sequence runs out.
func ExampleNew_policies() {
	g, err := snowflake.New(context.Background(), snowflake.Options{
		Layout:        snowflake.ShardingSphere(),
		Node:          map[string]int64{"worker": 42},
		ClockPolicy:   snowflake.ClockWait,
		MaxWait:       10 * time.Millisecond,
		ExhaustPolicy: snowflake.ExhaustBorrow,
		MaxLead:       5 * time.Millisecond,
	})
	if err != nil {
		panic(err)
	}
	for range 10000 {
		if _, err := g.Next(); err != nil {
			panic(err)
		}
	}
	fmt.Println(g.Stats().ClockBackward, g.Stats().Rejected)
	// Output: 0 0
}

// Discord's documentation explains the ID 175928847299117063.
func ExampleLayout_Decode() {
	p, err := snowflake.Discord().Decode(175928847299117063)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Time.Format(time.RFC3339Nano))
	fmt.Println("worker", p.Node["worker"], "process", p.Node["process"], "increment", p.Sequence)
	// Output:
	// 2016-04-30T11:18:25.796Z
	// worker 1 process 0 increment 7
}

// The worked example of "Sharding & IDs at Instagram": 1387263000 ms into
// the epoch, logical shard 1341, sequence 5001 % 1024.
func ExampleLayout_Compose() {
	l := snowflake.Instagram()
	id, err := l.Compose(snowflake.Parts{
		Time:     l.Epoch.Add(1387263000 * time.Millisecond),
		Node:     map[string]int64{"shard": 1341},
		Sequence: 5001 % 1024,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(id)
	// Output: 11637205501278089
}

func ExamplePreset() {
	for _, name := range snowflake.PresetNames() {
		l, _ := snowflake.Preset(name)
		fmt.Printf("%-14s %2d bits, %10.0f IDs/s per node, until %d\n", name, l.Bits(), l.Rate(), l.Expires().Year())
	}
	// Output:
	// twitter        63 bits,    4096000 IDs/s per node, until 2080
	// discord        63 bits,    4096000 IDs/s per node, until 2084
	// shardingsphere 63 bits,    4096000 IDs/s per node, until 2086
	// customuuid     63 bits,    1024000 IDs/s per node, until 2045
	// instagram      63 bits,    1024000 IDs/s per node, until 2046
	// baidu          63 bits,       8192 IDs/s per node, until 2024
	// sonyflake      63 bits,      25600 IDs/s per node, until 2188
	// simpleflake    63 bits, 8388608000 IDs/s per node, until 2034
	// jssafe         53 bits,     128000 IDs/s per node, until 2094
}

// The policy types read their names, so a command line can set them.
func ExampleClockPolicy_UnmarshalText() {
	var o snowflake.Options
	fs := flag.NewFlagSet("idkit", flag.ContinueOnError)
	fs.TextVar(&o.ClockPolicy, "clock-policy", snowflake.ClockHybrid, "hybrid, reject, wait or continue")
	fs.TextVar(&o.ExhaustPolicy, "exhaust-policy", snowflake.ExhaustWait, "wait, borrow or error")
	if err := fs.Parse([]string{"-clock-policy", "continue", "-exhaust-policy", "borrow"}); err != nil {
		panic(err)
	}
	fmt.Println(o.ClockPolicy, o.ExhaustPolicy)
	// Output: continue borrow
}

func ExampleParse() {
	id, err := snowflake.Parse("1050118621198921728")
	if err != nil {
		panic(err)
	}
	fmt.Println(id.Time(snowflake.Twitter()).Format(time.RFC3339Nano))
	_, err = snowflake.Parse("-1")
	fmt.Println(err)
	// Output:
	// 2018-10-10T20:19:24.211Z
	// snowflake: not an ID: "-1", want 1 to 9223372036854775807
}
