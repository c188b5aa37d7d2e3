package compare

import (
	"testing"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine/bbolt"
)

// BenchmarkNext is each scheme's Next as the speed measurement calls it:
// generation plus appending the key to a reused buffer.
func BenchmarkNext(b *testing.B) {
	for _, s := range scheme.Schemes() {
		b.Run(s.Name, func(b *testing.B) {
			gens, err := s.New(1)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = scheme.CloseGenerators(gens) })
			g := gens[0]
			buf := make([]byte, 0, s.KeyLen)
			if _, err := g.Next(buf); err != nil { // a fresh generator may wait for its first tick
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Next(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNextParallel shares one generator between goroutines.
func BenchmarkNextParallel(b *testing.B) {
	for _, s := range scheme.Schemes() {
		b.Run(s.Name, func(b *testing.B) {
			gens, err := s.New(1)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = scheme.CloseGenerators(gens) })
			g := gens[0]
			if _, err := g.Next(nil); err != nil { // a fresh generator may wait for its first tick
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 0, s.KeyLen)
				for pb.Next() {
					if _, err := g.Next(buf[:0]); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkAnalyze is the order and size analysis of 100,000 keys.
func BenchmarkAnalyze(b *testing.B) {
	for _, name := range []string{"counter", "uuidv4"} {
		b.Run(name, func(b *testing.B) {
			s, err := scheme.Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			gens, err := s.New(1)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = scheme.CloseGenerators(gens) })
			keys, err := scheme.Generate(gens, s.KeyLen, 100_000, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				scheme.Analyze(keys)
			}
		})
	}
}

// BenchmarkLoad is one bbolt load of 10,000 keys per iteration.
func BenchmarkLoad(b *testing.B) {
	for _, name := range []string{"counter", "uuidv4"} {
		b.Run(name, func(b *testing.B) {
			s, err := scheme.Lookup(name)
			if err != nil {
				b.Fatal(err)
			}
			gens, err := s.New(1)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = scheme.CloseGenerators(gens) })
			keys, err := scheme.Generate(gens, s.KeyLen, 10_000, nil)
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			value := make([]byte, DefaultValueSize)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bbolt.Run(keys, bbolt.Config{Dir: dir, Fill: 0.5, Batch: DefaultBatchSize, Value: value, FileLabel: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(keys.N())*float64(b.N)/b.Elapsed().Seconds(), "inserts/s")
		})
	}
}
