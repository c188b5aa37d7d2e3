package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/publicid"
)

func TestNewFlake128(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	code, stdout, stderr := clitest.RunOn(f, time.Millisecond, "new", "flake128", "--worker", "42", "-n", "3")
	require.Equal(t, 0, code, stderr)
	lines := strings.Fields(stdout)
	require.Len(t, lines, 3)
	var prev flake128.ID
	for i, line := range lines {
		id, err := flake128.Parse(line)
		require.NoError(t, err)
		assert.Equal(t, uint64(42), id.Worker())
		assert.Equal(t, uint16(i), id.Sequence())
		assert.Equal(t, 1, id.Compare(prev))
		prev = id
	}

	code, stdout, stderr = clitest.RunOn(f, time.Millisecond, "new", "flake128", "--worker", "42", "--hex")
	require.Equal(t, 0, code, stderr)
	assert.Len(t, strings.TrimSpace(stdout), 32)
}

// Calls with a launch log continue after each other, also when the clock
// is stepped back in between.
func TestNewFlake128WithLog(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "idkit.db")
	f := clock.NewFake(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	var last flake128.ID
	for call := range 3 {
		if call == 2 {
			f.Advance(-5 * time.Second)
		}
		code, stdout, stderr := clitest.RunOn(f, time.Millisecond, "new", "flake128", "--worker", "7", "--log", log, "-n", "2")
		require.Equal(t, 0, code, stderr)
		for _, line := range strings.Fields(stdout) {
			id := flake128.MustParse(line)
			require.Equal(t, 1, id.Compare(last), "call %d: %v after %v", call, id, last)
			last = id
		}
	}
}

func TestInspectFlake128(t *testing.T) {
	t.Parallel()
	got := clitest.InspectJSON(t, "flake128", "8HFaR8qWtRlGDHnO57")
	assert.Equal(t, map[string]any{
		"scheme": "flake128", "id": "8HFaR8qWtRlGDHnO57", "time": "2012-01-12T22:56:53.776Z",
		"milliseconds": float64(1326409013776), "worker": float64(0x109add5e0e8f), "mac": "10:9a:dd:5e:0e:8f",
		"sequence": float64(5), "hex": "00000134d4235a10109add5e0e8f0005",
	}, got)
	assert.Equal(t, got, clitest.InspectJSON(t, "flake128", "00000134d4235a10109add5e0e8f0005"), "the hex form reads the same")

	code, _, stderr := clitest.Run("inspect", "flake128", "8HFaR8qWtRlGDHnO5_")
	assert.Equal(t, 2, code)
	clitest.AssertOneLine(t, stderr, nil)
	assert.Contains(t, stderr, "flake128: invalid syntax")
}

func writeKeys(t *testing.T, keys ...publicid.Key) string {
	t.Helper()
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k.KeyLine() + "\n")
	}
	path := filepath.Join(t.TempDir(), "keys.txt")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

func TestPublicID(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := clitest.Run("publicid", "keygen", "--id", "9")
	require.Equal(t, 0, code, stderr)
	keys, err := publicid.ParseKeys([]byte(stdout))
	require.NoError(t, err)
	require.Len(t, keys, 1)
	assert.Equal(t, 9, keys[0].ID)

	oldKey, err := publicid.NewKey(1)
	require.NoError(t, err)
	oldFile := writeKeys(t, oldKey)
	code, stdout, stderr = clitest.Run("publicid", "encode", "--key-file", oldFile, "4649612572545253377", "1")
	require.Equal(t, 0, code, stderr)
	public := strings.Fields(stdout)
	require.Len(t, public, 2)
	for _, p := range public {
		assert.Len(t, p, 14)
		assert.Equal(t, byte('1'), p[0])
		assert.Contains(t, "89ABCDEF", p[1:2], "FF1's construction mark")
	}

	// After a rotation the new key encodes and the old one still decodes.
	newKey, err := publicid.NewKey(2)
	require.NoError(t, err)
	rotated := writeKeys(t, newKey, oldKey)
	code, stdout, stderr = clitest.RunIn(strings.ToLower(public[0])+"\n\n"+public[1]+"\n", "publicid", "decode", "--key-file", rotated)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "4649612572545253377\n1\n", stdout)

	retired := writeKeys(t, newKey)
	code, _, stderr = clitest.Run("publicid", "decode", "--key-file", retired, public[0])
	assert.Equal(t, 1, code, "an unknown key is not a usage error")
	assert.Contains(t, stderr, "publicid: unknown key")

	// A public ID made before FF1 (construction 0: second character 0 to
	// 7) fails as such, not as a wrong ID.
	code, stdout, stderr = clitest.Run("publicid", "decode", "--key-file", oldFile, "10"+public[0][2:])
	assert.Equal(t, 1, code, "another construction is not a usage error")
	assert.Empty(t, stdout)
	clitest.AssertOneLine(t, stderr, nil)
	assert.Contains(t, stderr, "publicid: unknown construction")
	assert.Contains(t, stderr, "before FF1")

	code, stdout, stderr = clitest.Run("publicid", "encode", "--key-file", oldFile, "--domain", "53", "--number", "5")
	require.Equal(t, 0, code, stderr)
	code, back, stderr := clitest.Run("publicid", "decode", "--key-file", rotated, "--domain", "53", "--number", "--key-id", "1", strings.TrimSpace(stdout))
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "5\n", back)

	for _, args := range [][]string{
		{"publicid"},
		{"publicid", "rotate"},
		{"publicid", "encode", "1"},
		{"publicid", "encode", "--key-file", oldFile, "--domain", "64", "1"},
		{"publicid", "encode", "--key-file", oldFile, "0"},
		{"publicid", "encode", "--key-file", oldFile, "x"},
		{"publicid", "decode", "--key-file", oldFile, "1ABC"},
		{"publicid", "encode", "--key-file", oldFile, "--key-id", "1", "5"},
		{"publicid", "keygen", "--id", "32"},
	} {
		code, _, stderr := clitest.Run(args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		clitest.AssertOneLine(t, stderr, args)
	}
	require.NoError(t, os.Chmod(oldFile, 0o644))
	code, stdout, stderr = clitest.Run("publicid", "encode", "--key-file", oldFile, "1")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, public[1]+"\n", stdout)
	assert.Contains(t, stderr, "is readable by others (mode 0644)")

	code, _, stderr = clitest.Run("publicid", "encode", "--key-file", filepath.Join(t.TempDir(), "none"), "1")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "key file")
}

func init() {
	roundTrips["flake128"] = func(t *testing.T) {
		from := time.Now()
		ids := clitest.NewIDs(t, "flake128", "--worker", "281474976710655", "-n", "3")
		to := time.Now().Add(20 * time.Millisecond) // a run starts up to MaxLead after the clock
		require.Len(t, ids, 3)
		for _, id := range ids {
			got := clitest.InspectJSON(t, "flake128", id)
			assert.Equal(t, id, got["id"])
			assert.Equal(t, "ff:ff:ff:ff:ff:ff", got["mac"])
			assertWithin(t, timeField(t, got), from, to, time.Millisecond)
		}
	}
}
