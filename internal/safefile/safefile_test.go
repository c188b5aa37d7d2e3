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
	plain := filepath.Join(dir, "idkit.db")
	require.NoError(t, os.WriteFile(plain, []byte("k\n"), 0o600))
	f, err := safefile.OpenFile(plain, os.O_RDWR, 0)
	require.NoError(t, err, "a file of this user")
	require.NoError(t, f.Close())

	link := filepath.Join(dir, "link.db")
	require.NoError(t, os.Symlink(plain, link))
	_, err = safefile.OpenFile(link, os.O_RDWR, 0)
	assert.ErrorIs(t, err, safefile.ErrUnsafe)
	assert.ErrorContains(t, err, link+" is a symbolic link; name the file itself")

	dangling := filepath.Join(dir, "dangling.db")
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere.db"), dangling))
	_, err = safefile.OpenFile(dangling, os.O_RDWR|os.O_CREATE, 0o600)
	assert.ErrorIs(t, err, safefile.ErrUnsafe, "a dangling link is not followed to create its target")
	assert.NoFileExists(t, filepath.Join(dir, "nowhere.db"))

	open := filepath.Join(dir, "open.db")
	require.NoError(t, os.WriteFile(open, nil, 0o600))
	require.NoError(t, os.Chmod(open, 0o666))
	_, err = safefile.OpenFile(open, os.O_RDWR, 0)
	assert.ErrorIs(t, err, safefile.ErrUnsafe)
	assert.ErrorContains(t, err, open+" is writable by every user (mode 0666); chmod o-w "+open)

	_, err = safefile.OpenFile(dir, os.O_RDONLY, 0)
	assert.ErrorIs(t, err, safefile.ErrUnsafe, "a directory")

	_, err = safefile.OpenFile(filepath.Join(dir, "missing.db"), os.O_RDONLY, 0)
	assert.ErrorIs(t, err, os.ErrNotExist)
	assert.NotErrorIs(t, err, safefile.ErrUnsafe)
}

// ReadFile follows a link of this user or root, as a Kubernetes secret
// volume's files are (tokens -> ..data/tokens), and checks what it reaches.
func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "..data"), 0o700))
	target := filepath.Join(dir, "..data", "tokens")
	require.NoError(t, os.WriteFile(target, []byte("t\n"), 0o600))
	link := filepath.Join(dir, "tokens")
	require.NoError(t, os.Symlink(filepath.Join("..data", "tokens"), link))
	b, err := safefile.ReadFile(link)
	require.NoError(t, err, "a link of this user, as a secret volume's")
	assert.Equal(t, "t\n", string(b))

	// A secret volume's chain: the file's link through a directory's
	// link, both this user's, and a relative path with "..".
	require.NoError(t, os.Mkdir(filepath.Join(dir, "..2026_11_29"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "..2026_11_29", "ca.crt"), []byte("c\n"), 0o600))
	require.NoError(t, os.Symlink("..2026_11_29", filepath.Join(dir, "..current")))
	require.NoError(t, os.Symlink(filepath.Join("..current", "ca.crt"), filepath.Join(dir, "ca.crt")))
	b, err = safefile.ReadFile(filepath.Join(dir, "..data", "..", "ca.crt"))
	require.NoError(t, err, "a chain of this user's links")
	assert.Equal(t, "c\n", string(b))

	require.NoError(t, os.Chmod(target, 0o666))
	_, err = safefile.ReadFile(link)
	assert.ErrorContains(t, err, "is writable by every user", "what the link reaches is checked")

	_, err = safefile.ReadFile(filepath.Join(dir, "missing"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// A file or a link that another user owns is refused; the test changes
// owners, which takes root.
func TestOtherUsers(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner takes root")
	}
	dir := t.TempDir()
	theirs := filepath.Join(dir, "token.txt")
	require.NoError(t, os.WriteFile(theirs, []byte("t\n"), 0o600))
	require.NoError(t, os.Chown(theirs, 65534, 65534))
	_, err := safefile.ReadFile(theirs)
	assert.ErrorIs(t, err, safefile.ErrUnsafe)
	assert.ErrorContains(t, err, "is owned by uid 65534, not by this process's user (uid 0) or root")

	mine := filepath.Join(dir, "mine.txt")
	require.NoError(t, os.WriteFile(mine, []byte("t\n"), 0o600))
	link := filepath.Join(dir, "planted")
	require.NoError(t, os.Symlink(mine, link))
	require.NoError(t, os.Lchown(link, 65534, 65534))
	_, err = safefile.ReadFile(link)
	assert.ErrorIs(t, err, safefile.ErrUnsafe)
	assert.ErrorContains(t, err, link+" is a symbolic link owned by uid 65534")

	// A chain: this user's link to another user's link, which could point
	// anywhere; before, only the first link was checked, and the chain
	// read whatever the second pointed to.
	chain := filepath.Join(dir, "tokens")
	require.NoError(t, os.Symlink(link, chain))
	_, err = safefile.ReadFile(chain)
	assert.ErrorIs(t, err, safefile.ErrUnsafe)
	assert.ErrorContains(t, err, link+" is a symbolic link owned by uid 65534", "the link in the middle of the chain")

	// Another user's link as a directory in the path, for reading and
	// for writing.
	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(real, "idkit.db"), []byte("k\n"), 0o600))
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Symlink(real, sub))
	require.NoError(t, os.Lchown(sub, 65534, 65534))
	_, err = safefile.ReadFile(filepath.Join(sub, "idkit.db"))
	assert.ErrorContains(t, err, sub+" is a symbolic link owned by uid 65534")
	_, err = safefile.OpenFile(filepath.Join(sub, "idkit.db"), os.O_RDWR, 0)
	assert.ErrorContains(t, err, sub+" is a symbolic link owned by uid 65534")

	// The same directory link of this user is followed.
	require.NoError(t, os.Lchown(sub, 0, 0))
	b, err := safefile.ReadFile(filepath.Join(sub, "idkit.db"))
	require.NoError(t, err)
	assert.Equal(t, "k\n", string(b))
	f, err := safefile.OpenFile(filepath.Join(sub, "idkit.db"), os.O_RDWR, 0)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(sub, "idkit.db"), f.Name(), "the file keeps the name it was opened by")
	require.NoError(t, f.Close())
}
