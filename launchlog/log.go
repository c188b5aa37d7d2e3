package launchlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/boltcheck"
	"github.com/idkit/idkit/internal/safefile"
)

// DefaultTimeout is how long an operation waits for the file lock when
// Options.Timeout is zero.
const DefaultTimeout = time.Second

// DefaultMode is the permission of a new file when Options.Mode is zero.
const DefaultMode fs.FileMode = 0o600

// Options configure a Log.
type Options struct {
	// Path names the bbolt file. It is required. The first write creates
	// the file; its directory must exist.
	Path string
	// Timeout bounds how long one operation waits for the file lock, which
	// another process (or another operation of this one) may hold. Zero
	// means DefaultTimeout; a negative timeout is invalid. There is no way
	// to wait forever.
	Timeout time.Duration
	// Mode is the permission of the file when an operation creates it. Zero
	// means DefaultMode. The log refuses a file that every user may write,
	// or that another user (but root) owns, and a path that is a symbolic
	// link.
	Mode fs.FileMode
	// HoldWait is how long Hold waits for a key that another process
	// holds. Zero means it fails at once with a *HeldError; a negative wait
	// is invalid.
	HoldWait time.Duration
	// Clock stamps Launch.StartedAt and the holder records. Nil means the
	// system clock; tests pass a fake one.
	Clock clock.Clock
}

// Log is a launch log kept in one bbolt file. A Log is a handle on a path,
// not an open file: each method opens the file, takes its lock (waiting at
// most Options.Timeout), runs one transaction and closes the file again, so
// that several processes on a host can share it. Methods that change the
// file fsync it before they return.
//
// A Log is safe for concurrent use; operations on one path from one process
// take turns without polling the file lock.
type Log struct {
	path     string
	timeout  time.Duration
	holdWait time.Duration
	mode     fs.FileMode
	clock    clock.Clock
	gate     chan struct{} // one token per path in this process

	dirSynced atomic.Bool // the file's directory was fsynced after a write (syncDir)

	// noOSLocks is set only by tests that take holds past the OS locks, to
	// show that the log's fencing alone keeps a second holder from issuing.
	noOSLocks bool
}

// gates holds one gate per absolute path, shared by the Logs of a process.
var gates sync.Map // string → chan struct{}

