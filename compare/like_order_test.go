package compare

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChooseTimeColumn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cands []timeCandidate
		want  string
		why   string
	}{
		{[]timeCandidate{{"updated_at", true}, {"created_at", false}}, "created_at", "its name says when the row was made"},
		{[]timeCandidate{{"shipped_at", true}, {"ts", true}, {"day", false}}, "ts", "an index leads with it"},
		{[]timeCandidate{{"day", false}, {"ts", false}}, "day", "the table's first date or timestamp column"},
		{[]timeCandidate{{"inserted", true}, {"created_at", true}}, "inserted", "its name says when the row was made and an index leads with it"},
		{[]timeCandidate{{"updated_at", true}, {"birth_date", false}, {"expires_at", true}}, "", ""},
		{[]timeCandidate{{"last_updated", true}, {"appended_at", false}}, "appended_at", "the table's first date or timestamp column"},
		{nil, "", ""},
	} {
		got, why := chooseTimeColumn(tt.cands)
		assert.Equal(t, tt.want, got, "%v", tt.cands)
		assert.Equal(t, tt.why, why, "%v", tt.cands)
	}
}

func TestRankCorrelation(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	for _, tt := range []struct {
		x, y []float64
		want float64
		ok   bool
	}{
		{[]float64{1, 2, 3, 4}, []float64{10, 20, 25, 1000}, 1, true},
		{[]float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1, true},
		{[]float64{1, 2, nan, 3, 4}, []float64{1, 2, 99, 3, 4}, 1, true}, // a NULL is left out
		{[]float64{1, 2}, []float64{1, 2}, 0, false},
		{[]float64{1, 1, 1}, []float64{1, 2, 3}, 0, false},
	} {
		got, ok := rankCorrelation(tt.x, tt.y)
		assert.Equal(t, tt.ok, ok, "%v %v", tt.x, tt.y)
		assert.InDelta(t, tt.want, got, 1e-9, "%v %v", tt.x, tt.y)
	}
	// Ties take their mean rank.
	assert.Equal(t, []float64{1.5, 0, 1.5, 3}, ranks([]float64{2, 1, 2, 3}))
}

// TestOrderSample: the sampled rows go in the order of the key when it is
// a local sequence, else of the time column, else physically, NULLs
// first, ties in physical order.
func TestOrderSample(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	rows := func() []sampledRow[string] {
		return []sampledRow[string]{
			{row: "a", key: 3, at: 100, physical: 2},
			{row: "b", key: 1, at: nan, physical: 0},
			{row: "c", key: 2, at: 50, physical: 3},
			{row: "d", key: 4, at: 50, physical: 1},
		}
	}
	order := func(rs []sampledRow[string]) string {
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(r.row)
		}
		return b.String()
	}
	r := rows()
	o := orderSample(r, "id", true, "created_at", "why", false)
	assert.Equal(t, "bcad", order(r))
	assert.Equal(t, "key", o.by)
	assert.Equal(t, "created_at", o.time, "a sequence keeps its time column for the rows a sampled row fills")
	assert.Contains(t, o.note, "the order of the key id, a local sequence")

	r = rows()
	o = orderSample(r, "id", false, "created_at", "its name says when the row was made", false)
	assert.Equal(t, "bdca", order(r), "by time, the NULL first, the tie at 50 in physical order")
	assert.Equal(t, "time", o.by)
	assert.Contains(t, o.note, "in the order of created_at (its name says when the row was made)")

	r = rows()
	o = orderSample(r, "id", false, "", "", false)
	assert.Equal(t, "bdac", order(r))
	assert.Equal(t, "physical", o.by)
	assert.Contains(t, o.note, "physical order")

	r = rows()
	o = orderSample(r, "id", false, "", "", true)
	assert.Contains(t, o.note, "which on InnoDB is the key's")
}

// TestLocalSequenceOneRule: one rule on both engines. A key the server
// numbers is a sequence; so is one whose values are dense and in insert
// order, which on InnoDB, where rows are in key order, needs a time
// column to show; a dense key out of insert order, a sparse key and a
// non-integer one are not.
func TestLocalSequenceOneRule(t *testing.T) {
	t.Parallel()
	i64 := func(v int64) *int64 { return &v }
	f64 := func(v float64) *float64 { return &v }
	base := func(engine, typ string) LikeTable {
		return LikeTable{Engine: engine, Key: "aid", KeyType: typ, Rows: 100_000, KeyMin: i64(1), KeyMax: i64(100_000)}
	}
	for _, engine := range []string{EnginePostgres, EngineMySQL} {
		typ := map[string]string{EnginePostgres: "integer", EngineMySQL: "int(11)"}[engine]
		t.Run(engine, func(t *testing.T) {
			tab := base(engine, typ)
			how, ok := tab.localSequence()
			assert.True(t, ok, "dense integers 1..N with nothing against their order")
			assert.Equal(t, "dense: 1..100,000 for about 100,000 rows", how)

			tab.KeyTimeCorrelation = f64(0.999)
			how, ok = tab.localSequence()
			assert.True(t, ok)
			assert.Equal(t, "dense: 1..100,000 for about 100,000 rows, in insert order: rank correlation 1.00 with the created-at column", how)

			tab.KeyTimeCorrelation = f64(0.2)
			_, ok = tab.localSequence()
			assert.False(t, ok, "dense, but numbered out of insert order")

			tab = base(engine, typ)
			tab.KeyMax = i64(1 << 40)
			_, ok = tab.localSequence()
			assert.False(t, ok, "sparse")
			tab.KeySequence = map[string]string{EnginePostgres: "identity", EngineMySQL: "AUTO_INCREMENT"}[engine]
			how, ok = tab.localSequence()
			assert.True(t, ok, "the server numbers it, whatever its gaps")
			assert.Equal(t, tab.KeySequence, how)

			tab = base(engine, "uuid")
			tab.KeyMin, tab.KeyMax = nil, nil
			_, ok = tab.localSequence()
			assert.False(t, ok)
		})
	}
	// PostgreSQL's physical order is evidence where InnoDB's is not.
	pg := base(EnginePostgres, "integer")
	pg.KeyCorrelation = f64(0.3)
	_, ok := pg.localSequence()
	assert.False(t, ok)
	my := base(EngineMySQL, "int(11)")
	my.KeyCorrelation = f64(0.3)
	_, ok = my.localSequence()
	assert.True(t, ok)

	// The same dense table keeps its key on both engines, in one wording.
	var lines []string
	for _, engine := range []string{EnginePostgres, EngineMySQL} {
		tab := base(engine, "integer")
		k := tab.tableKey(Need{}, "")
		require.True(t, k.Keep, engine)
		lines = append(lines, k.Line)
	}
	assert.Equal(t, lines[0], lines[1])
	assert.Equal(t, "keep your key aid (integer, dense: 1..100,000 for about 100,000 rows): a local sequence (integers numbered in insert order on one server), "+
		"as the counter the figures are measured against, in 4 bytes; change it only for a need it fails (fleet, unguessable, sortable), for which the schemes below rank", lines[0])
}

func TestReuseNote(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "each of the loads' 1,000 rows takes a sampled row of its own, in that order", reuseNote(1000, 1000, "created_at"))
	assert.Equal(t, "the loads' 2,000 rows pass through the sample once, in that order, each sampled row filling up to 2 rows in a row; "+
		"created_at takes values between the row's own and the next sampled row's, so that it stays ascending and distinct as the application's does", reuseNote(1000, 2000, "created_at"))
}
