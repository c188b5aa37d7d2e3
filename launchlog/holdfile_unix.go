//go:build unix && !linux

package launchlog

import (
	"errors"
	"os"
	"syscall"
)

// lockHold takes an exclusive flock on f without waiting; ok is false if
// another open file holds it. A flock belongs to the open file, not the
// process, so two holds within one process exclude each other too; the
// kernel drops it when the file's last descriptor closes, and so when
// the process ends.
func lockHold(f *os.File) (ok bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// unlockHold releases f's flock. Close alone would not while a copy of the
// descriptor lives on, as in a child process between fork and exec.
func unlockHold(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
