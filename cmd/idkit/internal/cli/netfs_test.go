package cli_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/testenv"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// mountLoopback mounts a FUSE file system that passes every call through
// to a temporary directory, calling itself type "fuse.NAME" as sshfs
// does ("fuse.sshfs"), and returns its mount point. It needs /dev/fuse and
// root (it mounts with mount(2) itself); without them it skips, or fails
// under CI=true.
func mountLoopback(t *testing.T, name string) string {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		testenv.Missing(t, "FUSE needs /dev/fuse and root to mount a file system")
	}
	root, err := fs.NewLoopbackRoot(t.TempDir())
	require.NoError(t, err)
	mnt := t.TempDir()
	server, err := fs.Mount(mnt, root, &fs.Options{MountOptions: fuse.MountOptions{
		Name: name, FsName: "idkit-test", DirectMountStrict: true,
	}})
	require.NoError(t, err, "mount a FUSE file system at %s", mnt)
	t.Cleanup(func() {
		// A process that another test forks holds the mount's open files
		// from its fork to its exec, and the mount is busy meanwhile.
		var err error
		testwait.Until(t, func() bool { err = server.Unmount(); return !errors.Is(err, syscall.EBUSY) }, "the mount at "+mnt+" not busy")
		assert.NoError(t, err, "unmount %s", mnt)
	})
	return mnt
}

// TestLogOnANetworkFileSystem: a launch log on a file system that calls
// itself sshfs is refused, naming it, before any ID; on another FUSE file
// system, local as far as the host knows, the same call works.
func TestLogOnANetworkFileSystem(t *testing.T) {
	t.Parallel()
	remote := filepath.Join(mountLoopback(t, "sshfs"), "idkit.db")
	c := clitest.Exec(t, "new", "traceid", "--node", "7", "--log", remote, "-n", "3")
	assert.Equal(t, 1, c.Code, c.Stderr)
	assert.Empty(t, c.Stdout, "no ID")
	assert.Equal(t, "idkit new: traceid: node 7: launchlog: on a network file system: "+remote+
		" is on fuse.sshfs, where a file lock may not reach the other hosts that share the file, so a node could be held twice; keep the launch log on a local disk, or claim nodes in etcd\n", c.Stderr)

	local := filepath.Join(mountLoopback(t, "idkitlocal"), "idkit.db")
	c = clitest.Exec(t, "new", "traceid", "--node", "7", "--log", local, "-n", "3")
	require.Equal(t, 0, c.Code, c.Stderr)
	assert.Len(t, strings.Fields(c.Stdout), 3)
}
