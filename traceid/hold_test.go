package traceid_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/traceid"
)

// TestOneHolderPerNode: a Generator on a launch log holds its node from
// New to Close, and a Reserve call for the length of the call. Another
// Generator or Reserve for the node meanwhile fails with idkit.ErrHeld,
// naming the holder; another node is free.
func TestOneHolderPerNode(t *testing.T) {
	t.Parallel()
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(t.TempDir(), "idkit.db")})
	require.NoError(t, err)
	f := clock.NewFake(reserveT0)
	o := traceid.Options{Node: 7, Store: log, Clock: f}
	ctx := context.Background()

	g, err := traceid.New(context.Background(), o)
	require.NoError(t, err)
	_, err = traceid.New(context.Background(), o)
	assert.ErrorIs(t, err, idkit.ErrHeld, "a second Generator")
	assert.NotErrorIs(t, err, traceid.ErrStore, "not a store failure, which is retryable")
	assert.ErrorContains(t, err, "traceid: node 7: launchlog: traceid/node/7 in ")
	assert.ErrorContains(t, err, "is held by this process")
	err = traceid.Reserve(ctx, o, make([]traceid.ID, 1))
	assert.ErrorIs(t, err, idkit.ErrHeld, "Reserve beside the Generator")

	o8 := o
	o8.Node = 8
	g8, err := traceid.New(context.Background(), o8)
	require.NoError(t, err, "node 8 is free")
	require.NoError(t, g8.Close())

	require.NoError(t, g.Close())
	reserve(t, o, 3) // the node is free once the Generator is closed

	// A Reserve call holds the node while it waits: here for the next
	// second, which a node's first call on a log waits for.
	fresh, err := launchlog.New(launchlog.Options{Path: filepath.Join(t.TempDir(), "idkit.db")})
	require.NoError(t, err)
	o.Store = fresh
	done := make(chan error, 1)
	go func() { done <- traceid.Reserve(ctx, o, make([]traceid.ID, 3)) }()
	testwait.Sleepers(t, f, 1)
	_, err = traceid.New(context.Background(), o)
	assert.ErrorIs(t, err, idkit.ErrHeld, "a Generator beside a Reserve call in progress")
	err = traceid.Reserve(ctx, o, make([]traceid.ID, 1))
	assert.ErrorIs(t, err, idkit.ErrHeld, "two Reserve calls at once")
	wake, ok := f.NextWake()
	require.True(t, ok)
	f.Set(wake)
	require.NoError(t, testwait.Recv(t, done, "the waiting Reserve call"))
	g, err = traceid.New(context.Background(), o)
	require.NoError(t, err, "free once the call returned")
	require.NoError(t, g.Close())
}
