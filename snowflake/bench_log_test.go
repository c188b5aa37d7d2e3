package snowflake

import (
	"path/filepath"
	"testing"

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
	onLog := func(b *testing.B) *Generator {
		g := newBenchGenerator(b, Options{Layout: wideLayout, Store: log})
		b.Cleanup(func() { g.Close() })
		return g
	}
	b.Run("next", func(b *testing.B) { benchNext(b, onLog(b)) })
	b.Run("fill", func(b *testing.B) { benchFill(b, onLog(b)) })
}
