package decimalid

import (
	"context"
	"testing"
)

func newBenchGenerator(b *testing.B) *Generator {
	b.Helper()
	g, err := New(context.Background(), Options{Launch: 65, Source: &source{next: 92}})
	if err != nil {
		b.Fatal(err)
	}
	return g
}

var sink ID

func BenchmarkGeneratorNext(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		g := newBenchGenerator(b)
		b.ReportAllocs()
		for b.Loop() {
			id, err := g.Next()
			if err != nil {
				b.Fatal(err)
			}
			sink = id
		}
	})
	b.Run("parallel", func(b *testing.B) {
		g := newBenchGenerator(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var last ID
			for pb.Next() {
				id, err := g.Next()
				if err != nil {
					b.Error(err)
					return
				}
				last = id
			}
			_ = last
		})
	})
}

// BenchmarkFill reports the cost per ID: b.N is the number of IDs, taken
// in batches of 1Ki or 64Ki.
func BenchmarkFill(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1Ki", 1 << 10}, {"64Ki", 1 << 16}} {
		b.Run(size.name, func(b *testing.B) {
			g := newBenchGenerator(b)
			dst := make([]ID, size.n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += len(dst) {
				if _, err := g.Fill(dst[:min(len(dst), b.N-i)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkString(b *testing.B) {
	id := MustParse("1415-00092-00065")
	b.Run("decimal", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 32)
		for b.Loop() {
			buf, _ = id.AppendText(buf[:0])
		}
	})
	b.Run("split", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 32)
		for b.Loop() {
			buf, _ = id.AppendSplitText(buf[:0])
		}
	})
}

func BenchmarkParse(b *testing.B) {
	for _, s := range []string{"14150009200065", "1415-00092-00065"} {
		b.Run(s, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				id, err := Parse(s)
				if err != nil {
					b.Fatal(err)
				}
				sink = id
			}
		})
	}
}
