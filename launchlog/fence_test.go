package launchlog

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/testkit/testwait"
	idstore "github.com/idkit/idkit/store"
)

// TestFencedWrites takes a key twice past the OS locks: the first hold's
// writes fail with ErrNodeLost from then on, naming the second holder,
// while the second's go through; the marks keep only what the holders
// wrote while they held the key.
func TestFencedWrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "idkit.db")
	ctx := context.Background()
	at := func(s int64) time.Time { return time.Unix(s, 0).UTC() }
	a, err := NewWithoutOSLocks(Options{Path: path})
	require.NoError(t, err)
	b, err := NewWithoutOSLocks(Options{Path: path})
	require.NoError(t, err)

	first, err := a.Hold(ctx, "traceid/node/7")
	require.NoError(t, err)
	got, err := first.AdvanceHighWater(ctx, "traceid/node/7", at(100))
	require.NoError(t, err)
	assert.Equal(t, at(100), got)
	_, err = first.AdvanceHighWater(ctx, "traceid/node/8", at(100))
	assert.ErrorIs(t, err, ErrInvalid, "a key the hold does not cover")

	second, err := b.Hold(ctx, "traceid/node/7")
	require.NoError(t, err, "without the OS locks a second hold takes the key")
	mark, err := second.HighWater(ctx, "traceid/node/7")
	require.NoError(t, err)
	assert.Equal(t, at(100), mark, "the new holder reads the marks after it took the key")

	for name, write := range map[string]func() error{
		"the mark": func() error {
			_, err := first.AdvanceHighWater(ctx, "traceid/node/7", at(200))
			return err
		},
		"a key below it": func() error {
			_, err := first.AdvanceHighWater(ctx, "traceid/node/7/last", at(200))
			return err
		},
		"several marks": func() error {
			_, err := first.(idstore.BatchAdvancer).AdvanceHighWaters(ctx, []idstore.Mark{{Key: "traceid/node/7", At: at(200)}, {Key: "traceid/node/7/last", At: at(201)}})
			return err
		},
	} {
		err := write()
		require.Error(t, err, name)
		assert.ErrorIs(t, err, ErrNodeLost, name)
		assert.ErrorIs(t, err, idkit.ErrNodeLost, name)
		assert.NotErrorIs(t, err, idkit.ErrUnavailable, "%s: not retryable", name)
		assert.ErrorContains(t, err, "traceid/node/7 in "+path+" was taken over by this process (pid ", name)
		assert.ErrorContains(t, err, "(hold 2; this one is hold 1)", name)
	}
	got, err = second.AdvanceHighWater(ctx, "traceid/node/7", at(150))
	require.NoError(t, err)
	assert.Equal(t, at(150), got)
	mark, err = a.HighWater(ctx, "traceid/node/7")
	require.NoError(t, err)
	assert.Equal(t, at(150), mark, "no write of the first holder after the second took the key")
	last, err := a.HighWater(ctx, "traceid/node/7/last")
	require.NoError(t, err)
	assert.True(t, last.IsZero(), "nor below it")

	require.NoError(t, second.Close())
	_, err = second.AdvanceHighWater(ctx, "traceid/node/7", at(300))
	assert.ErrorIs(t, err, ErrNodeLost, "a write after Close")
	assert.ErrorContains(t, err, "the hold is released")
	require.NoError(t, first.Close())
}

