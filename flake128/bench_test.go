package flake128

import (
	"context"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/testkit/memstore"
)

var sink ID

// BenchmarkNext measures one ID on the system clock, with a store. A
// worker issues at most 65,536 IDs a millisecond and then runs ahead by
// MaxLead at most, so a very fast run measures the cap.
func BenchmarkNext(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		g, err := New(context.Background(), Options{Worker: 1, Store: &memstore.Store{}, MaxLead: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			sink, _ = g.Next()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		g, err := New(context.Background(), Options{Worker: 1, Store: &memstore.Store{}, MaxLead: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var id ID
			for pb.Next() {
				id, _ = g.Next()
			}
			_ = id
		})
	})
}

func BenchmarkText(b *testing.B) {
	id := MustParse("8HFaR8qWtRlGDHnO57")
	buf := make([]byte, 0, 32)
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = id.AppendText(buf[:0])
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink, _ = Parse("8HFaR8qWtRlGDHnO57")
		}
	})
}
