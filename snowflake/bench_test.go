package snowflake

import (
	"context"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/testkit/memstore"
)

// BenchmarkNext measures the cost of one ID below the layout's cap, on the
// system clock. A Twitter-layout node issues at most 4,096 IDs a
// millisecond and then waits, so the variants keep the cap out of the way:
// "twitter-borrow" borrows ticks ahead (ExhaustBorrow with a one-hour lead,
// and an in-memory store so that the lead is not spent on restart safety)
// and so includes the change of tick every 4,096 IDs and the lease
// renewals; "wide" is a layout
// with a 22-bit sequence that never runs out. Use a fixed count such as
// -benchtime=1000000x.
func BenchmarkNext(b *testing.B) {
	for _, v := range []struct {
		name string
		o    Options
	}{
		{"twitter-borrow", Options{Layout: Twitter(), ExhaustPolicy: ExhaustBorrow, MaxLead: time.Hour, Store: &memstore.Store{}}},
		{"wide", Options{Layout: wideLayout}},
	} {
		b.Run(v.name+"/serial", func(b *testing.B) { benchNext(b, newBenchGenerator(b, v.o)) })
		b.Run(v.name+"/parallel", func(b *testing.B) {
			g := newBenchGenerator(b, v.o)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.Next(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkFill reports the cost per ID of Fill in batches of 1,000 on the
// "wide" layout of BenchmarkNext. Use a fixed count, -benchtime=1000000x.
func BenchmarkFill(b *testing.B) { benchFill(b, newBenchGenerator(b, Options{Layout: wideLayout})) }

// wideLayout has a 22-bit sequence that never runs out within a
// benchmark's tick.
var wideLayout = Layout{Name: "wide", Epoch: Twitter().Epoch, Unit: time.Millisecond, TimeBits: 41, SequenceBits: 22}

// benchNext times g.Next, one ID an op.
func benchNext(b *testing.B, g *Generator) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchFill times g.Fill in batches of 1,000; an op is one ID.
func benchFill(b *testing.B, g *Generator) {
	buf := make([]ID, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(buf) {
		if _, err := g.Fill(buf[:min(len(buf), b.N-i)]); err != nil {
			b.Fatal(err)
		}
	}
}

// newBenchGenerator returns a generator on the system clock that has
// already passed its start-up wait.
func newBenchGenerator(b *testing.B, o Options) *Generator {
	b.Helper()
	g, err := New(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := g.Next(); err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkSustained issues IDs as fast as one goroutine can from a
// Twitter-layout generator (ExhaustWait) on the system clock, so that it
// runs at the cap of 4,096 IDs per millisecond and waits for every next
// tick. It reports the rate reached (ids/s) and its share of the cap
// (%cap), and fails on an ID that does not exceed the one before, which
// also rules out duplicates. Run it with a count that takes a second or
// more, such as -benchtime=8192000x.
func BenchmarkSustained(b *testing.B) {
	g := newBenchGenerator(b, Options{Layout: Twitter()})
	limit := Twitter().Rate()
	var last ID
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		id, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		if id <= last {
			b.Fatalf("ID %d after %d: not increasing", id, last)
		}
		last = id
	}
	rate := float64(b.N) / time.Since(start).Seconds()
	b.ReportMetric(rate, "ids/s")
	b.ReportMetric(100*rate/limit, "%cap")
}
