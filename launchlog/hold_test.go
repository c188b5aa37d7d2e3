package launchlog

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testwait"
	idstore "github.com/idkit/idkit/store"
)

func TestHoldRefusesASecondHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "idkit.db")
	since := time.Date(2026, 6, 1, 17, 2, 11, 0, time.UTC)
	first, err := New(Options{Path: path, Clock: clock.NewFake(since)})
	require.NoError(t, err)
	second, err := New(Options{Path: path})
	require.NoError(t, err)
	ctx := context.Background()

	h, err := first.Hold(ctx, "traceid/node/7")
	require.NoError(t, err)
	for _, l := range []*Log{first, second} { // another handle, or the same one
		_, err = l.Hold(ctx, "traceid/node/7")
		require.Error(t, err, "a second hold of the key")
		assert.ErrorIs(t, err, ErrHeld)
		assert.ErrorIs(t, err, idkit.ErrHeld)
		assert.NotErrorIs(t, err, idkit.ErrUnavailable, "not retryable")
		var held *HeldError
		require.ErrorAs(t, err, &held)
		assert.Equal(t, os.Getpid(), held.Holder.PID)
		assert.Equal(t, "traceid/node/7", held.Holder.Key)
		assert.Equal(t, filepath.Base(os.Args[0]), held.Holder.Command)
		assert.True(t, since.Equal(held.Holder.Since), "since %v, want %v", held.Holder.Since, since)
		assert.Contains(t, err.Error(), "traceid/node/7 in "+path+" is held by this process (pid ")
	}

	other, err := second.Hold(ctx, "traceid/node/8")
	require.NoError(t, err, "another key is free")
	require.NoError(t, other.Close())

	require.NoError(t, h.Close())
	require.NoError(t, h.Close(), "a second Close does nothing")
	again, err := second.Hold(ctx, "traceid/node/7")
	require.NoError(t, err, "a released key is free")
	require.NoError(t, again.Close())
}

func TestHoldWait(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "idkit.db")
	l, err := New(Options{Path: path})
	require.NoError(t, err)
	h, err := l.Hold(context.Background(), "k")
	require.NoError(t, err)

	// A wait that ends with the key still held.
	waiter, err := New(Options{Path: path, HoldWait: 30 * time.Millisecond})
	require.NoError(t, err)
	_, err = waiter.Hold(context.Background(), "k")
	var held *HeldError
	require.ErrorAs(t, err, &held)
	assert.Equal(t, 30*time.Millisecond, held.Waited)
	assert.Contains(t, err.Error(), ", still after 30ms")

	// A wait that ctx ends.
	patient, err := New(Options{Path: path, HoldWait: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = patient.Hold(ctx, "k")
	assert.ErrorIs(t, err, context.Canceled)

	// A wait that the holder's release ends.
	got := make(chan error, 1)
	go func() {
		h2, err := patient.Hold(context.Background(), "k")
		if err == nil {
			err = h2.Close()
		}
		got <- err
	}()
	require.NoError(t, h.Close())
	require.NoError(t, testwait.Recv(t, got, "the waiting Hold once the key is released"))

	_, err = New(Options{Path: path, HoldWait: -time.Second})
	assert.ErrorIs(t, err, ErrInvalid, "a negative HoldWait")
}

// TestHoldDiesWithItsProcess holds a key in another process: a hold here
// fails naming it, and takes the key at once after the process is killed.
func TestHoldDiesWithItsProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "idkit.db")
	cmd := helper("hold-key", path, 0)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
	}()
	require.Equal(t, "held\n", testwait.Recv(t, line, "the helper's hold"))

	l, err := New(Options{Path: path})
	require.NoError(t, err)
	_, err = l.Hold(context.Background(), "node/7")
	var held *HeldError
	require.ErrorAs(t, err, &held)
	assert.Equal(t, cmd.Process.Pid, held.Holder.PID, "the holder named")
	assert.Equal(t, filepath.Base(os.Args[0]), held.Holder.Command)

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	h, err := l.Hold(context.Background(), "node/7")
	require.NoError(t, err, "a killed holder frees the key at once")
	require.NoError(t, h.Close())
}

