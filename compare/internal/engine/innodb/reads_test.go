package innodb

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

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
