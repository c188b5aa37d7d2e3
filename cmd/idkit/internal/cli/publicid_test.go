package cli_test

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/publicid"
)

var keyLine = regexp.MustCompile(`^[0-9A-Z] [0-9a-f]{32}$`)

func TestPublicIDKeygenStdout(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := clitest.Run("publicid", "keygen", "--id", "12")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	assert.Regexp(t, `^C [0-9a-f]{32}\n$`, stdout, "one key line, as the key file holds it")
}

func TestPublicIDKeygenOut(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.txt")
	code, stdout, stderr := clitest.Run("publicid", "keygen", "--id", "3", "--out", path)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout, "the key goes to the file only")
	assert.Empty(t, stderr)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	first, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Regexp(t, `^3 [0-9a-f]{32}\n$`, string(first))

	// A second key is appended; the first stays, and stays first.
	code, stdout, stderr = clitest.Run("publicid", "keygen", "--out", path, "--id", "4")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout)
	both, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(both), len(first))
	assert.Equal(t, string(first), string(both[:len(first)]))
	assert.Regexp(t, keyLine, string(both[len(first):len(both)-1]))
	keys, err := publicid.ParseKeys(both)
	require.NoError(t, err)
	require.Len(t, keys, 2)
	assert.Equal(t, 3, keys[0].ID)
	assert.Equal(t, 4, keys[1].ID)
	assert.NotEqual(t, keys[0].Secret, keys[1].Secret)
	st, err = os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// The file is a working key file: no warning about its mode.
	code, stdout, stderr = clitest.Run("publicid", "encode", "--key-file", path, "1")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	assert.Regexp(t, `^3[89A-F][0-9A-Z]{12}\n$`, stdout)
}

func TestPublicIDKeygenOutRefusesOpenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, mode := range []os.FileMode{0o644, 0o660, 0o602, 0o640} {
		path := filepath.Join(dir, "keys-"+mode.String()+".txt")
		k, err := publicid.NewKey(1)
		require.NoError(t, err)
		before := []byte(k.KeyLine() + "\n")
		require.NoError(t, os.WriteFile(path, before, 0o600))
		require.NoError(t, os.Chmod(path, mode))

		code, stdout, stderr := clitest.Run("publicid", "keygen", "--id", "2", "--out", path)
		assert.Equal(t, 1, code, "mode %v: %s", mode, stderr)
		assert.Empty(t, stdout, "mode %v: no key printed instead", mode)
		clitest.AssertOneLine(t, stderr, nil)
		assert.Contains(t, stderr, path)
		assert.Contains(t, stderr, fmt.Sprintf("(mode %04o)", mode))
		if mode&0o002 != 0 {
			assert.Contains(t, stderr, "chmod o-w "+path, "a file every user may write is refused on open")
		} else {
			assert.Contains(t, stderr, "chmod 600 "+path)
		}

		after, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after), "mode %v: the file is left unchanged", mode)
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Equal(t, mode, st.Mode().Perm(), "its mode too")
	}
}

// TestPublicIDKeyFileErrorsHideSecret checks that a bad key file fails
// with the file, the line and what is wrong, and not the secret on it.
func TestPublicIDKeyFileErrorsHideSecret(t *testing.T) {
	t.Parallel()
	k, err := publicid.NewKey(5)
	require.NoError(t, err)
	secret := hex.EncodeToString(k.Secret)
	for _, tt := range []struct {
		line, want string
	}{
		{secret + " 5", "key file line 2: the columns look swapped"},
		{"5 " + secret[:6] + "xy" + secret[8:], "key file line 2: secret is not hexadecimal"},
		{"5 " + secret[:30], "key file line 2: secret of 30 hexadecimal digits"},
		{"U " + secret, `key file line 2: key id "U"`},
	} {
		path := filepath.Join(t.TempDir(), "keys.txt")
		require.NoError(t, os.WriteFile(path, []byte("# keys\n"+tt.line+"\n"), 0o600))
		for _, action := range []string{"encode", "decode"} {
			code, stdout, stderr := clitest.Run("publicid", action, "--key-file", path, "1")
			assert.Equal(t, 1, code, "%s: %s", tt.want, stderr)
			assert.Empty(t, stdout)
			clitest.AssertOneLine(t, stderr, nil)
			assert.Contains(t, stderr, path)
			assert.Contains(t, stderr, tt.want)
			for i := 0; i+8 <= len(secret); i++ {
				if !assert.NotContains(t, stderr, secret[i:i+8], "%s: the error shows the secret", tt.want) {
					break
				}
			}
		}
	}
}

