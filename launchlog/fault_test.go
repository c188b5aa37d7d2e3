//go:build unix

package launchlog

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
)

// TestFaultRecovered reads a memory map past the end of its file, as bbolt
// would on a file shorter than its pages claim: the fault (SIGBUS) becomes
// ErrCorrupt instead of killing the process.
func TestFaultRecovered(t *testing.T) {
	t.Parallel()
	short := filepath.Join(t.TempDir(), "short")
	require.NoError(t, os.WriteFile(short, []byte("x"), 0o600))
	f, err := os.Open(short)
	require.NoError(t, err)
	defer f.Close()
	page := os.Getpagesize()
	mem, err := syscall.Mmap(int(f.Fd()), 0, 4*page, syscall.PROT_READ, syscall.MAP_SHARED)
	require.NoError(t, err)
	defer func() { _ = syscall.Munmap(mem) }()

	l := newLog(t)
	_, err = l.NextGenerator(context.Background(), 1) // create the file, so that view opens it
	require.NoError(t, err)
	var b byte
	err = l.view(func(*bbolt.Tx) error {
		b = mem[2*page] // beyond the file's one byte
		return nil
	})
	assert.ErrorIs(t, err, ErrCorrupt)
	assert.ErrorContains(t, err, "panic while reading it")
	assert.Zero(t, b)
}
