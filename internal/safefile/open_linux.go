//go:build linux

package safefile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// openNoLinks opens path, which holds no symbolic link, without following
// one: openat2 with RESOLVE_NO_SYMLINKS fails if a link was put in any of
// its parts since it was resolved. Kernels before 5.6 have no openat2;
// there the last part alone is opened without following a link. The
// file's name is name, for messages.
func openNoLinks(path, name string, flag int, perm os.FileMode) (*os.File, error) {
	how := unix.OpenHow{Flags: uint64(flag | unix.O_CLOEXEC | unix.O_NOFOLLOW), Resolve: unix.RESOLVE_NO_SYMLINKS}
	if flag&os.O_CREATE != 0 {
		how.Mode = uint64(perm.Perm())
	}
	for {
		fd, err := unix.Openat2(unix.AT_FDCWD, path, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), name), nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS):
			return openNoFollow(path, name, flag, perm)
		case errors.Is(err, unix.ELOOP):
			return nil, &os.PathError{Op: "open", Path: name, Err: errors.Join(ErrUnsafe, errors.New("a symbolic link appeared in the path while it was opened"))}
		}
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
}
