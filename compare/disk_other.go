//go:build !(linux || darwin || freebsd)

package compare

// freeSpace cannot tell the free space on this system.
func freeSpace(string) (int64, bool) { return 0, false }
