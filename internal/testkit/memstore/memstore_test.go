package memstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMarksOnlyMoveForward(t *testing.T) {
	t.Parallel()
	var s Store
	t0 := time.Unix(1_800_000_000, 0)
	mark, err := s.HighWater(context.Background(), "k")
	require.NoError(t, err)
	assert.True(t, mark.IsZero())

	mark, err = s.AdvanceHighWater(context.Background(), "k", t0)
	require.NoError(t, err)
	assert.Equal(t, t0, mark)
	mark, err = s.AdvanceHighWater(context.Background(), "k", t0.Add(-time.Hour))
	require.NoError(t, err)
	assert.Equal(t, t0, mark, "never backwards")
	mark, err = s.HighWater(context.Background(), "other")
	require.NoError(t, err)
	assert.True(t, mark.IsZero(), "keys are independent")

	boom := errors.New("boom")
	s.Fail(boom)
	_, err = s.AdvanceHighWater(context.Background(), "k", t0.Add(time.Hour))
	assert.ErrorIs(t, err, boom)
	s.Fail(nil)
	mark, err = s.HighWater(context.Background(), "k")
	require.NoError(t, err)
	assert.Equal(t, t0, mark, "a failed advance changes nothing")
	assert.Equal(t, 6, s.Calls())
}
