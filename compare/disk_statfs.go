//go:build linux || darwin || freebsd

package compare

import "golang.org/x/sys/unix"

// freeSpace returns the bytes an unprivileged user may still write on
// the file system that holds dir, and false when it cannot tell.
func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
