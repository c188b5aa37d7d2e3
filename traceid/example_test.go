package traceid_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/traceid"
)

func Example() {
	// In production leave Clock nil for the system clock.
	fake := clock.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	g, err := traceid.New(context.Background(), traceid.Options{Node: 7, Clock: fake})
	if err != nil {
		panic(err)
	}
	fake.Advance(time.Second) // a new generator issues from the next second on

	a, _ := g.Next()
	b, _ := g.Next()
	fmt.Println(a, b, a < b)
	fmt.Println(a.Node(), a.Time(fake.Now()))
	// Output:
	// 4639253248866254849 4639253248866254850 true
	// 7 2026-11-21 12:00:01 +0000 UTC
}

func ExampleDecode() {
	id := traceid.MustParse("3393367790597096")
	p, err := traceid.Decode(id, 10)
	if err != nil {
		panic(err)
	}
	fmt.Printf("second %d, node %d, thread %d, counter %d\n", p.Second, p.Node, p.Thread, p.Counter)
	// Output: second 12345, node 7, thread 3, counter 1000
}

func ExampleCompose() {
	id, err := traceid.Compose(traceid.Parts{Second: 12345, Node: 7, Thread: 3, Counter: 1000}, 10)
	fmt.Println(id, err)

	_, err = traceid.Compose(traceid.Parts{Node: 70000, Counter: 1}, 0)
	fmt.Println(err)
	// Output:
	// 3393367790597096 <nil>
	// traceid: invalid: Node = 70000, want 0 to 65535 (with 0 thread bits)
}

func ExampleID_Time() {
	// The second field wraps every 2^25 s (about 388 days); a reference
	// time picks the period.
	id := traceid.MustParse("4639253248866254849")
	fmt.Println(id.Time(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	fmt.Println(id.Time(time.Date(2027, 12, 31, 0, 0, 0, 0, time.UTC)))
	// Output:
	// 2026-11-21 12:00:01 +0000 UTC
	// 2027-12-14 20:40:33 +0000 UTC
}

func ExampleID_MarshalJSON() {
	b, _ := json.Marshal(map[string]traceid.ID{"trace": traceid.MustParse("4639253248866254849")})
	fmt.Println(string(b))

	var v struct{ Trace traceid.ID }
	_ = json.Unmarshal([]byte(`{"Trace": 4639253248866254849}`), &v) // a bare number is accepted too
	fmt.Println(v.Trace)
	// Output:
	// {"trace":"4639253248866254849"}
	// 4639253248866254849
}

func ExampleGenerator_Shard() {
	fake := clock.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	g, _ := traceid.New(context.Background(), traceid.Options{Node: 1, ThreadBits: 8, Clock: fake})
	fake.Advance(time.Second)

	s := g.Shard() // one per goroutine
	for range 3 {
		id, _ := s.Next()
		p, _ := traceid.Decode(id, 8)
		fmt.Println(p.Thread, p.Counter)
	}
	// Output:
	// 0 1
	// 0 2
	// 0 3
}

func ExampleGenerator_Fill() {
	fake := clock.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	g, _ := traceid.New(context.Background(), traceid.Options{Node: 1, Clock: fake})
	fake.Advance(time.Second)

	batch := make([]traceid.ID, 4)
	n, err := g.Fill(batch) // one atomic add for the whole batch
	fmt.Println(n, err, batch[3]-batch[0])
	// Output: 4 <nil> 3
}
