package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecretWarnings: a token file or TLS key that its group or other
// users may read gets a warning that names the flag, the file, its mode
// and the fix; one that only its owner reads, or none given, gets none.
func TestSecretWarnings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte("secret\n"), 0o600))
		require.NoError(t, os.Chmod(path, mode))
		return path
	}
	tokens, key := write("tokens", 0o660), write("tls.key", 0o600)
	got := secretWarnings(map[string]string{"--token-file": tokens, "--tls-key": key})
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "--token-file "+tokens+" has mode 0660")
	assert.Contains(t, got[0], "chmod 600 "+tokens)

	world := write("tls-world.key", 0o604)
	got = secretWarnings(map[string]string{"--token-file": "", "--tls-key": world})
	require.Len(t, got, 1)
	assert.Contains(t, got[0], "--tls-key "+world+" has mode 0604")

	assert.Empty(t, secretWarnings(map[string]string{"--token-file": key, "--tls-key": filepath.Join(dir, "missing")}))
}
