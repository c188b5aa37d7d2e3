package scheme_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idkit/idkit/compare"
	"github.com/idkit/idkit/compare/internal/scheme"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSegmentRows runs every segment row of the environment through
// compare: each issues unique keys, a single writer's keys all append,
// K writers' interleave by block, and the figures are filled in.
func TestSegmentRows(t *testing.T) {
	t.Parallel()
	schemes := scheme.SegmentScratch(t)
	const n, writers = 4000, 3
	r, err := compare.Run(compare.Options{
		N: n, Writers: writers, Schemes: schemes, BatchSize: 500, Fills: []float64{0.9},
		SpeedTime: time.Millisecond, Dir: t.TempDir(), NoSQLite: true,
	})
	require.NoError(t, err)
	require.Len(t, r.Schemes, len(schemes))
	for _, s := range r.Schemes {
		t.Run(s.Name, func(t *testing.T) {
			assert.Equal(t, scheme.Ours, s.Kind)
			assert.Positive(t, s.Speed.NsPerID)
			assert.Positive(t, s.Speed.ParallelNsPerID)
			require.Len(t, s.Runs, 2)
			one, k := s.Runs[0], s.Runs[1]
			assert.Zero(t, one.Order.Duplicates)
			assert.Zero(t, k.Order.Duplicates)
			assert.Equal(t, 1.0, one.Order.Appends, "one allocator's IDs increase")
			assert.Zero(t, one.Order.Inversions)
			if s.Name == "redis-incr" {
				assert.Equal(t, 1.0, k.Order.Appends, "one counter shared by every writer")
			} else {
				assert.Less(t, k.Order.Appends, 1.0, "%d allocators interleave by block", writers)
			}
			assert.Equal(t, 8, one.Size.KeyBytes)
			// Dense IDs: n IDs from blocks of segmentStep stay below a
			// few blocks past n.
			assert.LessOrEqual(t, one.Size.MaxBits, 14, "one writer's IDs are dense")
			assert.True(t, s.Design.Ordered && s.Design.Int63)
			if strings.HasPrefix(s.Name, "segment-") && !strings.HasSuffix(s.Name, "-fixed") && !strings.HasSuffix(s.Name, "-fetch") {
				assert.Regexp(t, `1 writer\(s\): the adaptive step reached its largest, [\d,]+, at block \d+ of \d+`, s.KeysNote)
			}
			t.Logf("%s: %.0f ns/ID, %.0f ns/ID on %d goroutines", s.Name, s.Speed.NsPerID, s.Speed.ParallelNsPerID, s.Speed.Goroutines)
		})
	}
}
