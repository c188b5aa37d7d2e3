package pgstore_test

import (
	"testing"

	"github.com/idkit/idkit/internal/testkit/suites/segmenttest"
)

// BenchmarkBlocks measures ReserveBlock (one UPDATE committed) and
// allocators on it.
func BenchmarkBlocks(b *testing.B) {
	dsn, schema, _ := newSchema(b)
	segmenttest.Bench(b, open(b, dsn, schema+".blocks"))
}
