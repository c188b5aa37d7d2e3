//go:build unix

package launchlog

import (
	"errors"
	"os"
	"syscall"
	"time"

	berrors "go.etcd.io/bbolt/errors"
)

// earlyLock says that run locks and verifies the file before bbolt reads
// it.
const earlyLock = true

// lockFile takes the flock bbolt takes (exclusive to write, shared to
// read) on f, polling until deadline. It polls more often than bbolt's
// 50 ms, so that waiters under contention get their turn sooner.
func lockFile(f *os.File, exclusive bool, deadline time.Time) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	fd := int(f.Fd())
	wait := 500 * time.Microsecond
	for {
		err := syscall.Flock(fd, how|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return berrors.ErrTimeout
		}
		time.Sleep(min(wait, left))
		wait = min(2*wait, 10*time.Millisecond)
	}
}

// unlock drops the flock on file.
func unlock(file *os.File) { _ = syscall.Flock(int(file.Fd()), syscall.LOCK_UN) }
