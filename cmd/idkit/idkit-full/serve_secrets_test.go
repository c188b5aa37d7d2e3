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

// TestMemoryLimit: in a cgroup v2 with memory.max set, the Go memory
// limit is 90% of it; without a cap ("max"), without cgroup v2, or with
// GOMEMLIMIT set, there is none.
func TestMemoryLimit(t *testing.T) {
	t.Parallel()
	files := func(cgroup, max string) func(string) ([]byte, error) {
		return func(name string) ([]byte, error) {
			switch name {
			case "/proc/self/cgroup":
				return []byte(cgroup), nil
			case "/sys/fs/cgroup/system.slice/idkit.service/memory.max":
				if max != "" {
					return []byte(max), nil
				}
			}
			return nil, os.ErrNotExist
		}
	}
	unset := func(string) string { return "" }
	const unit = "0::/system.slice/idkit.service\n"
	limit, ok := memoryLimit(unset, files(unit, "536870912\n"))
	require.True(t, ok)
	assert.Equal(t, int64(536870912/10*9), limit)

	for name, tt := range map[string]struct {
		getenv   func(string) string
		readFile func(string) ([]byte, error)
	}{
		"no cap":        {unset, files(unit, "max\n")},
		"cgroup v1":     {unset, files("12:memory:/system.slice/idkit.service\n", "536870912\n")},
		"no memory.max": {unset, files(unit, "")},
		"GOMEMLIMIT":    {func(k string) string { return map[string]string{"GOMEMLIMIT": "200MiB"}[k] }, files(unit, "536870912\n")},
	} {
		_, ok := memoryLimit(tt.getenv, tt.readFile)
		assert.False(t, ok, name)
	}
}
