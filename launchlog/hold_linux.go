package launchlog

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// keyOffset is the byte of the log file that lockKey locks for key: one
// of 2^61 bytes from 2^62 on, named by a digest of the key, far past
// any data the file will hold (boltcheck.MaxSize is 1 GiB). bbolt's own
// lock is an flock, which open file description locks do not meet.
func keyOffset(key string) int64 {
	sum := sha256.Sum256([]byte(key))
	return 1<<62 | int64(binary.BigEndian.Uint64(sum[:8])&(1<<61-1))
}

// lockKey takes an open file description lock on key's byte of f, the log
// file, without waiting; ok is false if another open file holds it. The
// lock is the file's, whatever name or mount reached it, and belongs to
// this open of it: two holds in one process exclude each other too, and
// closing other descriptors of the file (as every operation of the log
// does) leaves it. The kernel drops it when f's last descriptor closes,
// and so when the process ends.
func (l *Log) lockKey(f *os.File, key string) (unlock func() error, ok bool, err error) {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: keyOffset(key), Len: 1}
	err = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("launchlog: lock %s in %s: %w", key, l.path, err)
	}
	return func() error {
		// Unlocked before f closes: a copy of the descriptor in a child
		// between its fork and its exec would keep the lock otherwise.
		un := unix.Flock_t{Type: unix.F_UNLCK, Whence: 0, Start: keyOffset(key), Len: 1}
		return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &un)
	}, true, nil
}
