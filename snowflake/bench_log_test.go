package snowflake

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/idkit/idkit/launchlog"
)

// BenchmarkOnLaunchLog is Next and Fill of a Generator on the "wide"
// layout of BenchmarkNext that keeps its marks in a launch log, as idkit
// serve's does, and holds its node there while it runs: the hold is taken
// once, in New, and costs nothing per ID. Use a fixed count,
// -benchtime=1000000x.
func BenchmarkOnLaunchLog(b *testing.B) {
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(b.TempDir(), "idkit.db")})
	if err != nil {
		b.Fatal(err)
	}
	wide := Layout{Name: "wide", Epoch: Twitter().Epoch, Unit: time.Millisecond, TimeBits: 41, SequenceBits: 22}
	onLog := func(b *testing.B) *Generator {
		g := newBenchGenerator(b, Options{Layout: wide, Store: log})
		b.Cleanup(func() { g.Close() })
		return g
	}
	b.Run("next", func(b *testing.B) {
		g := onLog(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Next(); err != nil {
				b.Fatal(err)
			}
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
	})
}
