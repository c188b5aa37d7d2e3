package traceid

import (
	"context"
	"testing"

	"github.com/idkit/idkit/internal/testkit/cores"
)

// The benchmarks use the real clock. Run them with a fixed count below the
// per-second cap of 4,194,303 IDs, e.g. -benchtime=1000000x, so that they
// measure the cost of an ID rather than the wait for the next second.

func newBenchGenerator(b *testing.B, o Options) *Generator {
	b.Helper()
	g, err := New(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := g.Next(); err != nil { // wait out the first, fresh second
		b.Fatal(err)
	}
	return g
}

var sink ID

func BenchmarkShardNext(b *testing.B) {
	s := newBenchGenerator(b, Options{Node: 1, ThreadBits: 4}).Shard()
	if _, err := s.Next(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		id, err := s.Next()
		if err != nil {
			b.Fatal(err)
		}
		sink = id
	}
}

func BenchmarkGeneratorNext(b *testing.B) {
	b.Run("serial", func(b *testing.B) { benchNext(b, newBenchGenerator(b, Options{Node: 1})) })
	b.Run("parallel", func(b *testing.B) {
		g := newBenchGenerator(b, Options{Node: 1})
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			var id ID
			for pb.Next() {
				var err error
				if id, err = g.Next(); err != nil {
					b.Error(err)
					return
				}
			}
			sink = id
		})
	})
}

// BenchmarkPerCore is BenchmarkGeneratorNext on the per-core path: in
// parallel each processor takes IDs from a run of its own.
func BenchmarkPerCore(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		p := newBenchGenerator(b, Options{Node: 1}).PerCore()
		b.ReportAllocs()
		for b.Loop() {
			id, err := p.Next()
			if err != nil {
				b.Fatal(err)
			}
			sink = id
		}
	})
	b.Run("parallel", func(b *testing.B) {
		p := newBenchGenerator(b, Options{Node: 1}).PerCore()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			var id ID
			for pb.Next() {
				var err error
				if id, err = p.Next(); err != nil {
					b.Error(err)
					return
				}
			}
			sink = id
		})
	})
}

// BenchmarkCores runs GOMAXPROCS goroutines that take b.N IDs between
// them, each its share, with no shared counter of the benchmark's own
// (b.RunParallel's pb.Next adds to one on every call under a fixed
// -benchtime count, which would measure the framework): ns/op is the wall
// time per ID, so throughput on k cores is k/(ns/op at -cpu k) of one.
// Run it at -cpu 1,2 with a fixed count below the per-second cap, such as
// -benchtime=2000000x.
func BenchmarkCores(b *testing.B) {
	for _, path := range []string{"next", "percore"} {
		b.Run("path="+path, func(b *testing.B) {
			g := newBenchGenerator(b, Options{Node: 1})
			next := g.Next
			if path == "percore" {
				next = g.PerCore().Next
			}
			b.ReportAllocs()
			b.ResetTimer()
			cores.Split(b, func(n int) {
				var id ID
				for range n {
					var err error
					if id, err = next(); err != nil {
						b.Error(err)
						return
					}
				}
				sink = id
			})
		})
	}
}

// BenchmarkFill reports the cost per ID: b.N is the number of IDs, taken in
// batches of 1,000.
func BenchmarkFill(b *testing.B) { benchFill(b, newBenchGenerator(b, Options{Node: 1})) }

// benchNext times g.Next, one ID an op.
func benchNext(b *testing.B, g *Generator) {
	b.ReportAllocs()
	for b.Loop() {
		id, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		sink = id
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
	sink = buf[0]
}

// BenchmarkSustainedRate issues b.N IDs as fast as one goroutine can with
// the real clock and reports the rate over the whole seconds it covered, to
// compare with the cap of 4,194,303 IDs a second per node. It fails on any
// ID that does not increase, and so on any duplicate. Give it more IDs than
// three seconds' worth, e.g. -benchtime=17000000x.
func BenchmarkSustainedRate(b *testing.B) {
	g := newBenchGenerator(b, Options{Node: 1})
	var perSecond []int // IDs per second since the first
	var prev ID
	b.ResetTimer()
	for range b.N {
		id, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		if id <= prev {
			b.Fatalf("ID %d after %d", id, prev)
		}
		if prev == 0 || id.Second() != prev.Second() {
			perSecond = append(perSecond, 0)
		}
		perSecond[len(perSecond)-1]++
		prev = id
	}
	b.StopTimer()
	if len(perSecond) < 3 {
		if b.N > 1 {
			b.Logf("covered no whole second; give it more IDs (-benchtime=17000000x)")
		}
		return
	}
	// Drop the first and last seconds, which the run covered in part.
	whole := perSecond[1 : len(perSecond)-1]
	ids := 0
	for _, n := range whole {
		ids += n
	}
	rate := float64(ids) / float64(len(whole))
	b.ReportMetric(rate, "ids/s")
	b.ReportMetric(rate/(1<<LowBits-1)*100, "%cap")
}
