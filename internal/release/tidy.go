package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// tidy runs go mod tidy in every module of mods, outside the workspace,
// with the repository's other modules replaced by their directories for
// the run only: each go.mod keeps its published form, requiring the others
// at the version they move to together, and no go.sum holds sums of the
// repository's own modules, which change with every commit.
func tidy(mods []module) error {
	for _, m := range mods {
		if err := tidyOne(m, mods); err != nil {
			return fmt.Errorf("%s: %w", rel(m), err)
		}
	}
	return nil
}

func tidyOne(m module, mods []module) (err error) {
	f, err := readModFile(m.Dir)
	if err != nil {
		return err
	}
	var added []string
	for _, o := range mods {
		if o.Path == m.Path {
			continue
		}
		to, err := filepath.Rel(m.Dir, o.Dir)
		if err != nil {
			return err
		}
		if err := f.AddReplace(o.Path, "", "./"+filepath.ToSlash(to), ""); err != nil {
			return err
		}
		added = append(added, o.Path)
	}
	if err := writeModFile(m.Dir, f); err != nil {
		return err
	}
	defer func() {
		f, rerr := readModFile(m.Dir)
		if rerr == nil {
			for _, p := range added {
				if rerr = f.DropReplace(p, ""); rerr != nil {
					break
				}
			}
		}
		if rerr == nil {
			rerr = writeModFile(m.Dir, f)
		}
		err = errors.Join(err, rerr)
	}()
	cmd := exec.Command("go", "mod", "tidy")
	cmd.Dir = m.Dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go mod tidy: %w\n%s", err, out)
	}
	return nil
}
