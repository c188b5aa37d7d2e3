package launchlog

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// holdOffset is where lockHold locks a byte of the hold file: past the
// record, which other processes read.
const holdOffset = 1 << 40

// lockHold locks a byte of f exclusively without waiting; ok is false if
// another handle holds it. Windows drops the lock when the handle closes,
// and so when the process ends.
func lockHold(f *os.File) (ok bool, err error) {
	ol := &windows.Overlapped{OffsetHigh: holdOffset >> 32}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

// unlockHold releases the byte lockHold locked.
func unlockHold(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: holdOffset >> 32}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}
