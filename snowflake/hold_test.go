package snowflake_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/snowflake"
)

// TestOneHolderPerNode: a Generator on a launch log holds its node until
// Close; another Generator or a Reserve call for the node meanwhile fails
// with idkit.ErrHeld, naming the holder, while another node is free.
func TestOneHolderPerNode(t *testing.T) {
	t.Parallel()
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(t.TempDir(), "idkit.db")})
	require.NoError(t, err)
	o := snowflake.Options{Node: map[string]int64{"worker": 7}, Store: log, Clock: clock.NewFake(reserveT0)}

	g, err := snowflake.New(context.Background(), o)
	require.NoError(t, err)
	_, err = snowflake.New(context.Background(), o)
	assert.ErrorIs(t, err, idkit.ErrHeld, "a second Generator")
	assert.NotErrorIs(t, err, snowflake.ErrStore)
	assert.ErrorContains(t, err, "snowflake: launchlog: snowflake/twitter/datacenter=0,worker=7 in ")
	err = snowflake.Reserve(context.Background(), o, make([]snowflake.ID, 1))
	assert.ErrorIs(t, err, idkit.ErrHeld, "Reserve beside the Generator")

	o8 := o
	o8.Node = map[string]int64{"worker": 8}
	g8, err := snowflake.New(context.Background(), o8)
	require.NoError(t, err, "worker 8 is free")
	require.NoError(t, g8.Close())

	require.NoError(t, g.Close())
	reserveIDs(t, o, 3) // free once the Generator is closed
}
