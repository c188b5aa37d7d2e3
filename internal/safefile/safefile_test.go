//go:build unix

package safefile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/safefile"
)

func TestOpenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "keys.txt")
	require.NoError(t, os.WriteFile(plain, []byte("k\n"), 0o600))
	b, err := safefile.ReadFile(plain)
	require.NoError(t, err, "a file of this user")
	assert.Equal(t, "k\n", string(b))

	link := filepath.Join(dir, "link.txt")
	require.NoError(t, os.Symlink(plain, link))
	_, err = safefile.ReadFile(link)
	assert.ErrorIs(t, err, safefile.ErrUnsafe)
	assert.ErrorContains(t, err, link+" is a symbolic link; name the file itself")

	dangling := filepath.Join(dir, "dangling.db")
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere.db"), dangling))
	_, err = safefile.OpenFile(dangling, os.O_RDWR|os.O_CREATE, 0o600)
	assert.ErrorIs(t, err, safefile.ErrUnsafe, "a dangling link is not followed to create its target")
	assert.NoFileExists(t, filepath.Join(dir, "nowhere.db"))

	open := filepath.Join(dir, "open.txt")
	require.NoError(t, os.WriteFile(open, nil, 0o600))
	require.NoError(t, os.Chmod(open, 0o666))
	_, err = safefile.ReadFile(open)
	assert.ErrorIs(t, err, safefile.ErrUnsafe)
	assert.ErrorContains(t, err, open+" is writable by every user (mode 0666); chmod o-w "+open)

	_, err = safefile.ReadFile(dir)
	assert.ErrorIs(t, err, safefile.ErrUnsafe, "a directory")

	_, err = safefile.ReadFile(filepath.Join(dir, "missing.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.NotErrorIs(t, err, safefile.ErrUnsafe)
}

// A file that another user owns is refused; the test changes a file's
// owner, which takes root.
func TestOpenFileOwner(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner takes root")
	}
	theirs := filepath.Join(t.TempDir(), "token.txt")
	require.NoError(t, os.WriteFile(theirs, []byte("t\n"), 0o600))
	require.NoError(t, os.Chown(theirs, 65534, 65534))
	_, err := safefile.ReadFile(theirs)
	assert.ErrorIs(t, err, safefile.ErrUnsafe)
	assert.ErrorContains(t, err, "is owned by uid 65534, not by this process's user (uid 0) or root")
}