// New returns a Log for o.Path. It does not touch the file; the first
// operation reports a missing directory, a locked or corrupt file.
func New(o Options) (*Log, error) {
	if o.Path == "" {
		return nil, fmt.Errorf("%w: Options.Path is empty, want a file path", ErrInvalid)
	}
	if o.Timeout < 0 {
		return nil, fmt.Errorf("%w: Options.Timeout = %v, want > 0 (or 0 for %v)", ErrInvalid, o.Timeout, DefaultTimeout)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.HoldWait < 0 {
		return nil, fmt.Errorf("%w: Options.HoldWait = %v, want >= 0", ErrInvalid, o.HoldWait)
	}
	if o.Mode&^fs.ModePerm != 0 || o.Mode&0o002 != 0 {
		return nil, fmt.Errorf("%w: Options.Mode = %v, want permission bits only (0..=0o777), none for other users' writes (0o002): a file every user may write is refused when opened", ErrInvalid, o.Mode)
	}
	if o.Mode == 0 {
		o.Mode = DefaultMode
	}
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	key := o.Path
	if abs, err := filepath.Abs(o.Path); err == nil {
		key = abs
	}
	gate, _ := gates.LoadOrStore(key, make(chan struct{}, 1))
	return &Log{
		path:     o.Path,
		timeout:  o.Timeout,
		holdWait: o.HoldWait,
		mode:     o.Mode,
		clock:    o.Clock,
		gate:     gate.(chan struct{}),
	}, nil
}

// Path returns the path of the log's file.
func (l *Log) Path() string { return l.path }

// update runs fn in one read-write transaction, committed and fsynced
// unless fn fails.
func (l *Log) update(fn func(*bbolt.Tx) error) error { return l.runOn(true, nil, fn) }

// view runs fn in one read-only transaction. A file that does not exist
// yet, or is empty, reads as an empty log: fn gets a nil Tx.
func (l *Log) view(fn func(*bbolt.Tx) error) error { return l.runOn(false, nil, fn) }

// txMode is what a transaction of runTx may do.
type txMode int

const (
	readTx  txMode = iota
	writeTx        // a write, refused where the file is not the log's home
	adoptTx        // a write that makes the file the log's home (Log.Adopt)
)

// runOn opens the file, runs fn in one transaction and closes the file.
// With held, the open file of a hold, it fails with errReplaced unless the
// file it opened is that one. It never panics: bbolt may panic (or fault
// on its memory map) on a damaged file, and runOn turns that into
// ErrCorrupt. A write is refused with a *DisplacedError where the file is
// not the log's home (checkHome).
func (l *Log) runOn(write bool, held *os.File, fn func(*bbolt.Tx) error) error {
	mode := readTx
	if write {
		mode = writeTx
	}
	return l.runTx(mode, held, func(tx *bbolt.Tx, _ *DisplacedError) error { return fn(tx) })
}

// runTx is runOn for a mode; fn is told, in an adoptTx, why the file was
// not the log's home (nil if it was).
func (l *Log) runTx(mode txMode, held *os.File, fn func(*bbolt.Tx, *DisplacedError) error) (err error) {
	write := mode != readTx
	deadline := time.Now().Add(l.timeout)
	if err := l.enter(); err != nil {
		return err
	}
	defer func() { <-l.gate }()

	if !write {
		empty, err := l.missing()
		if err != nil {
			return err
		}
		if empty && held != nil {
			return errReplaced // a hold wrote its file: removed or emptied since
		}
		if empty {
			return fn(nil, nil)
		}
	}

	// A fault on bbolt's memory map (a file shorter than its pages claim)
	// becomes a panic, recovered below, instead of killing the process.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	var (
		db      *bbolt.DB
		file    *os.File
		hookErr error // why openFile failed
	)
	defer func() {
		if r := recover(); r != nil {
			release(db, file)
			err = fmt.Errorf("%w: %s: panic while reading it: %v", ErrCorrupt, l.path, r)
		}
	}()
	// openFile opens the file for bbolt and, where it can, locks and
	// verifies it before bbolt reads anything: bbolt's own lock on the
	// same descriptor then succeeds at once.
	openFile := func(name string, flag int, perm os.FileMode) (*os.File, error) {
		if held != nil {
			flag &^= os.O_CREATE // a held file that is gone is not made again
		}
		f, err := safefile.OpenFile(name, flag, perm) // no link, no other user's file
		if err != nil {
			hookErr = l.fileError(err)
			if held != nil && errors.Is(err, fs.ErrNotExist) {
				hookErr = errReplaced
			}
			return nil, err
		}
		if earlyLock {
			if err = lockFile(f, write, deadline); err != nil {
				hookErr = l.lockError(err)
			} else if err = boltcheck.File(f); err != nil {
				hookErr = fmt.Errorf("%w: %s: %w", ErrCorrupt, l.path, err)
			}
			if err != nil {
				_ = f.Close()
				return nil, err
			}
		}
		file = f
		return f, nil
	}
	db, err = bbolt.Open(l.path, l.mode, &bbolt.Options{
		Timeout:  max(time.Until(deadline), time.Nanosecond),
		ReadOnly: !write,
		OpenFile: openFile,
	})
	if err != nil {
		if hookErr != nil {
			return hookErr
		}
		return l.openError(err)
	}
	if !earlyLock {
		if err := boltcheck.File(file); err != nil {
			_ = db.Close()
			return fmt.Errorf("%w: %s: %w", ErrCorrupt, l.path, err)
		}
	}
	if held != nil && !sameFile(file, held) {
		_ = db.Close()
		return errReplaced
	}
	var (
		fnErr     error
		after     stamp // to write on the file once the write commits
		displaced *DisplacedError
	)
	txFn := func(tx *bbolt.Tx) error {
		if fnErr = l.checkRoot(tx); fnErr == nil && write {
			after, displaced, fnErr = l.checkHome(tx, file, mode == adoptTx)
		}
		if fnErr == nil {
			fnErr = fn(tx, displaced)
		}
		return fnErr
	}
	if write {
		err = db.Update(txFn)
	} else {
		err = db.View(txFn)
	}
	if err != nil && err != fnErr {
		err = l.writeError("commit", err)
	}
	if err == nil && after.ID != nil {
		// Stamped while bbolt's lock is held, so that stamps follow the
		// commits. A stamp not written leaves the write begun, not
		// committed, which the next write accepts: it only weakens the
		// check for a backup written back in place by one write.
		_ = writeStamp(file, after)
	}
	if cerr := db.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("launchlog: close %s: %w", l.path, cerr)
	}
	if err == nil && write {
		err = l.syncDir()
	}
	return err
}

