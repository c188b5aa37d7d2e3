package engine

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestChooseTimeColumn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cands []TimeCandidate
		want  string
		why   string
	}{
		{[]TimeCandidate{{"updated_at", true}, {"created_at", false}}, "created_at", "its name says when the row was made"},
		{[]TimeCandidate{{"shipped_at", true}, {"ts", true}, {"day", false}}, "ts", "an index leads with it"},
		{[]TimeCandidate{{"day", false}, {"ts", false}}, "day", "the table's first date or timestamp column"},
		{[]TimeCandidate{{"inserted", true}, {"created_at", true}}, "inserted", "its name says when the row was made and an index leads with it"},
		{[]TimeCandidate{{"updated_at", true}, {"birth_date", false}, {"expires_at", true}}, "", ""},
		{[]TimeCandidate{{"last_updated", true}, {"appended_at", false}}, "appended_at", "the table's first date or timestamp column"},
		{nil, "", ""},
	} {
		got, why := ChooseTimeColumn(tt.cands)
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
		got, ok := RankCorrelation(tt.x, tt.y)
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
	rows := func() []SampledRow[string] {
		return []SampledRow[string]{
			{Row: "a", Key: 3, At: 100, Physical: 2},
			{Row: "b", Key: 1, At: nan, Physical: 0},
			{Row: "c", Key: 2, At: 50, Physical: 3},
			{Row: "d", Key: 4, At: 50, Physical: 1},
		}
	}
	order := func(rs []SampledRow[string]) string {
		var b strings.Builder
		for _, r := range rs {
			b.WriteString(r.Row)
		}
		return b.String()
	}
	r := rows()
	o := OrderSample(r, "id", true, "created_at", "why", false)
	assert.Equal(t, "bcad", order(r))
	assert.Equal(t, "key", o.By)
	assert.Equal(t, "created_at", o.Time, "a sequence keeps its time column for the rows a sampled row fills")
	assert.Contains(t, o.Note, "the order of the key id, a local sequence")

	r = rows()
	o = OrderSample(r, "id", false, "created_at", "its name says when the row was made", false)
	assert.Equal(t, "bdca", order(r), "by time, the NULL first, the tie at 50 in physical order")
	assert.Equal(t, "time", o.By)
	assert.Contains(t, o.Note, "in the order of created_at (its name says when the row was made)")

	r = rows()
	o = OrderSample(r, "id", false, "", "", false)
	assert.Equal(t, "bdac", order(r))
	assert.Equal(t, "physical", o.By)
	assert.Contains(t, o.Note, "physical order")

	r = rows()
	o = OrderSample(r, "id", false, "", "", true)
	assert.Contains(t, o.Note, "which on InnoDB is the key's")
}

func TestReuseNote(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "each of the loads' 1,000 rows takes a sampled row of its own, in that order", ReuseNote(1000, 1000, "created_at"))
	assert.Equal(t, "the loads' 2,000 rows pass through the sample once, in that order, each sampled row filling up to 2 rows in a row; "+
		"created_at takes values between the row's own and the next sampled row's, so that it stays ascending and distinct as the application's does", ReuseNote(1000, 2000, "created_at"))
}
