package compare

import (
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLocalityDirection checks only facts that follow from how a B+tree
// takes ordered and random keys, and so hold on any machine: at N =
// 100,000, random UUIDs write several times the pages of a counter, while
// the counter splits more often at bbolt's default fill and fills its
// leaves to the fill setting.
func TestLocalityDirection(t *testing.T) {
	skipUnderRace(t)
	t.Parallel()
	const n = 100_000
	schemes, err := scheme.Select("counter,uuidv4")
	require.NoError(t, err)
	r, err := Run(Options{N: n, Writers: 1, Schemes: schemes, SpeedTime: time.Millisecond, Dir: t.TempDir()})
	require.NoError(t, err)
	counter, uuid := r.Schemes[0].Runs[0], r.Schemes[1].Runs[0]
	require.Len(t, counter.Loads, 2)
	require.Len(t, uuid.Loads, 2)

	for i, fill := range DefaultFills {
		c, u := counter.Loads[i], uuid.Loads[i]
		t.Logf("fill %g: pages written counter %d, uuidv4 %d (%.1fx); splits %d vs %d; leaf fill %.2f vs %.2f",
			fill, c.PagesWritten, u.PagesWritten, float64(u.PagesWritten)/float64(c.PagesWritten), c.Splits, u.Splits, c.LeafFill, u.LeafFill)
		assert.Greater(t, u.PagesWritten, 3*c.PagesWritten, "fill %g: uuidv4 writes > 3x the counter's pages", fill)
		assert.Equal(t, n, c.Keys)
		assert.Equal(t, n, u.Keys)
	}
	// At bbolt's default fill a sequential load splits more often than a
	// random one, yet writes far fewer pages: split counts alone mislead.
	assert.Greater(t, counter.Loads[0].Splits, uuid.Loads[0].Splits)
	// At a high fill setting the counter packs its pages; random keys
	// split pages 90/10 and leave them emptier.
	assert.Greater(t, uuid.Loads[1].DataBytes, 2*counter.Loads[1].DataBytes)
	// Appending fills each page to the fill setting and leaves it.
	assert.InDelta(t, 0.5, counter.Loads[0].LeafFill, 0.05)
	assert.InDelta(t, 0.9, counter.Loads[1].LeafFill, 0.05)
	// Random inserts leave leaves about ln 2 full at the default fill.
	assert.InDelta(t, 0.69, uuid.Loads[0].LeafFill, 0.05)

	assert.Equal(t, 1.0, counter.Order.Appends)
	assert.Zero(t, counter.Order.Inversions)
	assert.Less(t, uuid.Order.Appends, 0.001)
	assert.InDelta(t, 0.5, uuid.Order.InversionFraction, 0.01)
	assert.Equal(t, 1.0, counter.Size.PackedBytesPerID)
	assert.Greater(t, uuid.Size.PackedBytesPerID, 15.0)
}
