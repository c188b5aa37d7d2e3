package launchlog

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/idkit/idkit/internal/safefile"
	idstore "github.com/idkit/idkit/store"
)

// HoldersSuffix is appended to the log's path to name the directory of
// its hold files: idkit.db keeps them in idkit.db.holders.
const HoldersSuffix = ".holders"

// Holder describes the process that holds a key: the record it writes in
// the key's hold file.
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
	Path   string        // the log
	Key    string        // the key asked for
	Holder Holder        // who holds it, as its record says
	Waited time.Duration // how long Hold waited for it (Options.HoldWait)
}

func (e *HeldError) Error() string {
	msg := fmt.Sprintf("launchlog: %s in %s is held by %s", e.Key, e.Path, e.Holder)
	if e.Waited > 0 {
		msg += fmt.Sprintf(", still after %v", e.Waited)
	}
	return msg
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Hold takes key for this process until the Closer is closed, or the
// process ends, whichever comes first: a second Hold of the key, in any
// process of the host (this one included), fails with a *HeldError that
// names the holder, or waits for it up to Options.HoldWait (and ctx).
//
// *Log is a store.Holder: a traceid, snowflake or flake128 generator on
// the log holds its node's key while it runs, and a Reserve call holds it
// for the call, so that two processes configured with the same node on one
// host cannot both issue IDs.
//
// A hold is an exclusive flock(2) on a file of its own in the directory
// named by the log's path and HoldersSuffix, which Hold creates; the
// kernel releases it when the holding process ends, however it ends, so
// a crashed holder frees its key at once. The file holds the Holder
// record as JSON, for the error of the next process that asks. Locks on a
// network file system do not reliably reach other hosts, so Hold refuses
// a log on one (NFS, SMB, sshfs, ...) with ErrNetworkFS.
func (l *Log) Hold(ctx context.Context, key string) (io.Closer, error) {
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
	dir := l.path + HoldersSuffix
	if err := os.Mkdir(dir, dirMode(l.mode)); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w %s: %w", ErrOpen, dir, err)
	}
	name := filepath.Join(dir, holdFileName(key))
	f, err := l.lockHoldFile(ctx, key, name)
	if err != nil {
		return nil, err
	}
	rec, _ := json.Marshal(Holder{Key: key, PID: os.Getpid(), Command: processCommand(), Since: l.clock.Now().UTC().Round(0)})
	rec = append(rec, '\n')
	if _, err = f.WriteAt(rec, 0); err == nil {
		err = f.Truncate(int64(len(rec)))
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("launchlog: write the holder of %q to %s: %w", key, name, err)
	}
	return &hold{log: l, key: key, file: f}, nil
}

// lockHoldFile opens the hold file name and locks it, waiting up to
// Options.HoldWait for a holder to let go.
func (l *Log) lockHoldFile(ctx context.Context, key, name string) (*os.File, error) {
	deadline := time.Now().Add(l.holdWait)
	wait := time.Millisecond
	for {
		f, ok, err := tryHoldFile(name, l.mode)
		if errors.Is(err, safefile.ErrUnsafe) {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrOpen, name, err)
		}
		if ok {
			return f, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, &HeldError{Path: l.path, Key: key, Holder: readHolder(name), Waited: l.holdWait}
		}
		t := time.NewTimer(min(wait, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("launchlog: waiting for %s, held by %s: %w", key, readHolder(name), ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// tryHoldFile opens (or creates) the hold file name and takes its lock
// without waiting. ok is false, and f nil, if another holder has it. The
// file locked is the one at name when Hold returns, should anyone have
// removed the file meanwhile.
func tryHoldFile(name string, mode fs.FileMode) (f *os.File, ok bool, err error) {
	for {
		f, err = safefile.OpenFile(name, os.O_RDWR|os.O_CREATE, mode)
		if err != nil {
			return nil, false, err
		}
		if ok, err = lockHold(f); err != nil || !ok {
			_ = f.Close()
			return nil, false, err
		}
		fi, ferr := f.Stat()
		ni, nerr := os.Stat(name)
		if ferr == nil && nerr == nil && os.SameFile(fi, ni) {
			return f, true, nil
		}
		_ = f.Close() // the file was removed or replaced: lock the new one
	}
}

// readHolder reads the holder record in the hold file name; the zero
// Holder if there is none yet, as when the holder took the lock a moment
// ago.
func readHolder(name string) Holder {
	var h Holder
	for range 3 {
		b, err := os.ReadFile(name)
		if err == nil && json.NewDecoder(bytes.NewReader(b)).Decode(&h) == nil && h.PID != 0 {
			return h
		}
		time.Sleep(2 * time.Millisecond) // the holder may be writing it
	}
	return Holder{}
}

// hold is a key held by this process: the open, locked hold file.
type hold struct {
	log  *Log
	key  string
	mu   sync.Mutex
	file *os.File // nil once released
}

// Close releases the key. It clears the holder record first, so that the
// file says the key is free, and unlocks the file before closing it: a
// copy of the descriptor in a child that this process is starting (between
// its fork and its exec) would otherwise keep the lock a moment longer.
func (h *hold) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file == nil {
		return nil
	}
	_ = h.file.Truncate(0)
	err := unlockHold(h.file)
	if cerr := h.file.Close(); err == nil {
		err = cerr
	}
	h.file = nil
	if err != nil {
		return fmt.Errorf("launchlog: release %s in %s: %w", h.key, h.log.path, err)
	}
	return nil
}

// holdFileName is the name of key's hold file: the key with every byte
// but letters, digits and ".,=_-" written as %XX, and ".lock"; a long key
// is cut and a digest of it appended, to stay within a file name's 255
// bytes.
func holdFileName(key string) string {
	var b strings.Builder
	for i := range len(key) {
		c := key[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(".,=_-", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	name := b.String()
	if len(name) > 160 {
		sum := sha256.Sum256([]byte(key))
		name = name[:100] + "~" + hex.EncodeToString(sum[:16])
	}
	return name + ".lock"
}

// dirMode is mode with the search bit set wherever it grants reading.
func dirMode(mode fs.FileMode) fs.FileMode { return mode | mode&0o444>>2 }

// processCommand names this process for its holder records: the program
// and the words after it up to the first flag, at most two, such as
// "idkit serve" or "idkit new traceid". It leaves out anything that looks
// like a value (a URL, a path), which may carry a secret.
func processCommand() string {
	if len(os.Args) == 0 {
		return "pid"
	}
	words := []string{filepath.Base(os.Args[0])}
	for _, a := range os.Args[1:] {
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

var _ idstore.Holder = (*Log)(nil)
