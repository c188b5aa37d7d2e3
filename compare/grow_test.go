package compare

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGrowSizes: powers of ten from 10,000 up to the largest size, which
// is always the last; sizes out of range are refused with the range.
func TestGrowSizes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		max  int
		want []int
	}{
		{10_000, []int{10_000}},
		{100_000, []int{10_000, 100_000}},
		{250_000, []int{10_000, 100_000, 250_000}},
		{DefaultGrowN, []int{10_000, 100_000, 1_000_000, 10_000_000}},
	} {
		got, err := GrowSizes(tt.max)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, "max %d", tt.max)
	}
	for _, bad := range []int{0, 9_999, MaxN + 1} {
		_, err := GrowSizes(bad)
		require.ErrorIs(t, err, ErrOptions)
		assert.Contains(t, err.Error(), "want 10000..=50000000")
	}
	_, err := GrowContext(t.Context(), Options{}, []int{20_000, 10_000})
	require.ErrorIs(t, err, ErrOptions)
}

// TestGrowOnPostgres runs the counter and uuidv4 at 5,000 and 50,000 keys
// on PostgreSQL. The counter's pages dirtied per 1,000 inserts stay flat
// as its table grows, while uuidv4's climb with the leaves its keys
// scatter over; at 50,000 they agree with a single run at that N (the
// counter within 5%, uuidv4 within 15%). The text and the JSON carry
// every size.
func TestGrowOnPostgres(t *testing.T) {
	t.Parallel()
	skipUnderRace(t)
	o := engineOptions(t, engine.Postgres)
	o.Writers = 1
	var err error
	o.Schemes, err = scheme.Select("counter,uuidv4")
	require.NoError(t, err)
	var progress bytes.Buffer
	o.Progress = &progress
	sizes := []int{5_000, 50_000}
	g, err := GrowContext(t.Context(), o, sizes)
	require.NoError(t, err)
	require.Len(t, g.Reports, 2)
	const key = "pages_dirtied_per_1000"
	at := func(r *report.Report, scheme int) float64 {
		v, ok := report.GrowValue(r, scheme, engine.Postgres, key)
		require.True(t, ok)
		return v
	}
	for i, n := range sizes {
		assert.Equal(t, n, g.Reports[i].Config.N)
	}
	const counter, uuid = 0, 1
	c0, c1 := at(g.Reports[0], counter), at(g.Reports[1], counter)
	u0, u1 := at(g.Reports[0], uuid), at(g.Reports[1], uuid)
	t.Logf("pages dirtied per 1,000: counter %.1f -> %.1f, uuidv4 %.1f -> %.1f", c0, c1, u0, u1)
	assert.InEpsilon(t, c0, c1, 0.2, "the counter's cost does not grow with its table")
	assert.Greater(t, u1, 1.5*u0, "uuidv4's cost grows with its table")
	assert.Greater(t, u1, 3*c1)

	o.N, o.Progress = 50_000, nil
	single, err := Run(o)
	require.NoError(t, err)
	t.Logf("single run at 50,000: counter %.1f, uuidv4 %.1f", at(single, counter), at(single, uuid))
	// The server serves every test at once, and a page this load dirtied
	// that another session's CHECKPOINT or the background writer cleans
	// counts again when it is changed again. uuidv4 changes most leaves
	// in each interval: two CHECKPOINT loops beside this test moved it
	// by 2%, and a run of the whole CI step by 5.5%. The counter changes
	// one leaf and moved by less than 1%.
	for s, within := range []float64{counter: 0.05, uuid: 0.15} {
		assert.InEpsilon(t, at(single, s), at(g.Reports[1], s), within, "%s: the growth run at 50,000 and a single run agree", single.Schemes[s].Name)
	}

	ranked := slices.Equal(report.RankedNames(g.Reports[0].Verdict), report.RankedNames(g.Reports[1].Verdict))
	assert.Equal(t, !ranked, g.RankingChanges)

	var text bytes.Buffer
	require.NoError(t, g.WriteTable(&text))
	assert.Contains(t, text.String(), "run: N = 5,000, 50,000 keys")
	assert.Contains(t, text.String(), "GROWTH IN POSTGRES — pages dirtied per 1,000 inserts, 1 writer(s)")
	assert.Regexp(t, `(?m)^\s+uuidv4\s+\d+\s+\d+\s*$`, text.String())
	assert.Contains(t, text.String(), "VERDICT AT EACH N")
	assert.Contains(t, progress.String(), "grow: N = 50,000 (2 of 2); the rest needs about")

	var js bytes.Buffer
	require.NoError(t, g.WriteJSON(&js))
	var back struct {
		Sizes   []int `json:"sizes"`
		Reports []struct {
			Config report.Config `json:"config"`
		} `json:"reports"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	assert.Equal(t, sizes, back.Sizes)
	require.Len(t, back.Reports, 2)
	assert.Equal(t, 50_000, back.Reports[1].Config.N)
}
