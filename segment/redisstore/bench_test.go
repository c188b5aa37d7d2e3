package redisstore_test

import (
	"context"
	"testing"

	"github.com/idkit/idkit/internal/testkit/suites/segmenttest"
	"github.com/idkit/idkit/internal/testkit/suites/storetest"
)

// BenchmarkBlocks measures ReserveBlock (one INCRBY) and allocators on
// it.
func BenchmarkBlocks(b *testing.B) {
	addr, prefix, _ := newPrefix(b)
	segmenttest.Bench(b, open(b, addr, prefix))
}

// BenchmarkCounter is Redis INCR per ID: a round trip for every ID.
func BenchmarkCounter(b *testing.B) {
	addr, prefix, _ := newPrefix(b)
	c, err := open(b, addr, prefix).Counter(storetest.Tag(b, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Next(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Next(context.Background()); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
