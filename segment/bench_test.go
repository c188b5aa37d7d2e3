package segment_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/segment"
)

func benchAllocator(b *testing.B, s segment.BlockStore, o segment.Options) *segment.Allocator {
	b.Helper()
	o.Store, o.Tag = s, "bench"
	a, err := segment.New(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Close() })
	return a
}

// BenchmarkNext measures Next and Fill with a store that answers at once,
// next to the atomic add that is their floor.
func BenchmarkNext(b *testing.B) {
	b.Run("AtomicAdd", func(b *testing.B) {
		b.ReportAllocs()
		var n atomic.Int64
		for b.Loop() {
			n.Add(1)
		}
	})
	b.Run("Next", func(b *testing.B) {
		b.ReportAllocs()
		a := benchAllocator(b, newMemStore(), segment.Options{})
		for b.Loop() {
			if _, err := a.Next(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Fill64", func(b *testing.B) { // per ID
		b.ReportAllocs()
		a := benchAllocator(b, newMemStore(), segment.Options{})
		buf := make([]segment.ID, 64)
		for i := 0; i < b.N; i += len(buf) {
			if _, err := a.Fill(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AtomicAddParallel", func(b *testing.B) {
		b.ReportAllocs()
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n.Add(1)
			}
		})
	})
	b.Run("NextParallel", func(b *testing.B) {
		b.ReportAllocs()
		a := benchAllocator(b, newMemStore(), segment.Options{})
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := a.Next(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkLatency shows the double buffer hiding the store: the store
// takes 1 ms to reserve each block, and each iteration times a batch of
// 100 Next calls and, interleaved with it, a batch of 100 bare atomic
// adds. It reports percentiles of the time per call over all batches:
// a call that waits for the store (1 ms) lifts its batch to 10 µs per
// call, far above either. ns/op is the time of one iteration (200 calls).
//
// "adaptive" starts at the default step of 1000, which at this rate lasts
// microseconds, and waits while Leaf's rule doubles the step up to
// 1,000,000 (a few milliseconds of IDs); "warm" starts there.
func BenchmarkLatency(b *testing.B) {
	for _, tt := range []struct {
		name string
		step int64
	}{{"adaptive", 0}, {"warm", 1_000_000}} {
		b.Run(tt.name, func(b *testing.B) {
			const batch = 100
			s := newMemStore()
			s.delay = time.Millisecond
			a := benchAllocator(b, s, segment.Options{Step: tt.step, MaxStep: 1_000_000})
			var n atomic.Int64
			var next, add []time.Duration
			for b.Loop() {
				t0 := time.Now()
				for range batch {
					n.Add(1)
				}
				t1 := time.Now()
				for range batch {
					if _, err := a.Next(); err != nil {
						b.Fatal(err)
					}
				}
				t2 := time.Now()
				add = append(add, t1.Sub(t0))
				next = append(next, t2.Sub(t1))
			}
			pn, pa := percentiles(next, batch), percentiles(add, batch)
			for i, q := range []string{"p50", "p99", "p999"} {
				b.ReportMetric(pn[i], "next-"+q+"-ns")
				b.ReportMetric(pa[i], "add-"+q+"-ns")
			}
			b.ReportMetric(pn[1]/pa[1], "p99-ratio")
			b.ReportMetric(float64(a.Stats().Waits), "waits")
			b.ReportMetric(float64(a.Stats().StoreWrites), "blocks")
		})
	}
}

// percentiles returns the 50th, 99th and 99.9th percentiles of batch
// times d, per call of a batch of n calls, in nanoseconds.
func percentiles(d []time.Duration, n int) [3]float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	var p [3]float64
	for i, q := range []float64{0.50, 0.99, 0.999} {
		p[i] = float64(s[int(q*float64(len(s)-1))]) / float64(n)
	}
	return p
}
