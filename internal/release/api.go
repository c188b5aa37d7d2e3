package main

import (
	"fmt"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/mod/semver"
	"golang.org/x/tools/go/packages"
)

// apiCheck compares the API of every shipping module of mods (the
// workspace in dir) with the module's last release, the highest tag
// DIR/vX.Y.Z (vX.Y.Z for the core module) in git, and prints what
// changed. An incompatible change fails it unless VERSION may make one: a
// new major version, or, below v1, a new minor one. A module with no
// release yet has nothing to compare with, and says so.
func apiCheck(dir string, mods []module) error {
	version, err := currentVersion(dir)
	if err != nil {
		return err
	}
	trees := map[string]string{} // tag → its tree, checked out once
	defer func() {
		for _, t := range trees {
			_ = exec.Command("git", "-C", dir, "worktree", "remove", "--force", t).Run()
		}
	}()
	var broken []string
	for _, m := range mods {
		if !m.Ships {
			continue
		}
		tag, err := lastTag(dir, m)
		if err != nil {
			return err
		}
		if tag == "" {
			fmt.Printf("%s: no release yet, nothing to compare with\n", m.Path)
			continue
		}
		tree, ok := trees[tag]
		if !ok {
			if tree, err = os.MkdirTemp("", "idkit-api-"); err != nil {
				return err
			}
			if out, err := exec.Command("git", "-C", dir, "worktree", "add", "--detach", "--force", tree, tag).CombinedOutput(); err != nil {
				return fmt.Errorf("git worktree add %s: %w\n%s", tag, err, out)
			}
			trees[tag] = tree
		}
		oldDir := filepath.Join(tree, strings.TrimPrefix(strings.TrimPrefix(m.Path, root), "/"))
		old, err := api(oldDir, m.Path)
		if err != nil {
			return fmt.Errorf("%s at %s: %w", m.Path, tag, err)
		}
		now, err := api(m.Dir, m.Path)
		if err != nil {
			return fmt.Errorf("%s: %w", m.Path, err)
		}
		report := apidiff.ModuleChanges(&apidiff.Module{Path: m.Path, Packages: old}, &apidiff.Module{Path: m.Path, Packages: now})
		tagVersion := tag[strings.LastIndex(tag, "/")+1:]
		fmt.Printf("%s since %s:\n", m.Path, tag)
		if len(report.Changes) == 0 {
			fmt.Println("\tno change")
		}
		incompatible := false
		for _, c := range report.Changes {
			kind := "compatible"
			if !c.Compatible {
				kind, incompatible = "INCOMPATIBLE", true
			}
			fmt.Printf("\t%s: %s\n", kind, c.Message)
		}
		if incompatible && !mayBreak(tagVersion, version) {
			broken = append(broken, fmt.Sprintf("%s changes its API incompatibly since %s, which version %s may not do", m.Path, tag, version))
		}
	}
	if len(broken) > 0 {
		return fmt.Errorf("%s", strings.Join(broken, "\n"))
	}
	return nil
}

// mayBreak reports whether release to may change the API of release from
// incompatibly: a new major version, or a new minor one below v1.
func mayBreak(from, to string) bool {
	if semver.Major(to) != semver.Major(from) {
		return semver.Compare(to, from) > 0
	}
	return semver.Major(to) == "v0" && semver.MajorMinor(to) != semver.MajorMinor(from) && semver.Compare(to, from) > 0
}

// lastTag returns the highest release tag of m in the git repository at
// dir, or "".
func lastTag(dir string, m module) (string, error) {
	prefix := strings.TrimPrefix(strings.TrimPrefix(m.Path, root), "/")
	if prefix != "" {
		prefix += "/"
	}
	out, err := exec.Command("git", "-C", dir, "tag", "--list", prefix+"v*").Output()
	if err != nil {
		return "", fmt.Errorf("git tag --list: %w", err)
	}
	best := ""
	for _, t := range strings.Fields(string(out)) {
		v := strings.TrimPrefix(t, prefix)
		if strings.Contains(v, "/") || !semver.IsValid(v) || semver.Prerelease(v) != "" {
			continue
		}
		if best == "" || semver.Compare(v, strings.TrimPrefix(best, prefix)) > 0 {
			best = t
		}
	}
	return best, nil
}

// api loads the packages of module path in dir that a user may import:
// not internal, not a command.
func api(dir, path string) ([]*types.Package, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedModule, Dir: dir}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		return nil, err
	}
	var out []*types.Package
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("%s: %v", p.PkgPath, p.Errors[0])
		}
		if p.Module == nil || p.Module.Path != path || p.Name == "main" || isInternal(p.PkgPath) {
			continue
		}
		out = append(out, p.Types)
	}
	return out, nil
}

func isInternal(path string) bool {
	return strings.HasSuffix(path, "/internal") || strings.Contains(path, "/internal/")
}
