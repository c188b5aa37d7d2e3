package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestAPICheck makes a repository of one module, releases v0.1.0, and
// changes its API: a new function is a compatible change any release may
// make; a removed one is incompatible, which v0.1.1 may not make and
// v0.2.0 may.
func TestAPICheck(t *testing.T) {
	for _, tool := range []string{"go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s command", tool)
		}
	}
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	write("go.work", "go 1.26.0\n\nuse .\n")
	write("go.mod", "module github.com/idkit/idkit\n\ngo 1.26.0\n")
	write("VERSION", "v0.1.0\n")
	write("traceid/id.go", "package traceid\n\n// Old is in v0.1.0.\nfunc Old() int { return 1 }\n")
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "v0.1.0")
	git("tag", "v0.1.0")
	mods, err := workspace(dir)
	if err != nil {
		t.Fatal(err)
	}

	if err := apiCheck(dir, mods); err != nil {
		t.Fatalf("no change: %v", err)
	}
	write("traceid/id.go", "package traceid\n\n// Old is in v0.1.0.\nfunc Old() int { return 1 }\n\n// New is added.\nfunc New() int { return 2 }\n")
	write("VERSION", "v0.1.1\n")
	if err := apiCheck(dir, mods); err != nil {
		t.Fatalf("a compatible change in a patch release: %v", err)
	}
	write("traceid/id.go", "package traceid\n\n// New replaces Old.\nfunc New() int { return 2 }\n")
	err = apiCheck(dir, mods)
	if err == nil || !strings.Contains(err.Error(), "changes its API incompatibly since v0.1.0, which version v0.1.1 may not do") {
		t.Fatalf("an incompatible change in a patch release: %v", err)
	}
	write("VERSION", "v0.2.0\n")
	if err := apiCheck(dir, mods); err != nil {
		t.Fatalf("an incompatible change in a new minor release below v1: %v", err)
	}
}

func TestMayBreak(t *testing.T) {
	for _, tt := range []struct {
		from, to string
		want     bool
	}{
		{"v0.1.0", "v0.1.1", false},
		{"v0.1.0", "v0.2.0", true},
		{"v1.2.0", "v1.3.0", false},
		{"v1.2.0", "v2.0.0", true},
		{"v0.2.0", "v0.1.0", false},
	} {
		if got := mayBreak(tt.from, tt.to); got != tt.want {
			t.Errorf("mayBreak(%s, %s) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
}