// sameFile reports whether a and b are open on one file.
func sameFile(a, b *os.File) bool {
	ai, err := a.Stat()
	if err != nil {
		return false
	}
	bi, err := b.Stat()
	return err == nil && os.SameFile(ai, bi)
}

// syncDir makes the file's name durable, once per process and path: the
// first write of a process fsyncs the directory, so that a power cut
// cannot take away a file that a process created (or found created, by a
// process that crashed before it synced the name) and handed values from.
func (l *Log) syncDir() error {
	if l.dirSynced.Load() || runtime.GOOS == "windows" { // Windows cannot fsync a directory; NTFS journals names
		return nil
	}
	dir := filepath.Dir(l.path)
	d, err := os.Open(dir)
	if err == nil {
		err = d.Sync()
		if cerr := d.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("%w %s: fsync its directory %s: %w", ErrWrite, l.path, dir, err)
	}
	l.dirSynced.Store(true)
	return nil
}

// writeError explains why a change did not commit: an error from the disk
// is ErrWrite, anything else bbolt's own.
func (l *Log) writeError(what string, err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return fmt.Errorf("%w %s: %s: %w", ErrWrite, l.path, what, err)
	}
	return fmt.Errorf("launchlog: %s %s: %w", what, l.path, err)
}

// release frees the lock and what else it can after bbolt panicked with
// db (nil if it panicked in Open) on file. A memory map holds the file's
// lock, so closing the file alone is not enough: it closes db if that
// finishes at once, else it unlocks and closes the file and leaves the
// map to the process.
func release(db *bbolt.DB, file *os.File) {
	if db != nil {
		closed := make(chan bool, 1)
		go func() {
			defer func() {
				if recover() != nil {
					closed <- false
				}
			}()
			closed <- db.Close() == nil
		}()
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case ok := <-closed:
			if ok {
				return
			}
		case <-t.C:
		}
	}
	if file != nil {
		unlock(file)
		_ = file.Close()
	}
}

// enter takes this process's turn on the path, waiting at most the
// timeout.
func (l *Log) enter() error {
	select {
	case l.gate <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(l.timeout)
	defer t.Stop()
	select {
	case l.gate <- struct{}{}:
		return nil
	case <-t.C:
		return l.lockedError()
	}
}

func (l *Log) lockedError() error {
	return fmt.Errorf("%w: %s not free within %v: %w", ErrLocked, l.path, l.timeout, berrors.ErrTimeout)
}

// missing reports whether the file does not exist yet, or is empty, so
// that a read need not create it. A missing directory is an error.
func (l *Log) missing() (bool, error) {
	fi, err := os.Stat(l.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := l.checkDir(); err != nil {
			return false, err
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("%w %s: %w", ErrOpen, l.path, err)
	case fi.IsDir():
		return false, fmt.Errorf("%w %s: is a directory, want a file", ErrOpen, l.path)
	}
	return fi.Size() == 0, nil
}

func (l *Log) checkDir() error {
	dir := filepath.Dir(l.path)
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%w %s: directory %s: %w", ErrOpen, l.path, dir, err)
	}
	return nil
}

// fileError explains why the file could not be opened.
func (l *Log) fileError(err error) error {
	if errors.Is(err, safefile.ErrUnsafe) {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if derr := l.checkDir(); derr != nil {
			return derr
		}
	}
	return fmt.Errorf("%w %s: %w", ErrOpen, l.path, err)
}

// lockError explains why the file could not be locked.
func (l *Log) lockError(err error) error {
	if errors.Is(err, berrors.ErrTimeout) {
		return l.lockedError()
	}
	return fmt.Errorf("launchlog: lock %s: %w", l.path, err)
}

// openError explains why bbolt.Open failed after the file was opened.
func (l *Log) openError(err error) error {
	var errno syscall.Errno
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return l.lockedError()
	case errors.As(err, &errno) && (errno == syscall.ENOSPC || errno == syscall.EIO || errno == syscall.EDQUOT):
		return l.writeError("open", err) // bbolt writes a new file's first pages in Open
	case errors.As(err, &errno):
		return fmt.Errorf("launchlog: open %s: %w", l.path, err)
	default:
		// The file opened and locked, but bbolt cannot read it.
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, l.path, err)
	}
}
