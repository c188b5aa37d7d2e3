package idkit_test

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/idkit/idkit"

// testkit is where the test harnesses live: conformance suites, fault
// campaigns, load generators. Everything else ships, but fleettest, the
// harness of the tests that run etcd clusters, which lives in fleet's
// module so that no module that tests on etcd carries etcd's server, and
// which a test outside the repository may use too.
const testkit = module + "/internal/testkit"

const fleettest = module + "/fleet/fleettest"

// What ships never imports a test harness, so that the import graph only
// points down: a package outside internal/testkit imports none under it in
// its non-test files. And every other package under internal/ ships: some
// non-test file outside the harnesses imports it. The packages that import
// one may live in another module of the workspace, so that check needs
// the workspace; outside it (GOWORK=off, as the published module is
// tested) only the imports are checked.
func TestLayout(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command")
	out, err := exec.Command(goTool, "list", "-json", module+"/...").Output() // every module of the workspace
	require.NoError(t, err, "go list")

	shipped := map[string]bool{} // imported by a non-test file that ships
	var internal []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		require.NoError(t, dec.Decode(&p))
		if p.ImportPath == fleettest {
			// Published for tests outside the repository, which cannot
			// import what is under internal/.
			for _, imp := range p.Imports {
				assert.False(t, strings.HasPrefix(imp, module+"/internal/"), "%s, a published harness, imports %s", p.ImportPath, imp)
			}
		}
		if isHarness(p.ImportPath) {
			continue
		}
		if strings.HasPrefix(p.ImportPath, module+"/internal/") {
			internal = append(internal, p.ImportPath)
		}
		for _, imp := range p.Imports {
			assert.False(t, isHarness(imp), "%s imports the test harness %s outside its tests", p.ImportPath, imp)
			shipped[imp] = true
		}
	}
	require.NotEmpty(t, internal)
	work, err := exec.Command(goTool, "env", "GOWORK").Output()
	require.NoError(t, err, "go env GOWORK")
	if w := strings.TrimSpace(string(work)); w == "" || w == "off" {
		t.Log("no workspace: the packages of the other modules, which import some of internal/, are not here to check that every package under internal/ ships")
		return
	}
	for _, p := range internal {
		assert.True(t, shipped[p], "%s is under internal/ but no shipped code imports it: a harness belongs under %s", p, filepath.Base(testkit))
	}
}

func isHarness(path string) bool {
	return path == testkit || strings.HasPrefix(path, testkit+"/") || path == fleettest
}
