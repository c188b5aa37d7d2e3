// Command release keeps the repository's modules publishable as they are,
// and checks that they are: go.work ties them together for development,
// and each go.mod requires the others at the version they are released at
// together (VERSION), with no replace directive.
//
//	go run ./internal/release tidy
//	    runs go mod tidy in every module, outside the workspace
//	go run ./internal/release version VERSION
//	    moves every module's requirements of the others to VERSION, and
//	    go.work's replacements of them and the file VERSION with them: the
//	    first step of a release (.ci/release)
//	go run ./internal/release check
//	    the release check of .ci/run: publishes every shipping module to a
//	    module proxy in a temporary directory at a test version and, as a
//	    user outside the repository, installs idkit with the README's
//	    install line and builds and tests a one-import program of each
//	    module, whose module graph must hold nothing it did not ask for
//	go run ./internal/release api
//	    the API check of .ci/run: what changed in each shipping module's
//	    API since its last release (its highest tag); an incompatible
//	    change fails it unless VERSION may make one
//
// Run it from the repository's root, in the workspace.
package main

import (
	"fmt"
	"os"
	"strings"

	"golang.org/x/mod/semver"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

const usage = "usage: release tidy | version VERSION | check | api"

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%s", usage)
	}
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	mods, err := workspace(dir)
	if err != nil {
		return err
	}
	switch {
	case args[0] == "tidy" && len(args) == 1:
		return tidy(mods)
	case args[0] == "version" && len(args) == 2:
		v := args[1]
		if !semver.IsValid(v) || semver.Prerelease(v) != "" || semver.Build(v) != "" {
			return fmt.Errorf("version %q: want a release version such as v0.2.0", v)
		}
		if err := setVersion(mods, v); err != nil {
			return err
		}
		if err := setWorkVersion(dir, mods, v); err != nil {
			return err
		}
		return os.WriteFile("VERSION", []byte(v+"\n"), 0o644)
	case args[0] == "check" && len(args) == 1:
		return check(dir, mods)
	case args[0] == "api" && len(args) == 1:
		return apiCheck(dir, mods)
	}
	return fmt.Errorf("%s (got %s)", usage, strings.Join(args, " "))
}

// currentVersion is the version in the file VERSION of dir: the release
// the modules require one another at.
func currentVersion(dir string) (string, error) {
	b, err := os.ReadFile(dir + "/VERSION")
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(b))
	if !semver.IsValid(v) {
		return "", fmt.Errorf("VERSION holds %q, want a version such as v0.1.0", v)
	}
	return v, nil
}
