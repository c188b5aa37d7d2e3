package flake128_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/launchlog"
)

// TestOneHolderPerWorker: a Generator on a launch log holds its worker
// until Close; another Generator for the worker meanwhile fails with
// idkit.ErrHeld, naming the holder.
func TestOneHolderPerWorker(t *testing.T) {
	t.Parallel()
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(t.TempDir(), "idkit.db")})
	require.NoError(t, err)
	o := flake128.Options{Worker: 7, Store: log}
	g, err := flake128.New(context.Background(), o)
	require.NoError(t, err)
	_, err = flake128.New(context.Background(), o)
	assert.ErrorIs(t, err, idkit.ErrHeld, "a second Generator")
	assert.NotErrorIs(t, err, flake128.ErrStore)
	assert.ErrorContains(t, err, "flake128: worker 000000000007: launchlog: flake128/000000000007 in ")

	g8, err := flake128.New(context.Background(), flake128.Options{Worker: 8, Store: log})
	require.NoError(t, err, "worker 8 is free")
	require.NoError(t, g8.Close())

	require.NoError(t, g.Close())
	g, err = flake128.New(context.Background(), o)
	require.NoError(t, err, "free once the Generator is closed")
	id, err := g.Next()
	require.NoError(t, err)
	assert.Equal(t, uint64(7), id.Worker())
	require.NoError(t, g.Close())
}
