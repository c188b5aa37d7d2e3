package cli_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
)

func TestNoArgumentsListsCommands(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := clitest.Run()
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "Commands:")
}

func TestHelpListsEverySchemeAndPreset(t *testing.T) {
	t.Parallel()
	_, newHelp, _ := clitest.Run("help", "new")
	_, inspectHelp, _ := clitest.Run("help", "inspect")
	for _, name := range cli.SchemeNames() {
		assert.Contains(t, newHelp, name)
		assert.Contains(t, inspectHelp, name)
	}
	for _, name := range cli.SnowflakeFieldNames() {
		assert.Contains(t, newHelp, "--"+name)
	}
	assert.Contains(t, newHelp, "twitter, discord, shardingsphere")
	assert.Contains(t, inspectHelp, "twitter, discord, shardingsphere")
}
