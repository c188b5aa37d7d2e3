package faultfs_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/campaigns/powercut/faultfs"
)

func cut(t *testing.T, f *faultfs.FS, tear bool, r *rand.Rand) faultfs.Cut {
	t.Helper()
	c, err := f.PowerCut(tear, r)
	require.NoError(t, err)
	return c
}

func syncDir(t *testing.T, dir string) {
	t.Helper()
	d, err := os.Open(dir)
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	require.NoError(t, d.Close())
}

// TestPowerCutKeepsOnlyWhatWasSynced: a power cut keeps a file's synced
// data and its name once its directory was synced, and loses the rest:
// data written after the fsync, a size change, a file whose directory was
// never synced.
func TestPowerCutKeepsOnlyWhatWasSynced(t *testing.T) {
	f := faultfs.Mount(t)
	kept := filepath.Join(f.Dir(), "kept")
	file, err := os.Create(kept)
	require.NoError(t, err)
	_, err = file.Write([]byte("synced"))
	require.NoError(t, err)
	require.NoError(t, file.Sync())
	syncDir(t, f.Dir())
	_, err = file.WriteAt([]byte("SYNCED and more"), 0)
	require.NoError(t, err)
	require.NoError(t, file.Close())
	got, err := os.ReadFile(kept)
	require.NoError(t, err)
	assert.Equal(t, "SYNCED and more", string(got), "before the cut, a process reads what it wrote")
	fi, err := os.Stat(kept)
	require.NoError(t, err)
	assert.EqualValues(t, 15, fi.Size(), "stat sees the unsynced size")
	onDisk, err := os.ReadFile(filepath.Join(f.Backing(), "kept"))
	require.NoError(t, err)
	assert.Equal(t, "synced", string(onDisk), "the disk holds only the synced data")

	lost := filepath.Join(f.Dir(), "lost")
	require.NoError(t, os.WriteFile(lost, []byte("never synced"), 0o600))
	file, err = os.OpenFile(lost, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, file.Sync(), "the file's data is synced, its name is not")
	require.NoError(t, file.Close())

	c := cut(t, f, false, nil)
	assert.Equal(t, faultfs.Cut{Files: 1, Names: 1}, c)
	got, err = os.ReadFile(kept)
	require.NoError(t, err)
	assert.Equal(t, "synced", string(got))
	_, err = os.Stat(lost)
	assert.ErrorIs(t, err, os.ErrNotExist, "a name whose directory was not synced is lost")
}

// TestPowerCutTearsTheLastWrite: a torn write leaves whole sectors of the
// new data, never all of them, on top of the old.
func TestPowerCutTearsTheLastWrite(t *testing.T) {
	f := faultfs.Mount(t)
	path := filepath.Join(f.Dir(), "torn")
	old := bytes.Repeat([]byte{'o'}, 8*faultfs.SectorSize)
	file, err := os.Create(path)
	require.NoError(t, err)
	_, err = file.Write(old)
	require.NoError(t, err)
	require.NoError(t, file.Sync())
	require.NoError(t, file.Close())
	syncDir(t, f.Dir())

	r := rand.New(rand.NewPCG(1, 2))
	const off = 100 // not on a sector boundary: the first boundary is at 512
	seen := map[int64]bool{}
	for range 40 {
		require.NoError(t, os.WriteFile(filepath.Join(f.Backing(), "torn"), old, 0o600)) // reset the disk
		file, err := os.OpenFile(path, os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = file.WriteAt(bytes.Repeat([]byte{'n'}, 4*faultfs.SectorSize), off)
		require.NoError(t, err)
		require.NoError(t, file.Close())
		c := cut(t, f, true, r)
		require.True(t, c.Torn)
		got, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Len(t, got, len(old))
		want := bytes.Clone(old)
		copy(want[off:off+c.Kept], bytes.Repeat([]byte{'n'}, int(c.Kept)))
		require.Equal(t, string(want), string(got), "kept %d bytes", c.Kept)
		require.Contains(t, []int64{0, 512 - off, 1024 - off, 1536 - off, 2048 - off}, c.Kept, "whole sectors, not all of the write")
		seen[c.Kept] = true
	}
	assert.Len(t, seen, 5, "every tear point occurs in 40 cuts")
}

// TestFaults: each fault fails its operation with its errno until healed;
// a failed fsync drops the unsynced data, and a second fsync that
// succeeds does not bring it back.
func TestFaults(t *testing.T) {
	f := faultfs.Mount(t)
	path := filepath.Join(f.Dir(), "data")
	require.NoError(t, os.WriteFile(path, []byte("durable"), 0o600))
	file, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer file.Close()
	require.NoError(t, file.Sync())

	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		f.Inject(faultfs.Fault{On: faultfs.Write, Errno: errno})
		_, err = file.WriteAt([]byte("x"), 0)
		assert.True(t, errors.Is(err, errno), "write under %v: %v", errno, err)
		assert.True(t, errors.Is(file.Truncate(1<<20), errno), "a truncate that grows the file under %v", errno)
		f.Heal()
		_, err = file.WriteAt([]byte("D"), 0)
		assert.NoError(t, err, "after Heal")
	}

	f.Inject(faultfs.Fault{On: faultfs.Sync, Errno: syscall.EIO})
	err = file.Sync()
	assert.True(t, errors.Is(err, syscall.EIO), "fsync: %v", err)
	f.Heal()
	require.NoError(t, file.Sync(), "a retried fsync succeeds")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "durable", string(got), "the write before the failed fsync is gone")
	assert.Equal(t, 5, f.Failed(), "two writes and two truncates, one fsync")
}

func TestMain(m *testing.M) {
	faultfs.Main()
	os.Exit(m.Run())
}
