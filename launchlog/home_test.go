package launchlog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	idstore "github.com/idkit/idkit/store"
)

// TestBackupWrittenBackInPlace takes a backup of a log, uses the log on,
// and writes the backup back over the same file: the log tells by the
// stamp on the file, refuses every write, cannot be adopted as moved nor
// as restored without the counters it cannot know, and once adopted with
// them hands out nothing the lost writes handed out.
func TestBackupWrittenBackInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idkit.db")
	clk := clock.NewFake(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	l, err := New(Options{Path: path, Clock: clk})
	require.NoError(t, err)
	launch, err := l.Begin(ctx, idstore.Info{})
	require.NoError(t, err)
	for range 3 {
		_, err = l.NextGenerator(ctx, launch.ID)
		require.NoError(t, err)
	}
	_, err = l.ReserveBlock(ctx, "orders", 100)
	require.NoError(t, err)
	_, err = l.AdvanceHighWater(ctx, "traceid/node/1", clk.Now())
	require.NoError(t, err)
	backup, err := os.ReadFile(path)
	require.NoError(t, err)

	// After the backup: launch 2, generator ids 3 and 4 of launch 1,
	// orders up to 300, a mark a minute on.
	_, err = l.Begin(ctx, idstore.Info{})
	require.NoError(t, err)
	for range 2 {
		_, err = l.NextGenerator(ctx, launch.ID)
		require.NoError(t, err)
	}
	for range 2 {
		_, err = l.ReserveBlock(ctx, "orders", 100)
		require.NoError(t, err)
	}
	_, err = l.AdvanceHighWater(ctx, "traceid/node/1", clk.Now().Add(time.Minute))
	require.NoError(t, err)

	before, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, backup, 0o600)) // in place: the same inode
	after, err := os.Stat(path)
	require.NoError(t, err)
	require.True(t, os.SameFile(before, after), "the backup went back into the same file")

	_, err = l.NextGenerator(ctx, launch.ID)
	var displaced *DisplacedError
	require.ErrorAs(t, err, &displaced)
	assert.Equal(t, RolledBack, displaced.Why)
	assert.Equal(t, uint64(6), displaced.Lost, "the writes since the backup")
	assert.ErrorIs(t, err, idkit.ErrRefused)
	assert.ErrorContains(t, err, "was written back in place from an older copy (its contents are 6 writes older than the file)")
	assert.ErrorContains(t, err, "idkit launch adopt --log "+path+" --restored")

	_, err = l.Adopt(ctx, AdoptOptions{Moved: true})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "cannot be adopted as moved")
	_, err = l.Adopt(ctx, AdoptOptions{})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, `the last launch id (it holds launches up to 1; --launch N), the largest ID of segment tag "orders" (--block orders=ID)`, "every counter missing, in one message")

	a, err := l.Adopt(ctx, AdoptOptions{Counters: Counters{Launch: 2, Blocks: map[string]int64{"orders": 300}}, By: "ops"})
	require.NoError(t, err)
	assert.Equal(t, "rolled back", a.Why)
	assert.Equal(t, []int{1}, a.Ended, "launch 1's generator ids, which the data cannot tell")
	assert.Equal(t, 2, a.Advanced.Launch)
	assert.Equal(t, int64(300), a.Advanced.Blocks["orders"])
	assert.True(t, a.Advanced.Marks.Equal(clk.Now().Add(DefaultAdoptMargin)), "marks moved to now + the margin: %v", a.Advanced.Marks)

	next, err := l.Begin(ctx, idstore.Info{})
	require.NoError(t, err)
	assert.Equal(t, 3, next.ID, "a launch after every one handed out")
	_, err = l.NextGenerator(ctx, launch.ID)
	assert.ErrorIs(t, err, ErrGeneratorsExhausted, "a launch the restore cannot vouch for is ended")
	g, err := l.NextGenerator(ctx, next.ID)
	require.NoError(t, err)
	assert.Equal(t, 0, g)
	b, err := l.ReserveBlock(ctx, "orders", 100)
	require.NoError(t, err)
	assert.Greater(t, b.First, int64(300))
	mark, err := l.HighWater(ctx, "traceid/node/1")
	require.NoError(t, err)
	assert.True(t, mark.Equal(clk.Now().Add(DefaultAdoptMargin)))
}

