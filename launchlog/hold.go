package launchlog

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/bbolt"

	"github.com/idkit/idkit/internal/safefile"
	idstore "github.com/idkit/idkit/store"
)

// Holder describes the process that holds a key, as its hold records it.
type Holder struct {
	Key     string    `json:"key"`
	PID     int       `json:"pid"`
	Command string    `json:"command"` // the program and its subcommand, such as "idkit serve"
	Since   time.Time `json:"since"`
}

// String reads as "idkit serve (pid 533) since 17:02:11 UTC".
func (h Holder) String() string {
	if h.PID == 0 {
		return "another process (its record is not written yet)"
	}
	who := h.Command
	if h.PID == os.Getpid() {
		who = "this process"
	}
	if who == "" {
		return fmt.Sprintf("process %d", h.PID)
	}
	if h.Since.IsZero() {
		return fmt.Sprintf("%s (pid %d)", who, h.PID)
	}
	return fmt.Sprintf("%s (pid %d) since %s", who, h.PID, sinceText(h.Since))
}

// sinceText is t's time of day, with the date when it is not today.
func sinceText(t time.Time) string {
	t = t.Local()
	if now := time.Now(); t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return t.Format("15:04:05 MST")
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

// HeldError reports a key that another live holder holds. errors.Is finds
// ErrHeld (and idkit.ErrHeld) in it.
type HeldError struct {
	Path string // the log
	Key  string // the key asked for; empty for the path, which the holder wrote the log through while another file was there

	Holder Holder        // who holds it, as its record says
	Waited time.Duration // how long Hold waited for it (Options.HoldWait)
}

func (e *HeldError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("launchlog: %s was removed or replaced under %s, which still uses the log through the file that was there and may issue from what it handed out; stop it before another file is used at this path", e.Path, e.Holder)
	}
	msg := fmt.Sprintf("launchlog: %s in %s is held by %s", e.Key, e.Path, e.Holder)
	if e.Waited > 0 {
		msg += fmt.Sprintf(", still after %v", e.Waited)
	}
	return msg
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Hold takes key for this process until the hold is closed, or the
// process ends, whichever comes first: a second Hold of the key, in any
// process of the host (this one included), through any name of the file
// (a hard link, a bind mount, another mount namespace) or through a copy
// of it, fails with a *HeldError that names the holder, or waits for it up
// to Options.HoldWait (and ctx).
//
// *Log is a store.Holder: a traceid, snowflake or flake128 generator on
// the log holds its node's key while it runs, and a Reserve call holds it
// for the call, so that two processes configured with the same node on one
// host cannot both issue IDs.
//
// A hold is two OS locks that the kernel releases when their process ends,
// however it ends, so a crashed holder frees its key at once:
//
//   - a lock on a byte of the log file itself, at an offset that the key
//     names, far past the file's data (an open file description lock):
//     every name and mount of the file reaches it, and no file that could
//     be removed holds it;
//   - a lock on the log's identity (written in the file when it is made)
//     and the key, which a copy of the file shares: an abstract Unix socket
//     of the host's network namespace.
//
// Both are Linux's; on other systems a hold is an flock of a file in the
// directory named by the log's path and HoldersSuffix, which reaches only
// the processes that name the log by one path.
//
// A hold is also recorded in the log: each Hold gives the key a new
// fencing token, and the hold's writes (store.Held) check in the same
// transaction that the token is still the key's, so that a holder that got
// past the locks stops with ErrNodeLost at the marks it wrote itself. The
// record names the holder for the error of the next process that asks.
// Locks on a network file system do not reliably reach other hosts, so
// Hold refuses a log on one (NFS, SMB, sshfs, ...) with ErrNetworkFS.
func (l *Log) Hold(ctx context.Context, key string) (idstore.Held, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("launchlog: Hold(%q) in %s: %w", key, l.path, err)
	}
	if err := l.checkDir(); err != nil {
		return nil, err
	}
	if err := checkLocalFS(l.path); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(l.holdWait)
	wait := time.Millisecond
	for {
		h, held, err := l.tryHold(key)
		if err != nil || h != nil {
			return h, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			held.Waited = l.holdWait
			return nil, held
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("launchlog: waiting for %s, held by %s: %w", key, held.Holder, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// tryHold takes key without waiting: the hold, or the *HeldError that
// says who has it.
func (l *Log) tryHold(key string) (*hold, *HeldError, error) {
	for range 3 {
		f, err := safefile.OpenFile(l.path, os.O_RDWR|os.O_CREATE, l.mode)
		if err != nil {
			return nil, nil, l.fileError(err)
		}
		h := &hold{log: l, key: key, file: f, unlock: func() error { return nil }, lost: make(chan struct{}), stop: make(chan struct{})}
		if !l.noOSLocks {
			unlock, ok, err := l.lockKey(f, key)
			if err != nil || !ok {
				_ = f.Close()
				if err != nil {
					return nil, nil, err
				}
				return nil, &HeldError{Path: l.path, Key: key, Holder: l.holderOf(key)}, nil
			}
			h.unlock = unlock
		}
		rec := Holder{Key: key, PID: os.Getpid(), Command: processCommand(), Since: l.clock.Now().UTC().Round(0)}
		err = h.takeOver(rec)
		if errors.Is(err, errReplaced) {
			_ = h.release()
			continue // the file at the path changed under the lock: lock the new one
		}
		if err != nil {
			_ = h.release()
			return nil, nil, err
		}
		if h.fi, err = f.Stat(); err != nil {
			_ = h.release()
			return nil, nil, fmt.Errorf("launchlog: hold %s in %s: %w", key, l.path, err)
		}
		if h.abs, err = filepath.Abs(l.path); err != nil {
			h.abs = l.path
		}
		h.wg.Add(1)
		go h.watch()
		return h, nil, nil
	}
	return nil, nil, fmt.Errorf("%w %s: the file was replaced three times while Hold(%q) locked it", ErrOpen, l.path, key)
}

// holderOf reads the holder of key recorded in the log, or the zero
// Holder.
func (l *Log) holderOf(key string) Holder {
	var h Holder
	_ = l.view(func(tx *bbolt.Tx) error {
		rec, err := l.readHold(bucket(tx, holdsBucket), key)
		h = rec.Holder
		return err
	})
	return h
}

// hold is a key held by this process: the log file, open and locked, and
// the key's fencing token.
type hold struct {
	log   *Log
	key   string
	token uint64
	abs   string      // the log's absolute path
	fi    os.FileInfo // of the held file, when the hold was taken

	mu     sync.Mutex
	file   *os.File     // nil once released
	unlock func() error // releases the lock on the key

	lost     chan struct{} // closed once the hold is known lost
	lostErr  atomic.Pointer[error]
	lostOnce sync.Once
	stop     chan struct{} // closed by release: the watch ends
	wg       sync.WaitGroup
}

// watchEvery is how often a hold looks at its log's path, to find its
// file removed or replaced without waiting for its next write.
const watchEvery = 100 * time.Millisecond

// watch checks the hold every watchEvery until it is lost or released.
func (h *hold) watch() {
	defer h.wg.Done()
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-h.lost:
			return
		case <-t.C:
			_ = h.Check(time.Time{})
		}
	}
}

// Check returns nil while the hold is in place, and an error of kind
// ErrNodeLost once it is known lost, for good: once the file it holds is
// no longer at the log's path (removed, or another file renamed over it),
// or a write found another holder's token. It reads the path (a stat), so
// that a generator that checks it before each new unit of time issues no
// ID in a unit that began after the file was removed. t is not used: a
// hold has no deadline.
func (h *hold) Check(time.Time) error {
	if err := h.lostErr.Load(); err != nil {
		return *err
	}
	fi, err := os.Stat(h.abs)
	switch {
	case err != nil:
		return h.lose(fmt.Errorf("%w: %s in %s: the log file was removed under the hold (%v); this process issues nothing more under it: restart it once the log is back in place", ErrNodeLost, h.key, h.log.path, err))
	case !os.SameFile(fi, h.fi):
		return h.lose(fmt.Errorf("%w: %s in %s: the log file was replaced under the hold (another file is at the path now: a restore, a new log); this process issues nothing more under it: restart it once the log is in place", ErrNodeLost, h.key, h.log.path))
	}
	return nil
}

// Done is closed once the hold is known lost (Check).
func (h *hold) Done() <-chan struct{} { return h.lost }

// lose records that the hold is lost, because of err, and returns the
// error Check returns from then on: the first loss found.
func (h *hold) lose(err error) error {
	h.lostOnce.Do(func() {
		h.lostErr.Store(&err)
		close(h.lost)
	})
	return *h.lostErr.Load()
}

// Close releases the key. It unlocks the file before closing it: a copy of
// the descriptor in a child that this process is starting (between its
// fork and its exec) would otherwise keep the lock a moment longer.
func (h *hold) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file == nil {
		return nil
	}
	if err := h.release(); err != nil {
		return fmt.Errorf("launchlog: release %s in %s: %w", h.key, h.log.path, err)
	}
	return nil
}

func (h *hold) release() error {
	if h.stop != nil {
		close(h.stop)
		h.wg.Wait()
	}
	err := h.unlock()
	if cerr := h.file.Close(); err == nil {
		err = cerr
	}
	h.file = nil
	return err
}

// processCommand names this process for its holder records: the program
// and the words after it up to the first flag, at most two, such as
// "idkit serve" or "idkit new traceid". It leaves out anything that looks
// like a value (a URL, a path), which may carry a secret.
func processCommand() string { return commandWords(os.Args) }

// commandWords is processCommand of the command line args.
func commandWords(args []string) string {
	if len(args) == 0 {
		return "pid"
	}
	words := []string{filepath.Base(args[0])}
	for _, a := range args[1:] {
		if len(words) == 3 || !isWord(a) {
			break
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

func isWord(s string) bool {
	if s == "" || s[0] == '-' {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

var (
	_ idstore.Holder        = (*Log)(nil)
	_ idstore.Held          = (*hold)(nil)
	_ idstore.BatchAdvancer = (*hold)(nil)
	_ idstore.Revocable     = (*hold)(nil)
)
