//go:build unix

package safefile

import (
	"fmt"
	"os"
	"syscall"
)

const noFollow = syscall.O_NOFOLLOW

// checkLink refuses name if it is a symbolic link that a user other than
// this process's or root owns, which could point it anywhere.
func checkLink(name string) error {
	fi, err := os.Lstat(name)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil // the open reports a missing file
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		if uid := os.Geteuid(); int(st.Uid) != uid && st.Uid != 0 {
			return fmt.Errorf("%w: %s is a symbolic link owned by uid %d, not by this process's user (uid %d) or root; name the file itself", ErrUnsafe, name, st.Uid, uid)
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
