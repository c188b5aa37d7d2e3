package bbolt

import (
	"testing"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoadBatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n, batch, commits int
	}{
		{n: 1, batch: 1000, commits: 1},
		{n: 1000, batch: 1000, commits: 1},
		{n: 1001, batch: 1000, commits: 2},
		{n: 50, batch: 7, commits: 8},
	}
	for _, tt := range tests {
		t.Run("", func(t *testing.T) {
			t.Parallel()
			k := uints(seq(1, uint64(tt.n))...)
			var done []int
			l, err := Run(k, Config{
				Dir: t.TempDir(), Fill: 0.5, Batch: tt.batch, Value: make([]byte, 10), FileLabel: "t",
				OnCommit: func(d int) { done = append(done, d) },
			})
			require.NoError(t, err)
			assert.Equal(t, tt.commits, l.Commits)
			assert.Equal(t, tt.n, l.Keys)
			require.Len(t, done, tt.commits)
			assert.Equal(t, tt.n, done[len(done)-1])
			assert.GreaterOrEqual(t, l.Depth, 1)
		})
	}
}

func TestLoadDuplicateKeys(t *testing.T) {
	t.Parallel()
	l, err := Run(uints(5, 5, 6), Config{Dir: t.TempDir(), Fill: 0.5, Batch: 10, Value: []byte{1}, FileLabel: "dup"})
	require.NoError(t, err)
	assert.Equal(t, 2, l.Keys, "a repeated key overwrites")
}

func TestLoadBadDir(t *testing.T) {
	t.Parallel()
	_, err := Run(uints(1), Config{Dir: "/nonexistent/idkit", Fill: 0.5, Batch: 10, Value: []byte{1}, FileLabel: "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "compare: open /nonexistent/idkit/x.db")
}

func uints(vs ...uint64) engine.KeySet { return engine.Uint64Keys(vs...) }

func seq(from, n uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = from + uint64(i)
	}
	return out
}
