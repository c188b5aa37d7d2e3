package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// root is the module path of the core module; every module of the
// repository has a path under it.
const root = "github.com/idkit/idkit"

// module is one module of the workspace.
type module struct {
	Path  string // module path
	Dir   string // absolute directory
	Ships bool   // published; the modules under internal/ (the test kit's, the release tool) are not
}

// workspace returns the modules that go.work in dir uses.
func workspace(dir string) ([]module, error) {
	cmd := exec.Command("go", "work", "edit", "-json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go work edit -json in %s: %w", dir, err)
	}
	var work struct{ Use []struct{ DiskPath string } }
	if err := json.Unmarshal(out, &work); err != nil {
		return nil, err
	}
	var mods []module
	for _, u := range work.Use {
		d := filepath.Join(dir, u.DiskPath)
		f, err := readModFile(d)
		if err != nil {
			return nil, err
		}
		rel := filepath.ToSlash(filepath.Clean(u.DiskPath))
		mods = append(mods, module{
			Path:  f.Module.Mod.Path,
			Dir:   d,
			Ships: rel != "internal" && !strings.HasPrefix(rel, "internal/"),
		})
	}
	slices.SortFunc(mods, func(a, b module) int { return strings.Compare(a.Path, b.Path) })
	return mods, nil
}

// ours reports whether path is one of the repository's modules.
func ours(path string) bool { return path == root || strings.HasPrefix(path, root+"/") }

func readModFile(dir string) (*modfile.File, error) {
	name := filepath.Join(dir, "go.mod")
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(name, b, nil)
}

func writeModFile(dir string, f *modfile.File) error {
	f.Cleanup()
	b, err := f.Format()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.mod"), b, 0o644)
}

// setVersion makes every module of mods require the others it requires
// at version: the versions move together, as a release publishes them.
func setVersion(mods []module, version string) error {
	for _, m := range mods {
		f, err := readModFile(m.Dir)
		if err != nil {
			return err
		}
		for _, r := range f.Require {
			if ours(r.Mod.Path) && r.Mod.Version != version {
				if err := f.AddRequire(r.Mod.Path, version); err != nil {
					return fmt.Errorf("%s: %w", m.Path, err)
				}
			}
		}
		if err := writeModFile(m.Dir, f); err != nil {
			return err
		}
	}
	return nil
}

// setWorkVersion makes go.work in dir replace each shipping module of
// mods at version with its directory: in a workspace, the versions that
// the go.mod files require are still looked up unless go.work replaces
// them, and they are published only when the release is.
func setWorkVersion(dir string, mods []module, version string) error {
	name := filepath.Join(dir, "go.work")
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	w, err := modfile.ParseWork(name, b, nil)
	if err != nil {
		return err
	}
	for _, r := range slices.Clone(w.Replace) {
		if ours(r.Old.Path) {
			if err := w.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return err
			}
		}
	}
	w.Cleanup()
	var block strings.Builder
	block.WriteString("\n// The versions the modules require one another at, served from the\n// workspace until they are published.\nreplace (\n")
	for _, m := range mods {
		if !m.Ships {
			continue
		}
		to, err := filepath.Rel(dir, m.Dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(&block, "\t%s %s => ./%s\n", m.Path, version, strings.TrimPrefix(filepath.ToSlash(to), "."))
	}
	block.WriteString(")\n")
	out := append(modfile.Format(w.Syntax), block.String()...)
	if _, err := modfile.ParseWork(name, out, nil); err != nil {
		return fmt.Errorf("go.work as rewritten: %w", err)
	}
	return os.WriteFile(name, out, 0o644)
}

// problems lists what keeps a shipping module from being published as it
// is: a replace directive, or a requirement of another module of the
// repository at a placeholder version or at a version other than version.
func problems(mods []module, version string) ([]string, error) {
	var out []string
	for _, m := range mods {
		if !m.Ships {
			continue
		}
		f, err := readModFile(m.Dir)
		if err != nil {
			return nil, err
		}
		for _, r := range f.Replace {
			out = append(out, fmt.Sprintf("%s/go.mod replaces %s: a module publishes without replace directives (go.work is for development)", rel(m), r.Old.Path))
		}
		for _, r := range f.Require {
			switch {
			case !ours(r.Mod.Path):
			case strings.HasPrefix(r.Mod.Version, "v0.0.0-"):
				out = append(out, fmt.Sprintf("%s/go.mod requires %s at the placeholder %s", rel(m), r.Mod.Path, r.Mod.Version))
			case r.Mod.Version != version:
				out = append(out, fmt.Sprintf("%s/go.mod requires %s %s, want %s, the version the modules move to together", rel(m), r.Mod.Path, r.Mod.Version, version))
			}
		}
	}
	return out, nil
}

// rel names m by its directory in the repository.
func rel(m module) string {
	if m.Path == root {
		return "."
	}
	return strings.TrimPrefix(m.Path, root+"/")
}
