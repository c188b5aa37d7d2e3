package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
)

// TestCopiesUsedOneAfterAnother bakes a launch log into two copies, as an
// image does, and uses them one after the other: each is refused until a
// person adopts it; adopted as moved, the first serves; the second is
// still refused, after the first has ended too; no ID repeats.
func TestCopiesUsedOneAfterAnother(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	origin := filepath.Join(dir, "idkit.db")
	clitest.OK(t, clitest.Exec(t, "launch", "begin", "--log", origin))
	seen := clitest.NewIDSet()
	seen.Add("the origin's traceid", clitest.OK(t, clitest.Exec(t, "new", "traceid", "--node", "4", "--log", origin, "-n", "100000")))
	seen.Add("the origin's decimalid", clitest.OK(t, clitest.Exec(t, "new", "decimalid", "--log", origin, "-n", "1000")))
	b, err := os.ReadFile(origin)
	require.NoError(t, err)
	first, second := filepath.Join(t.TempDir(), "idkit.db"), filepath.Join(t.TempDir(), "idkit.db")
	require.NoError(t, os.WriteFile(first, b, 0o600))
	require.NoError(t, os.WriteFile(second, b, 0o600))
	require.NoError(t, os.Remove(origin)) // the image's build is gone

	for _, path := range []string{first, second} {
		clitest.AssertDisplaced(t, clitest.Exec(t, "new", "traceid", "--node", "4", "--log", path, "-n", "100000"), path, "traceid from a baked copy")
		clitest.AssertDisplaced(t, clitest.Exec(t, "new", "decimalid", "--log", path, "-n", "1000"), path, "decimalid from a baked copy")
	}
	out := clitest.OK(t, clitest.Exec(t, "launch", "adopt", "--log", first, "--moved", "--by", "ops"))
	assert.Regexp(t, `^adopted +`+regexp.QuoteMeta(first)+` \(moved\)\nwas +inode \d+ on an? .*\nnow +inode \d+ on `, out)
	seen.Add("the first copy's traceid", clitest.OK(t, clitest.Exec(t, "new", "traceid", "--node", "4", "--log", first, "-n", "100000")))
	seen.Add("the first copy's decimalid", clitest.OK(t, clitest.Exec(t, "new", "decimalid", "--log", first, "-n", "1000")))
	clitest.AssertDisplaced(t, clitest.Exec(t, "new", "traceid", "--node", "4", "--log", second, "-n", "100000"), second, "the second copy after the first")
	clitest.AssertDisplaced(t, clitest.Exec(t, "launch", "begin", "--log", second), second, "a launch from the second copy")
	assert.Empty(t, seen.Repeats, "IDs issued twice")
	assert.Len(t, seen.By, 2*100000+2*1000)
}
