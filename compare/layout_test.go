package compare_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLayers: compare's packages import one another downwards only, the
// top (compare) over the report, the report over the schemes and the
// engines' figures, each engine over the vocabulary they share (package
// engine), which imports none of them; an engine imports no other engine
// but MyRocks and Spider, which share InnoDB's MariaDB code.
func TestLayers(t *testing.T) {
	t.Parallel()
	const root = "github.com/idkit/idkit/compare"
	allowed := map[string][]string{
		"internal/report":          {"internal/engine", "internal/engine/bbolt", "internal/scheme"},
		"internal/scheme":          {"internal/engine"},
		"internal/engine":          {},
		"internal/engine/bbolt":    {"internal/engine"},
		"internal/engine/sqlite":   {"internal/engine"},
		"internal/engine/pebble":   {"internal/engine"},
		"internal/engine/postgres": {"internal/engine"},
		"internal/engine/innodb":   {"internal/engine"},
		"internal/engine/myrocks":  {"internal/engine", "internal/engine/innodb"},
		"internal/engine/spider":   {"internal/engine", "internal/engine/innodb"},
	}
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the test lists the packages with the go command")
	out, err := exec.Command(goTool, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", root+"/...").Output()
	require.NoError(t, err, "go list")
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], root), "/")
		if pkg == "" {
			continue // the top imports what it needs
		}
		want, ok := allowed[pkg]
		if !assert.True(t, ok, "%s: a package of compare this test does not place: add it to a layer", pkg) {
			continue
		}
		seen++
		for _, imp := range fields[1:] {
			if rel, ours := strings.CutPrefix(imp, root+"/"); ours || imp == root {
				assert.True(t, slices.Contains(want, rel), "%s imports %s: compare's packages import downwards only (allowed: %v)", pkg, imp, want)
			}
		}
	}
	assert.Equal(t, len(allowed), seen, "every layer has its package")
}
