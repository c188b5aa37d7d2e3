package segmenttest

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/segment"
)

// Bench measures a block store, the same way for every store:
//
//   - ReserveBlock: one reservation of 1000 IDs per op (the block fetch
//     latency), with its 50th and 99th percentiles;
//   - Next/step=1000 and NextParallel/step=1000: an Allocator with the
//     step fixed at 1000, so that the store's speed bounds the rate, on
//     one goroutine and on all of them; ids/s and the calls that waited;
//   - Next/step=100000 and NextParallel/step=100000: the same with blocks
//     100 times larger, where the allocator's own cost shows;
//   - Next/adaptive and NextParallel/adaptive: an Allocator with the
//     default options, whose step grows until blocks outlast a fetch.
//
// Each sub-benchmark uses a tag of its own.
func Bench(b *testing.B, store segment.BlockStore) {
	BenchSizes(b, func(int64) segment.BlockStore { return store })
}

// BenchSizes is Bench for a store whose block size is set when it is
// opened, whatever step a reservation asks for (mysqlstore's Unit):
// storeFor returns the store to measure with blocks of step IDs. It is
// called once per fixed step, and with 0 for the adaptive allocators.
func BenchSizes(b *testing.B, storeFor func(step int64) segment.BlockStore) {
	store := storeFor(1000)
	b.Run("ReserveBlock", func(b *testing.B) {
		tag := storetest.Tag(b, "bench")
		ctx := context.Background()
		var lat []time.Duration
		b.ReportAllocs()
		for b.Loop() {
			t0 := time.Now()
			if _, err := store.ReserveBlock(ctx, tag, 1000); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[(len(lat)-1)*99/100].Microseconds()), "p99-µs")
	})
	for _, step := range []int64{1000, 100_000, 0} {
		name := "adaptive"
		o := segment.Options{Store: store}
		if step != 1000 {
			o.Store = storeFor(step)
		}
		if step != 0 {
			name = "step=" + strconv.FormatInt(step, 10)
			o.Step, o.MinStep, o.MaxStep = step, step, step
		}
		b.Run("Next/"+name, func(b *testing.B) { benchNext(b, o, false) })
		b.Run("NextParallel/"+name, func(b *testing.B) { benchNext(b, o, true) })
	}
}

// benchNext measures Next of an Allocator with options o and a tag of its
// own, on one goroutine or on all of them.
func benchNext(b *testing.B, o segment.Options, parallel bool) {
	o.Tag = storetest.Tag(b, "bench")
	a, err := segment.New(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ReportAllocs()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := a.Next(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	} else {
		for b.Loop() {
			if _, err := a.Next(); err != nil {
				b.Fatal(err)
			}
		}
	}
	st := a.Stats()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
	b.ReportMetric(float64(st.Waits), "waits")
	b.ReportMetric(float64(st.StoreWrites), "blocks")
	b.ReportMetric(float64(a.State().LastFetch.Microseconds()), "fetch-µs")
}