// TestHoldFollowsTheFile holds a key through one name of the log: another
// name of the same file (a hard link) is refused, naming the holder; once
// the hold ends, it is free. A copy of the file is refused whatever is
// asked of it: it is not the file the log was last written through.
func TestHoldFollowsTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "idkit.db")
	ctx := context.Background()
	l, err := New(Options{Path: path})
	require.NoError(t, err)
	h, err := l.Hold(ctx, "traceid/node/7")
	require.NoError(t, err)

	link := filepath.Join(t.TempDir(), "other.db")
	require.NoError(t, os.Link(path, link))
	linked, err := New(Options{Path: link})
	require.NoError(t, err)
	_, err = linked.Hold(ctx, "traceid/node/7")
	var held *HeldError
	require.ErrorAs(t, err, &held, "a hard link")
	assert.Equal(t, os.Getpid(), held.Holder.PID)
	assert.Equal(t, "traceid/node/7", held.Holder.Key)
	assert.ErrorContains(t, err, "traceid/node/7 in "+link+" is held by this process (pid ")
	free, err := linked.Hold(ctx, "traceid/node/8")
	require.NoError(t, err, "another key is free")
	require.NoError(t, free.Close())

	copied := filepath.Join(dir, "copy.db")
	copyFile(t, path, copied)
	copy, err := New(Options{Path: copied})
	require.NoError(t, err)
	for _, key := range []string{"traceid/node/7", "traceid/node/8"} {
		_, err = copy.Hold(ctx, key)
		var displaced *DisplacedError
		require.ErrorAs(t, err, &displaced, "a copy, %s", key)
		assert.Equal(t, Moved, displaced.Why)
		assert.ErrorIs(t, err, idkit.ErrRefused)
		assert.ErrorContains(t, err, copied+" is not the file this log was last written through")
	}
	_, err = copy.NextGenerator(ctx, 1)
	assert.ErrorIs(t, err, ErrDisplaced, "a generator id from a copy")

	require.NoError(t, h.Close())
	again, err := linked.Hold(ctx, "traceid/node/7")
	require.NoError(t, err, "through the hard link once the hold ended")
	require.NoError(t, again.Close())
}

// TestHoldLostWithItsFile replaces the held file (a restore moved over it)
// and removes it: the hold finds itself lost without a write (Check, Done),
// its writes fail with ErrNodeLost and write no new file, and this
// process writes the log no more through the file now at the path.
func TestHoldLostWithItsFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, how := range []string{"replaced", "removed"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "idkit.db")
			l, err := New(Options{Path: path})
			require.NoError(t, err)
			h, err := l.Hold(ctx, "k")
			require.NoError(t, err)
			_, err = h.AdvanceHighWater(ctx, "k", time.Unix(100, 0))
			require.NoError(t, err)
			lost := h.(idstore.Revocable)
			require.NoError(t, lost.Check(time.Time{}), "a hold in place")
			if how == "replaced" {
				copyFile(t, path, path+".restore")
				require.NoError(t, os.Rename(path+".restore", path))
			} else {
				require.NoError(t, os.Remove(path))
			}
			testwait.Recv(t, lost.Done(), "sign that the hold found its file "+how+" without a write")
			err = lost.Check(time.Time{})
			assert.ErrorIs(t, err, ErrNodeLost)
			assert.ErrorIs(t, err, idkit.ErrNodeLost)
			assert.ErrorContains(t, err, "the log file was "+how+" under the hold")
			_, err = h.AdvanceHighWater(ctx, "k", time.Unix(200, 0))
			assert.ErrorIs(t, err, ErrNodeLost)
			_, err = h.HighWater(ctx, "k")
			assert.ErrorIs(t, err, ErrNodeLost, "a read too")
			if how == "removed" {
				assert.NoFileExists(t, path, "the hold made no new file")
			}
			require.NoError(t, h.Close())
			// Nor does this process write through the file at the path
			// now: it may still issue from what the old one handed it.
			_, err = l.NextGenerator(ctx, 1)
			var displaced *DisplacedError
			require.ErrorAs(t, err, &displaced, "a write to the file that took the old one's place")
			assert.Equal(t, Replaced, displaced.Why)
		})
	}
}

// TestHoldRecordSurvivesDamage: a hold record whose bytes are damaged
// fails the next hold with ErrCorrupt, not with a fresh token.
func TestHoldRecordSurvivesDamage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "idkit.db")
	l, err := New(Options{Path: path})
	require.NoError(t, err)
	h, err := l.Hold(context.Background(), "k")
	require.NoError(t, err)
	require.NoError(t, h.Close())
	require.NoError(t, l.update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(holdsBucket)
		v := append([]byte(nil), b.Get([]byte("k"))...)
		v[3] ^= 1 // the token, under its checksum
		return b.Put([]byte("k"), v)
	}))
	_, err = l.Hold(context.Background(), "k")
	assert.ErrorIs(t, err, ErrCorrupt)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
}
