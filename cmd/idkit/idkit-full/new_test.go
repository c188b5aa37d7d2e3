package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/compare"
)

// TestSchemeAliases: the names of earlier releases, uuid4 and uuid7, are
// taken by new, inspect and compare alike, for the schemes now called
// uuidv4 and uuidv7.
func TestSchemeAliases(t *testing.T) {
	t.Parallel()
	for alias, name := range map[string]string{"uuid4": "uuidv4", "uuid7": "uuidv7"} {
		for _, spelling := range []string{alias, name} {
			ids := clitest.NewIDs(t, spelling, "-n", "1")
			got := clitest.InspectJSON(t, spelling, ids[0])
			assert.Equal(t, name, got["scheme"], "inspect %s", spelling)
			s, err := compare.Lookup(spelling)
			require.NoError(t, err, "compare --schemes %s", spelling)
			assert.Equal(t, name, s.Name)
		}
	}
}
