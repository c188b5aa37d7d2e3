// Package safefile opens the files that idkit trusts, a launch log, a key
// file, a token file, as a careful daemon opens them: only a regular file
// that this process's user (or root) owns and that not every user may
// write. A symbolic link anywhere in the path, in a directory's name as
// in the file's, and every link that one leads to, must be this user's
// or root's, as the links of a Kubernetes secret or config map volume
// are: another user's link could point the path anywhere. The path is
// resolved link by link, each checked, and the file opened by the
// resolved path with no link followed (openat2's RESOLVE_NO_SYMLINKS
// where Linux has it), so a link swapped in after the checks fails the
// open. A file it writes (OpenFile) is never itself a symbolic link, a
// dangling one included. A file that fails is refused with an error that
// says why and how to fix it, wrapping ErrUnsafe.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrUnsafe reports a file that safefile refuses to open: a symbolic
// link, not a regular file, owned by another user, or writable by others.
var ErrUnsafe = errors.New("unsafe file")

// OpenFile is os.OpenFile that refuses a symbolic link (a dangling one
// included, when flag creates the file), another user's link in the
// directories of its path, and a file that Check refuses.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	if isLink(name) {
		return nil, fmt.Errorf("%w: %s is a symbolic link; name the file itself", ErrUnsafe, name)
	}
	dir, base := filepath.Split(name)
	if dir == "" {
		dir = "."
	}
	resolved, err := resolve(dir)
	if err != nil {
		return nil, err
	}
	f, err := openNoLinks(filepath.Join(resolved, base), name, flag, perm)
	if err != nil {
		if isLink(name) {
			return nil, fmt.Errorf("%w: %s is a symbolic link; name the file itself", ErrUnsafe, name)
		}
		return nil, err
	}
	if err := Check(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the whole of the file name, which Check accepts. A
// symbolic link in its path is followed if this process's user or root
// owns it, and so is every link it leads to.
func ReadFile(name string) ([]byte, error) {
	resolved, err := resolve(name)
	if err != nil {
		return nil, err
	}
	f, err := openNoLinks(resolved, name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := Check(f); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// isLink reports whether name is a symbolic link, which an open with
// noFollow refuses.
func isLink(name string) bool {
	fi, err := os.Lstat(name)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}
