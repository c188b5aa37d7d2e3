package segmenttest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testwait"

	"github.com/stretchr/testify/assert"

	"github.com/idkit/idkit/segment"
)

// The checks of the harness must catch what they are for; the stores'
// tests only ever show them passing.
func TestChecks(t *testing.T) {
	t.Parallel()
	assert.NoError(t, increasing(nil))
	assert.NoError(t, increasing([]int64{1, 2, 5, 1 << 62}))
	assert.ErrorContains(t, increasing([]int64{1, 3, 3}), "ID 2 is 3 after 3")
	assert.ErrorContains(t, increasing([]int64{5, 4}), "ID 1 is 4 after 5")
	assert.ErrorContains(t, increasing([]int64{0}), "ID 0 is 0, want a positive ID")
	assert.ErrorContains(t, increasing([]int64{-7, 1}), "want a positive ID")

	assert.NoError(t, distinct([][]int64{{1, 3}, {2, 4}, nil}))
	assert.ErrorContains(t, distinct([][]int64{{1, 3}, {2, 3}}), "ID 3 issued twice")
	assert.ErrorContains(t, distinct([][]int64{{7}, {1}, {7}}), "ID 7 issued twice")
}

func TestRecorder(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	r.blocks = append(r.blocks, segment.Block{First: 10, Last: 19}, segment.Block{First: 40, Last: 40})
	for _, tt := range []struct {
		id   int64
		want bool
	}{{9, false}, {10, true}, {19, true}, {20, false}, {40, true}, {41, false}} {
		assert.Equal(t, tt.want, r.holds(segment.ID(tt.id)), "ID %d", tt.id)
	}
}

// blockingStore returns a block once release is closed.
type blockingStore struct{ entered, release chan struct{} }

func (s blockingStore) ReserveBlock(context.Context, string, int64) (segment.Block, error) {
	s.entered <- struct{}{}
	<-s.release
	return segment.Block{First: 1, Last: 10}, nil
}

// TestProgress: the progress file tells a reservation in flight from
// none, as the kill loops read it after a kill.
func TestProgress(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "progress")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	defer f.Close()
	c := &child{progress: path}
	assert.False(t, c.reserving(t), "before any reservation")

	s := blockingStore{entered: make(chan struct{}), release: make(chan struct{})}
	p := &progressStore{BlockStore: s, f: f}
	done := make(chan error)
	go func() {
		_, err := p.ReserveBlock(context.Background(), "t", 10)
		done <- err
	}()
	testwait.Recv(t, s.entered, "the reservation to start")
	assert.True(t, c.reserving(t), "during a reservation")
	close(s.release)
	require.NoError(t, testwait.Recv(t, done, "the reservation to return"))
	assert.False(t, c.reserving(t), "after it returned")
}