// TestLogEmptiedInPlace empties a log's file in place (the same inode)
// once the process that wrote it has ended: the stamp names the old log,
// and the new one made in the file is refused.
func TestLogEmptiedInPlace(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "idkit.db")
	require.NoError(t, helper("next", path, 1).Run())
	require.NoError(t, os.Truncate(path, 0))

	l, err := New(Options{Path: path})
	require.NoError(t, err)
	_, err = l.NextGenerator(context.Background(), 1)
	var displaced *DisplacedError
	require.ErrorAs(t, err, &displaced)
	assert.Equal(t, RolledBack, displaced.Why)
	assert.ErrorContains(t, err, "its contents are another log's")
}

// TestFirstWriteCutShort: a crash during a new log's first write leaves
// the file stamped as begun by an identity its contents never got; the
// log made in the file again serves. A stamp that saw a write commit
// over contents without an identity is still a log emptied in place.
func TestFirstWriteCutShort(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		committed uint64
		refused   bool
	}{{0, false}, {1, true}} {
		path := filepath.Join(t.TempDir(), "idkit.db")
		f, err := os.Create(path)
		require.NoError(t, err)
		err = writeStamp(f, stamp{ID: []byte("0123456789abcdef"), Committed: tt.committed, Begun: tt.committed + 1})
		require.NoError(t, f.Close())
		if errors.Is(err, errNoStamp) {
			t.Skip("the temporary directory's file system keeps no extended attributes")
		}
		require.NoError(t, err)

		l, err := New(Options{Path: path})
		require.NoError(t, err)
		_, err = l.NextGenerator(context.Background(), 1)
		if tt.refused {
			var displaced *DisplacedError
			require.ErrorAs(t, err, &displaced, "a stamp with %d writes committed", tt.committed)
			assert.Equal(t, RolledBack, displaced.Why)
		} else {
			require.NoError(t, err, "a stamp whose first write never committed")
			_, err = l.NextGenerator(context.Background(), 1)
			require.NoError(t, err, "the next write")
		}
	}
}

// TestMovedOnOneFileSystem renames a log within its file system: it is
// the same file, and serves without an adoption.
func TestMovedOnOneFileSystem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "idkit.db")
	l, err := New(Options{Path: path})
	require.NoError(t, err)
	_, err = l.NextGenerator(ctx, 1)
	require.NoError(t, err)
	moved := filepath.Join(dir, "moved.db")
	require.NoError(t, os.Rename(path, moved))
	m, err := New(Options{Path: moved})
	require.NoError(t, err)
	g, err := m.NextGenerator(ctx, 1)
	require.NoError(t, err, "a log moved with mv on one file system")
	assert.Equal(t, 1, g)
	_, err = m.Adopt(ctx, AdoptOptions{Moved: true})
	assert.ErrorIs(t, err, ErrInvalid, "nothing to adopt")
}

// TestAdoptErrors: bad options and a missing log are refused before the
// file is touched.
func TestAdoptErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "idkit.db")
	l, err := New(Options{Path: path})
	require.NoError(t, err)
	_, err = l.Adopt(ctx, AdoptOptions{Moved: true})
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "no log to adopt")
	assert.NoFileExists(t, path)
	_, err = l.Adopt(ctx, AdoptOptions{Margin: -time.Second})
	assert.ErrorContains(t, err, "AdoptOptions.Margin = -1s, want 0 (for 10s) to 24h")
	_, err = l.Adopt(ctx, AdoptOptions{Moved: true, Counters: Counters{Launch: 3}})
	assert.ErrorContains(t, err, "AdoptOptions.Moved with Counters")
	_, err = l.Adopt(ctx, AdoptOptions{Counters: Counters{Launch: -1}})
	assert.ErrorContains(t, err, "Counters.Launch = -1")
}