// A key file stays usable: keygen refuses a key id the file holds, naming
// its line, and --first rotates to a new key while the old one still
// decodes what it made.
func TestPublicIDKeyRotation(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keys.txt")
	code, _, stderr := clitest.Run("publicid", "keygen", "--id", "1", "--out", path)
	require.Equal(t, 0, code, stderr)
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	code, _, stderr = clitest.Run("publicid", "keygen", "--id", "1", "--out", path)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "already holds key id 1, on line 1, so no key was added to it")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the file is unchanged")

	code, old, stderr := clitest.Run("publicid", "encode", "--key-file", path, "4649612572545253377")
	require.Equal(t, 0, code, stderr)
	old = strings.TrimSpace(old)
	assert.True(t, strings.HasPrefix(old, "1"), "key 1 encodes: %s", old)

	code, _, stderr = clitest.Run("publicid", "keygen", "--id", "2", "--out", path, "--first")
	require.Equal(t, 0, code, stderr)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the rewritten file stays private")
	code, rotated, stderr := clitest.Run("publicid", "encode", "--key-file", path, "4649612572545253377")
	require.Equal(t, 0, code, stderr)
	rotated = strings.TrimSpace(rotated)
	assert.True(t, strings.HasPrefix(rotated, "2"), "key 2 encodes after the rotation: %s", rotated)
	code, stdout, stderr := clitest.Run("publicid", "decode", "--key-file", path, old, rotated)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "4649612572545253377\n4649612572545253377\n", stdout, "both decode")

	code, _, stderr = clitest.Run("publicid", "keygen", "--id", "3", "--first")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--first applies to --out FILE only")

	// A file with two lines of one key id, as an older keygen could make.
	dup := filepath.Join(t.TempDir(), "dup.txt")
	require.NoError(t, os.WriteFile(dup, append(after, after...), 0o600))
	code, _, stderr = clitest.Run("publicid", "decode", "--key-file", dup, old)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "key file lines 1 and 2 both hold key id 1")
}

// TestPublicIDKeyFileNotALink: keygen --out never writes through a
// symbolic link, a dangling one included; encode reads through a link only
// of this user or root, and refuses a key file that every user may write.
func TestPublicIDKeyFileNotALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys.txt")
	code, _, stderr := clitest.Run("publicid", "keygen", "--id", "1", "--out", keys)
	require.Equal(t, 0, code, stderr)
	link := filepath.Join(dir, "link.txt")
	require.NoError(t, os.Symlink(keys, link))
	dangling := filepath.Join(dir, "dangling.txt")
	require.NoError(t, os.Symlink(filepath.Join(dir, "elsewhere.txt"), dangling))

	for _, path := range []string{link, dangling} {
		code, _, stderr = clitest.Run("publicid", "keygen", "--id", "2", "--out", path)
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, path+" is a symbolic link; name the file itself")
	}
	assert.NoFileExists(t, filepath.Join(dir, "elsewhere.txt"))
	code, _, stderr = clitest.Run("publicid", "encode", "--key-file", link, "4649612572545253377")
	assert.Equal(t, 0, code, "a link of this user: %s", stderr)

	if os.Geteuid() == 0 { // changing a link's owner takes root
		require.NoError(t, os.Lchown(link, 65534, 65534))
		code, _, stderr = clitest.Run("publicid", "encode", "--key-file", link, "4649612572545253377")
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, link+" is a symbolic link owned by uid 65534")
	}

	require.NoError(t, os.Chmod(keys, 0o666))
	code, _, stderr = clitest.Run("publicid", "encode", "--key-file", keys, "4649612572545253377")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "is writable by every user")
}
