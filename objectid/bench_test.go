package objectid

import "testing"

var sink ID

// BenchmarkNew measures the cost of one ID. A generator issues at most
// 2^24 IDs a second and then waits for the next, so keep each run below
// that, for example -benchtime=2000000x: the "generator" variants use a
// fresh Generator per run, "package" shares the package's one.
func BenchmarkNew(b *testing.B) {
	b.Run("generator/serial", func(b *testing.B) {
		g := newGenerator(Options{})
		b.ReportAllocs()
		for b.Loop() {
			sink, _ = g.Next()
		}
	})
	b.Run("generator/parallel", func(b *testing.B) {
		g := newGenerator(Options{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var id ID
			for pb.Next() {
				id, _ = g.Next()
			}
			_ = id
		})
	})
	b.Run("package/serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = NewID()
		}
	})
}

// BenchmarkFill reports the cost per ID of Fill in batches of 1,000. Use a
// fixed count below 2^24, such as -benchtime=2000000x.
func BenchmarkFill(b *testing.B) {
	g := newGenerator(Options{})
	buf := make([]ID, 1000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += len(buf) {
		g.Fill(buf[:min(len(buf), b.N-i)])
	}
}

func BenchmarkText(b *testing.B) {
	id := NewID()
	s := id.String()
	b.Run("String", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = id.String()
		}
	})
	b.Run("AppendText", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 24)
		for b.Loop() {
			buf, _ = id.AppendText(buf[:0])
		}
	})
	b.Run("Parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink, _ = Parse(s)
		}
	})
}
