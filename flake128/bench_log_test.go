package flake128

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/idkit/idkit/launchlog"
)

// BenchmarkOnLaunchLog is Next of a Generator that keeps its marks in a
// launch log and holds its worker there while it runs: the hold is taken
// once, in New, and looked at once per millisecond entered, not per ID.
func BenchmarkOnLaunchLog(b *testing.B) {
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(b.TempDir(), "idkit.db")})
	if err != nil {
		b.Fatal(err)
	}
	g, err := New(context.Background(), Options{Worker: 1, Store: log, MaxLead: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	b.ReportAllocs()
	for b.Loop() {
		sink, _ = g.Next()
	}
}
