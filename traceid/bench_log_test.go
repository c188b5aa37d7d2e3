package traceid

import (
	"path/filepath"
	"testing"

	"github.com/idkit/idkit/launchlog"
)

// BenchmarkOnLaunchLog is Next and Fill of a Generator that keeps its
// marks in a launch log, as idkit serve's does, and holds its node there
// while it runs: the hold is taken once, in New, and costs nothing per
// ID. Use a fixed count, -benchtime=1000000x.
func BenchmarkOnLaunchLog(b *testing.B) {
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(b.TempDir(), "idkit.db")})
	if err != nil {
		b.Fatal(err)
	}
	onLog := func(b *testing.B) *Generator {
		g := newBenchGenerator(b, Options{Node: 1, Store: log})
		b.Cleanup(func() { g.Close() })
		return g
	}
	b.Run("next", func(b *testing.B) {
		g := onLog(b)
		b.ReportAllocs()
		for b.Loop() {
			id, err := g.Next()
			if err != nil {
				b.Fatal(err)
			}
			sink = id
		}
	})
	b.Run("fill", func(b *testing.B) {
		g := onLog(b)
		buf := make([]ID, 1000)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i += len(buf) {
			if _, err := g.Fill(buf[:min(len(buf), b.N-i)]); err != nil {
				b.Fatal(err)
			}
		}
		sink = buf[0]
	})
}
