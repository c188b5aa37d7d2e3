// Package safefile opens the files that idkit trusts, a launch log, a key
// file, a token file, as a careful daemon opens them: only a regular file
// that this process's user (or root) owns and that not every user may
// write. A file it writes (OpenFile) is never reached through a symbolic
// link, a dangling one included; a file it only reads (ReadFile) is
// reached through a link only if the link too is this user's or root's,
// as the links of a Kubernetes secret or config map volume are. A file
// that fails is refused with an error that says why and how to fix it,
// wrapping ErrUnsafe.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrUnsafe reports a file that safefile refuses to open: a symbolic
// link, not a regular file, owned by another user, or writable by others.
var ErrUnsafe = errors.New("unsafe file")

// OpenFile is os.OpenFile that refuses a symbolic link (a dangling one
// included, when flag creates the file) and a file that Check refuses.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(name, flag|noFollow, perm)
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
// symbolic link is followed if this process's user or root owns it.
func ReadFile(name string) ([]byte, error) {
	if err := checkLink(name); err != nil {
		return nil, err
	}
	f, err := os.Open(name)
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
