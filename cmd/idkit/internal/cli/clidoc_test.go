package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
)

// TestCLIDocCoversEveryCommand: docs/cli.md has a paragraph for every
// command that idkit help lists.
func TestCLIDocCoversEveryCommand(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "cli.md"))
	require.NoError(t, err)
	page := string(b)
	_, help, _ := clitest.Run("help")
	commands := 0
	for _, line := range strings.Split(help, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(line, "  ") {
			continue
		}
		commands++
		assert.Contains(t, page, "**`idkit "+f[0], "docs/cli.md has no paragraph for idkit %s", f[0])
	}
	assert.GreaterOrEqual(t, commands, 10, "the commands of idkit help:\n%s", help)
}
