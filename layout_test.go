package idkit_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/idkit/idkit"

// testkit is where the test harnesses live, by kind: the unit-test
// helpers directly under it (bounded waits, servers from the environment,
// fakes, a TCP proxy, certificates), the conformance suites under suites/
// and the long campaigns and load generators under campaigns/.
// Everything else ships, but fleettest, the harness of the tests that run
// etcd clusters, which lives in fleet's module so that no module that
// tests on etcd carries etcd's server, and which a test outside the
// repository may use too; and the release tool, a command of the
// repository's own that nothing imports.
const testkit = module + "/internal/testkit"

const (
	suites    = testkit + "/suites"
	campaigns = testkit + "/campaigns"
	fleettest = module + "/fleet/fleettest"
	release   = module + "/internal/release"
)

// What ships never imports a test harness, so that the import graph only
// points down: a package outside internal/testkit imports none under it in
// its non-test files. Inside the kit it points down too: a helper imports
// no suite and no campaign, a suite no campaign, in its test files
// neither. And every other package under internal/ ships: some non-test
// file outside the harnesses imports it. The packages that import one may
// live in another module of the workspace, so that check needs the
// workspace; outside it (GOWORK=off, as the published module is tested)
// only the imports are checked.
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
			ImportPath                         string
			Imports, TestImports, XTestImports []string
		}
		require.NoError(t, dec.Decode(&p))
		if layer := kitLayer(p.ImportPath); layer != "" {
			for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
				assert.False(t, kitLayer(imp) != "" && kitRank[kitLayer(imp)] > kitRank[layer],
					"%s, a %s, imports %s, a %s: the kit's imports point down, campaigns to suites to helpers", p.ImportPath, layer, imp, kitLayer(imp))
			}
		}
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
		assert.True(t, shipped[p], "%s is under internal/ but no shipped code imports it: a harness belongs under %s/ (a unit-test helper), %s/ (a conformance suite) or %s/ (a campaign or load generator)", p, strings.TrimPrefix(testkit, module+"/"), strings.TrimPrefix(suites, module+"/"), strings.TrimPrefix(campaigns, module+"/"))
	}
}

// isHarness reports whether path is a package that does not ship: a
// test harness, or the release tool.
func isHarness(path string) bool {
	return under(path, testkit) || path == fleettest || under(path, release)
}

func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// kitLayer names the kind of the test kit's package path: "campaign",
// "suite" or "helper"; "" outside the kit.
func kitLayer(path string) string {
	switch {
	case under(path, campaigns):
		return "campaign"
	case under(path, suites):
		return "suite"
	case under(path, testkit):
		return "helper"
	}
	return ""
}

// kitRank orders the kit's kinds: a package imports only its own kind or
// one ranked below.
var kitRank = map[string]int{"helper": 0, "suite": 1, "campaign": 2}

// maxPackageLines bounds a package's non-test code: past it a package
// holds more than one concern, and a reader who comes to change one has
// to read the others.
const maxPackageLines = 4000

// TestPackageSize: no package of the workspace has more than
// maxPackageLines lines of non-test Go (its GoFiles and the files the
// build constraints leave out on this platform).
func TestPackageSize(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command")
	out, err := exec.Command(goTool, "list", "-json", module+"/...").Output()
	require.NoError(t, err, "go list")
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for dec.More() {
		var p struct {
			ImportPath, Dir         string
			GoFiles, IgnoredGoFiles []string
		}
		require.NoError(t, dec.Decode(&p))
		lines := 0
		for _, f := range slices.Concat(p.GoFiles, p.IgnoredGoFiles) {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(p.Dir, f))
			require.NoError(t, err)
			lines += bytes.Count(b, []byte("\n"))
		}
		n++
		assert.LessOrEqual(t, lines, maxPackageLines, "%s has %d lines of non-test Go: split it by concern", p.ImportPath, lines)
	}
	assert.Greater(t, n, 10, "the workspace's packages")
}