// TestHoldReleasedWhileACopyLives releases a hold whose descriptor a
// child process holds a copy of, as a child that this process starts does
// between its fork and its exec: the key is free at once all the same.
func TestHoldReleasedWhileACopyLives(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "idkit.db")
	l, err := New(Options{Path: path})
	require.NoError(t, err)
	h, err := l.Hold(context.Background(), "node/7")
	require.NoError(t, err)

	cmd := helper("wait", path, 0)
	cmd.ExtraFiles = []*os.File{h.(*hold).file} // the child's fd 3 shares the open file
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
	}()
	require.Equal(t, "waiting\n", testwait.Recv(t, line, "the child's start"))

	require.NoError(t, h.Close())
	again, err := l.Hold(context.Background(), "node/7")
	require.NoError(t, err, "the key is free while the child keeps its copy of the descriptor")
	require.NoError(t, again.Close())
}

func TestHoldErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := New(Options{Path: filepath.Join(dir, "missing", "idkit.db")})
	require.NoError(t, err)
	_, err = l.Hold(context.Background(), "k")
	assert.ErrorIs(t, err, ErrOpen, "a missing directory")
	assert.ErrorIs(t, err, os.ErrNotExist)

	l, err = New(Options{Path: filepath.Join(dir, "idkit.db")})
	require.NoError(t, err)
	_, err = l.Hold(context.Background(), "")
	assert.ErrorIs(t, err, ErrInvalid, "an empty key")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = l.Hold(ctx, "k")
	assert.ErrorIs(t, err, context.Canceled)

	// A directory in the place of the log.
	require.NoError(t, os.Mkdir(filepath.Join(dir, "other.db"), 0o700))
	l, err = New(Options{Path: filepath.Join(dir, "other.db")})
	require.NoError(t, err)
	_, err = l.Hold(context.Background(), "k")
	assert.ErrorIs(t, err, ErrOpen)
}

func TestHoldRefusesANetworkFileSystem(t *testing.T) {
	t.Parallel()
	for typ, network := range map[string]bool{
		"ext4": false, "xfs": false, "tmpfs": false, "overlay": false, "btrfs": false, "fuse.gocryptfs": false, "": false,
		"nfs": true, "nfs4": true, "cifs": true, "smb3": true, "ceph": true, "fuse.sshfs": true, "fuse.glusterfs": true,
	} {
		assert.Equal(t, network, isNetworkFS(typ), "%q", typ)
	}

	const mountinfo = `22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
35 22 0:31 / /mnt/share rw,relatime shared:20 - nfs4 server:/export rw,vers=4.2
41 22 0:45 / /home/me/remote rw,nosuid,nodev shared:25 - fuse.sshfs me@host:/ rw,user_id=0
`
	for id, want := range map[uint64]string{22: "ext4", 35: "nfs4", 41: "fuse.sshfs"} {
		got, ok := mountType([]byte(mountinfo), id)
		assert.True(t, ok, "mount %d", id)
		assert.Equal(t, want, got, "mount %d", id)
	}
	_, ok := mountType([]byte(mountinfo), 99)
	assert.False(t, ok, "an unknown mount id")

	typ, err := fsType(t.TempDir())
	require.NoError(t, err)
	assert.False(t, isNetworkFS(typ), "the test's own directory is on %q", typ)
	assert.NoError(t, checkLocalFS(filepath.Join(t.TempDir(), "idkit.db")))
}

// TestLogRefusesALink: a launch log named through a symbolic link, or a
// dangling one, is refused with ErrInvalid, saying so, and nothing is
// created at the link's target; so is a launch log that every user may
// write.
func TestLogRefusesALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "real.db")
	l, err := New(Options{Path: real})
	require.NoError(t, err)
	_, err = l.Begin(context.Background(), idstore.Info{})
	require.NoError(t, err)

	link := filepath.Join(dir, "link.db")
	require.NoError(t, os.Symlink(real, link))
	dangling := filepath.Join(dir, "dangling.db")
	require.NoError(t, os.Symlink(filepath.Join(dir, "elsewhere.db"), dangling))
	for _, path := range []string{link, dangling} {
		l, err := New(Options{Path: path})
		require.NoError(t, err)
		_, err = l.Begin(context.Background(), idstore.Info{})
		assert.ErrorIs(t, err, ErrInvalid, path)
		assert.ErrorContains(t, err, path+" is a symbolic link; name the file itself")
	}
	assert.NoFileExists(t, filepath.Join(dir, "elsewhere.db"), "a dangling link's target is not created")

	require.NoError(t, os.Chmod(real, 0o666))
	_, err = l.Current(context.Background())
	assert.ErrorIs(t, err, ErrInvalid)
	assert.ErrorContains(t, err, "is writable by every user")
}
