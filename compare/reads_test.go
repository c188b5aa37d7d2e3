package compare

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLookupKeys: the lookups read distinct keys of the load, spread over
// all of it and over its newest 1%, the same ones on every call.
func TestLookupKeys(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 99, 100, 1_000, 2_000, 200_000, 10_000_000} {
		spread, newest := lookupKeys(n)
		assert.Len(t, spread, min(n, lookupSample), "n=%d", n)
		assert.Len(t, newest, min(max(1, n/100), lookupSample), "n=%d", n)
		for name, idx := range map[string][]int{"spread": spread, "newest": newest} {
			lo := 0
			if name == "newest" {
				lo = newestStart(n)
			}
			seen := map[int]bool{}
			for _, i := range idx {
				assert.True(t, i >= lo && i < n, "n=%d %s: key %d outside %d..%d", n, name, i, lo, n-1)
				assert.False(t, seen[i], "n=%d %s: key %d twice", n, name, i)
				seen[i] = true
			}
		}
		if n >= 2*lookupSample {
			assert.Less(t, spread[0], n/lookupSample, "n=%d: the first key in the first stride", n)
			assert.GreaterOrEqual(t, spread[len(spread)-1], n-n/lookupSample, "n=%d: the last key in the last stride", n)
		}
		again, againNewest := lookupKeys(n)
		assert.Equal(t, spread, again, "n=%d: the same keys each time", n)
		assert.Equal(t, newest, againNewest)
	}
}

// TestAnalyzeCounts: the rows and pages of the lookups' table only, not
// of the table of values MariaDB may turn a long IN list into.
func TestAnalyzeCounts(t *testing.T) {
	t.Parallel()
	doc := map[string]any{"query_block": map[string]any{"nested_loop": []any{
		map[string]any{"table": map[string]any{"table_name": "t", "r_loops": 1.0, "r_rows": 500.0, "r_engine_stats": map[string]any{"pages_accessed": 1010.0}}},
		map[string]any{"table": map[string]any{"table_name": "<subquery2>", "r_loops": 500.0, "r_rows": 1.0, "r_engine_stats": map[string]any{"pages_accessed": 7.0}}},
	}}}
	rows, pages, ok := analyzeCounts(doc, "t")
	assert.True(t, ok)
	assert.Equal(t, 500.0, rows)
	assert.Equal(t, 1010.0, pages)
	_, _, ok = analyzeCounts(doc, "other")
	assert.False(t, ok, "no access to the table")
}
