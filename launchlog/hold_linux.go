package launchlog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"

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

// identityAddr is the abstract Unix socket address of the log identity
// id and key: no file, only a name in the network namespace, which dies
// with the socket.
func identityAddr(id []byte, key string) string {
	h := sha256.New()
	h.Write(id)
	h.Write([]byte{0})
	h.Write([]byte(key))
	return "@idkit/hold/" + hex.EncodeToString(h.Sum(nil)[:20])
}

// identityWait bounds how long lockIdentity waits for a holder that is
// letting go of its socket, and for a holder's record.
const identityWait = time.Second

// lockIdentity binds the abstract socket of the log identity id and key,
// which every process of the network namespace that holds key in a file
// with that identity binds: the original log and each copy of it. It
// returns forget, which closes it, or the holder of the socket. The
// socket answers each connection with the holder's record and closes it.
func lockIdentity(id []byte, key string, rec Holder) (forget func() error, holder *Holder, err error) {
	addr := &net.UnixAddr{Name: identityAddr(id, key), Net: "unix"}
	deadline := time.Now().Add(identityWait)
	for {
		ln, err := net.ListenUnix("unix", addr)
		if err == nil {
			js, _ := json.Marshal(rec)
			done := make(chan struct{})
			go serveRecord(ln, js, done)
			return func() error {
				shutdown(ln) // a copy in a child between fork and exec refuses connections too
				err := ln.Close()
				<-done
				return err
			}, nil, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, nil, fmt.Errorf("bind %s: %w", addr.Name, err)
		}
		h, err := askHolder(addr, deadline)
		if err == nil {
			return nil, &h, nil
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(deadline) {
			return nil, &Holder{}, nil // a holder that cannot say who it is
		}
		// A holder letting go: its socket is shut down, and closed once
		// every copy of it is.
		time.Sleep(time.Millisecond)
	}
}

// serveRecord answers every connection to ln with the record js, until ln
// closes.
func serveRecord(ln *net.UnixListener, js []byte, done chan<- struct{}) {
	defer close(done)
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			return
		}
		_ = c.SetWriteDeadline(time.Now().Add(identityWait))
		_, _ = c.Write(js)
		_ = c.Close()
	}
}

// askHolder connects to the holder's socket at addr and reads its record;
// the pid from the socket's credentials if the record does not come.
func askHolder(addr *net.UnixAddr, deadline time.Time) (Holder, error) {
	c, err := net.DialUnix("unix", nil, addr)
	if err != nil {
		return Holder{}, err
	}
	defer c.Close()
	var h Holder
	if raw, err := c.SyscallConn(); err == nil {
		_ = raw.Control(func(fd uintptr) {
			if cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
				h.PID = int(cred.Pid)
			}
		})
	}
	if soon := time.Now().Add(100 * time.Millisecond); deadline.Before(soon) {
		deadline = soon
	}
	_ = c.SetReadDeadline(deadline)
	var rec Holder
	if err := json.NewDecoder(c).Decode(&rec); err == nil && rec.PID != 0 {
		return rec, nil
	}
	return h, nil
}

// shutdown shuts ln's socket down, so that connections to it are refused
// while a copy of its descriptor keeps it open.
func shutdown(ln *net.UnixListener) {
	if raw, err := ln.SyscallConn(); err == nil {
		_ = raw.Control(func(fd uintptr) { _ = unix.Shutdown(int(fd), unix.SHUT_RDWR) })
	}
}
