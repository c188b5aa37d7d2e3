//go:build unix

package serve

import "syscall"

// fileLimit returns the process's soft limit on open files
// (RLIMIT_NOFILE), and whether it is known.
func fileLimit() (uint64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, false
	}
	return uint64(r.Cur), true
}
