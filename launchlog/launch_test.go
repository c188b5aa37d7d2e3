package launchlog

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/idkit/idkit/clock"
	idstore "github.com/idkit/idkit/store"
)

// TestBeginNeverEarlier begins launches on two handles whose clocks
// disagree, as two hosts' processes would: a launch never records an
// earlier start than the launch before it.
func TestBeginNeverEarlier(t *testing.T) {
	t.Parallel()
	ahead := clock.NewFake(epoch)
	l := newLogOn(t, ahead)
	behind := clock.NewFake(epoch.Add(-time.Hour))
	l2, err := New(Options{Path: l.path, Clock: behind})
	require.NoError(t, err)

	first, err := l.Begin(context.Background(), idstore.Info{Note: "first"})
	require.NoError(t, err)
	assert.Equal(t, epoch, first.StartedAt)

	second, err := l2.Begin(context.Background(), idstore.Info{Note: "clock an hour behind"})
	require.NoError(t, err)
	assert.Equal(t, 2, second.ID)
	assert.Equal(t, first.StartedAt, second.StartedAt, "StartedAt went back")

	ahead.Set(epoch.Add(-time.Nanosecond))
	third, err := l.Begin(context.Background(), idstore.Info{Note: "clock stepped back"})
	require.NoError(t, err)
	assert.Equal(t, first.StartedAt, third.StartedAt, "StartedAt went back")

	behind.Set(epoch.Add(time.Minute))
	fourth, err := l2.Begin(context.Background(), idstore.Info{Note: "clock ahead again"})
	require.NoError(t, err)
	assert.Equal(t, epoch.Add(time.Minute), fourth.StartedAt)

	list, err := l.List(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 4)
	for i := 1; i < len(list); i++ {
		assert.False(t, list[i].StartedAt.Before(list[i-1].StartedAt), "launch %d starts before launch %d", list[i].ID, list[i-1].ID)
	}
	assert.Equal(t, time.UTC, list[1].StartedAt.Location())
}

// TestBeginDamagedPrevious checks that Begin reads the previous launch to
// stamp the next one, and so reports a damaged record instead of
// recording a launch after it.
func TestBeginDamagedPrevious(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	_, err := l.Begin(context.Background(), idstore.Info{})
	require.NoError(t, err)
	require.NoError(t, l.update(func(tx *bbolt.Tx) error {
		return tx.Bucket(launchesBucket).Put(idKey(1), []byte(`{"id":1,"started_at":"yesterday"}`))
	}))
	_, err = l.Begin(context.Background(), idstore.Info{})
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "launch 1")
}

func newLogOn(t *testing.T, c clock.Clock) *Log {
	t.Helper()
	l, err := New(Options{Path: filepath.Join(t.TempDir(), "launch.db"), Clock: c})
	require.NoError(t, err)
	return l
}
