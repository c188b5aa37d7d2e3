package compare

import (
	"testing"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLocalSequenceOneRule: one rule on both engines. A key the server
// numbers is a sequence; so is one whose values are dense and in insert
// order, which on InnoDB, where rows are in key order, needs a time
// column to show; a dense key out of insert order, a sparse key and a
// non-integer one are not.
func TestLocalSequenceOneRule(t *testing.T) {
	t.Parallel()
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	base := func(eng, typ string) engine.LikeTable {
		return engine.LikeTable{Engine: eng, Key: "aid", KeyType: typ, Rows: 100_000, KeyMin: i64(1), KeyMax: i64(100_000)}
	}
	for _, eng := range []string{engine.Postgres, engine.MySQL} {
		typ := map[string]string{engine.Postgres: "integer", engine.MySQL: "int(11)"}[eng]
		t.Run(eng, func(t *testing.T) {
			tab := base(eng, typ)
			how, ok := tab.LocalSequence()
			assert.True(t, ok, "dense integers 1..N with nothing against their order")
			assert.Equal(t, "dense: 1..100,000 for about 100,000 rows", how)

			tab.KeyTimeCorrelation = f64(0.999)
			how, ok = tab.LocalSequence()
			assert.True(t, ok)
			assert.Equal(t, "dense: 1..100,000 for about 100,000 rows, in insert order: rank correlation 1.00 with the created-at column", how)

			tab.KeyTimeCorrelation = f64(0.2)
			_, ok = tab.LocalSequence()
			assert.False(t, ok, "dense, but numbered out of insert order")

			tab = base(eng, typ)
			tab.KeyMax = i64(1 << 40)
			_, ok = tab.LocalSequence()
			assert.False(t, ok, "sparse")
			tab.KeySequence = map[string]string{engine.Postgres: "identity", engine.MySQL: "AUTO_INCREMENT"}[eng]
			how, ok = tab.LocalSequence()
			assert.True(t, ok, "the server numbers it, whatever its gaps")
			assert.Equal(t, tab.KeySequence, how)

			tab = base(eng, "uuid")
			tab.KeyMin, tab.KeyMax = nil, nil
			_, ok = tab.LocalSequence()
			assert.False(t, ok)
		})
	}
	// PostgreSQL's physical order is evidence where InnoDB's is not.
	pg := base(engine.Postgres, "integer")
	pg.KeyCorrelation = f64(0.3)
	_, ok := pg.LocalSequence()
	assert.False(t, ok)
	my := base(engine.MySQL, "int(11)")
	my.KeyCorrelation = f64(0.3)
	_, ok = my.LocalSequence()
	assert.True(t, ok)

	// The same dense table keeps its key on both engines, in one wording.
	var lines []string
	for _, eng := range []string{engine.Postgres, engine.MySQL} {
		tab := base(eng, "integer")
		k := report.JudgeTableKey(&tab, report.Need{}, "")
		require.True(t, k.Keep, eng)
		lines = append(lines, k.Line)
	}
	assert.Equal(t, lines[0], lines[1])
	assert.Equal(t, "keep your key aid (integer, dense: 1..100,000 for about 100,000 rows): a local sequence (integers numbered in insert order on one server), "+
		"as the counter the figures are measured against, in 4 bytes; change it only for a need it fails (fleet, unguessable, sortable), for which the schemes below rank", lines[0])
}
