package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo writes a workspace of a core module and a module beside it that
// requires it with the go.mod text req, and returns its modules.
func repo(t *testing.T, req string) (string, []module) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.work":      "go 1.26.0\n\nuse (\n\t.\n\t./fleet\n\t./internal/testkit/campaigns/deploy\n)\n",
		"go.mod":       "module github.com/idkit/idkit\n\ngo 1.26.0\n",
		"fleet/go.mod": "module github.com/idkit/idkit/fleet\n\ngo 1.26.0\n\n" + req,
		"internal/testkit/campaigns/deploy/go.mod": "module github.com/idkit/idkit/internal/testkit/campaigns/deploy\n\ngo 1.26.0\n\n" +
			"require github.com/idkit/idkit v0.0.0-00010101000000-000000000000\n\nreplace github.com/idkit/idkit => ../../../..\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	mods, err := workspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, mods
}

// TestProblems: a shipping module with a replace directive, a placeholder
// version or another version than the release's cannot be published; a
// test module may have them.
func TestProblems(t *testing.T) {
	for _, tt := range []struct {
		name, req string
		want      int
	}{
		{"published as it is", "require github.com/idkit/idkit v0.1.0\n", 0},
		{"a replace", "require github.com/idkit/idkit v0.1.0\n\nreplace github.com/idkit/idkit => ../\n", 1},
		{"a placeholder", "require github.com/idkit/idkit v0.0.0-00010101000000-000000000000\n", 1},
		{"another version", "require github.com/idkit/idkit v0.0.9\n", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, mods := repo(t, tt.req)
			got, err := problems(mods, "v0.1.0")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tt.want {
				t.Errorf("problems: %q, want %d", got, tt.want)
			}
		})
	}
}

// TestSetVersion moves every requirement of the repository's modules, and
// go.work's replacements of the shipping ones, to a version.
func TestSetVersion(t *testing.T) {
	dir, mods := repo(t, "require github.com/idkit/idkit v0.1.0\n")
	if err := setVersion(mods, "v0.2.0"); err != nil {
		t.Fatal(err)
	}
	if err := setWorkVersion(dir, mods, "v0.2.0"); err != nil {
		t.Fatal(err)
	}
	got, err := problems(mods, "v0.2.0")
	if err != nil || len(got) != 0 {
		t.Fatalf("after the move: %q, %v", got, err)
	}
	w, err := os.ReadFile(filepath.Join(dir, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"github.com/idkit/idkit v0.2.0 => ./\n", "github.com/idkit/idkit/fleet v0.2.0 => ./fleet\n"} {
		if !strings.Contains(string(w), want) {
			t.Errorf("go.work lacks %q:\n%s", want, w)
		}
	}
	if strings.Contains(string(w), "deploy v0.2.0") {
		t.Errorf("go.work replaces a test module:\n%s", w)
	}
}
