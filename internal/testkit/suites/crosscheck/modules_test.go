package crosscheck

import (
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

// core is the module that holds the schemes.
const core = "github.com/idkit/idkit"

// heavy names modules that a program importing one scheme must never see
// in its module graph: servers, drivers, RPC and telemetry stacks.
var heavy = []string{
	"go.etcd.io/etcd", "go.etcd.io/raft", "google.golang.org/grpc", "modernc.org/sqlite",
	"go.mongodb.org/mongo-driver", "github.com/prometheus/", "connectrpc.com/", "go.opentelemetry.io/",
	"github.com/jackc/pgx", "github.com/go-sql-driver/mysql", "github.com/redis/go-redis",
}

// TestOneSchemeIsLight builds a scratch module outside the repository
// that imports traceid and its launch log alone, as a service adopting
// them would, and tidies it: its go.mod requires the core module, bbolt and golang.org/x/sys and
// nothing else, its build compiles packages of those three alone, and
// nothing heavy is anywhere in its module graph (go list -m all). That
// graph also holds what the go.mod files of bbolt and of the core require
// for their own tests (testify, goleak and such), which no build uses.
func TestOneSchemeIsLight(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)

	dir := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	write("go.mod", "module example.com/adopter\n\ngo 1.26.0\n\nrequire "+core+" v0.0.0-00010101000000-000000000000\n\nreplace "+core+" => "+root+"\n")
	write("main.go", `package main

import (
	"context"
	"fmt"

	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/traceid"
)

func main() {
	log, err := launchlog.New(launchlog.Options{Path: "idkit.db"})
	if err != nil {
		panic(err)
	}
	g, err := traceid.New(context.Background(), traceid.Options{Node: 1, Store: log})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	id, _ := g.Next()
	fmt.Println(id)
}
`)
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command")
	run := func(args ...string) string {
		cmd := exec.Command(goTool, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	run("mod", "tidy")
	run("build", "-o", os.DevNull, ".")

	want := []string{core, "go.etcd.io/bbolt", "golang.org/x/sys"}
	var goMod struct{ Require []struct{ Path string } }
	require.NoError(t, json.Unmarshal([]byte(run("mod", "edit", "-json")), &goMod))
	var requires []string
	for _, r := range goMod.Require {
		requires = append(requires, r.Path)
	}
	assert.ElementsMatch(t, want, requires, "the modules the adopter's go.mod requires")

	built := strings.Fields(run("list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "."))
	assert.ElementsMatch(t, append([]string{"example.com/adopter"}, want...), slices.Compact(slices.Sorted(slices.Values(built))), "the modules whose packages the build compiles")

	graph := strings.Fields(run("list", "-m", "-f", "{{if not .Main}}{{.Path}}{{end}}", "all"))
	t.Logf("go list -m all of the adopter: %s", strings.Join(graph, " "))
	for _, m := range graph {
		for _, h := range heavy {
			assert.False(t, strings.HasPrefix(m, h), "%s is in the module graph of a program that imports traceid alone", m)
		}
	}
}

// repoRoot returns the repository's root, the core module's directory: a
// test runs in its package's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "go.mod"))
	return root
}
