//go:build unix

package safefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxLinks bounds the links one path may lead through, as the kernel's
// ELOOP does.
const maxLinks = 40

// resolve returns the path that name leads to, absolute and with no
// symbolic link left in it, checking each link on the way (checkLink).
// A component that does not exist ends the walk: the open reports it.
func resolve(name string) (string, error) {
	path := name
	if !filepath.IsAbs(path) {
		wd, err := syscall.Getwd() // the kernel's: no link in it
		if err != nil {
			return "", err
		}
		path = filepath.Join(wd, path)
	}
	done := "/"
	rest := strings.Split(path, "/")
	links := 0
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done) // done holds no link: its parent is physical
			continue
		}
		next := filepath.Join(done, part)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			done = next // a missing part is left for the open to report
			continue
		}
		if err := checkLink(next, fi); err != nil {
			return "", err
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("%w: %s leads through more than %d symbolic links", ErrUnsafe, name, maxLinks)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			done = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return done, nil
}

// checkLink refuses the symbolic link at path, with info fi, if a user
// other than this process's or root owns it, which could point it
// anywhere.
func checkLink(path string, fi os.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if uid := os.Geteuid(); int(st.Uid) != uid && st.Uid != 0 {
			return fmt.Errorf("%w: %s is a symbolic link owned by uid %d, not by this process's user (uid %d) or root; name the file itself", ErrUnsafe, path, st.Uid, uid)
		}
	}
	return nil
}

// Check refuses an open file that is not a regular file, that a user
// other than this process's (or root) owns, or that other users may
// write.
func Check(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%w: %s is not a regular file (%s)", ErrUnsafe, f.Name(), fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if uid := os.Geteuid(); int(st.Uid) != uid && st.Uid != 0 {
			return fmt.Errorf("%w: %s is owned by uid %d, not by this process's user (uid %d) or root; chown it, or run as its owner", ErrUnsafe, f.Name(), st.Uid, uid)
		}
	}
	if perm := fi.Mode().Perm(); perm&0o002 != 0 {
		return fmt.Errorf("%w: %s is writable by every user (mode %04o); chmod o-w %s", ErrUnsafe, f.Name(), perm, f.Name())
	}
	return nil
}

// openNoFollow opens path without following a link in its last part; the
// file's name is name, for messages.
func openNoFollow(path, name string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: name, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
}
