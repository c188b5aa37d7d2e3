//go:build linux

package reload

import (
	"os"
	"syscall"
	"time"
)

// fileID returns a file's device, inode and change time.
func FileID(fi os.FileInfo) (dev, ino uint64, ctime time.Time) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, time.Time{}
	}
	return uint64(st.Dev), uint64(st.Ino), time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
}
