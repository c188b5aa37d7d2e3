package mysqlstore_test

import (
	"testing"

	"github.com/idkit/idkit/internal/testkit/suites/segmenttest"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/mysqlstore"
)

// BenchmarkBlocks measures ReserveBlock (one REPLACE committed) and
// allocators on it. A store's blocks hold its Unit IDs whatever step
// asks for, so each fixed step has a store whose unit is that step; the
// adaptive allocators get the default unit.
func BenchmarkBlocks(b *testing.B) {
	dsn, _ := newDatabase(b)
	segmenttest.BenchSizes(b, func(step int64) segment.BlockStore {
		return open(b, dsn, mysqlstore.Options{Unit: step})
	})
}
