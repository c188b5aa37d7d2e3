package launchlog_test

import (
	"path/filepath"
	"testing"

	"github.com/idkit/idkit/internal/testkit/suites/segmenttest"
	"github.com/idkit/idkit/launchlog"
)

// BenchmarkBlocks measures ReserveBlock (open, lock, verify, transaction,
// fsync and close, on the machine's disk) and allocators on it.
func BenchmarkBlocks(b *testing.B) {
	l, err := launchlog.New(launchlog.Options{Path: filepath.Join(b.TempDir(), "launch.db")})
	if err != nil {
		b.Fatal(err)
	}
	segmenttest.Bench(b, l)
}
