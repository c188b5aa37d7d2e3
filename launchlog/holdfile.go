//go:build !linux

package launchlog

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/idkit/idkit/internal/safefile"
)

// HoldersSuffix is appended to the log's path to name the directory of
// its hold files where holds are not Linux's locks on the log file
// itself: idkit.db keeps them in idkit.db.holders.
const HoldersSuffix = ".holders"

// lockKey takes key's hold file in the directory beside the log without
// waiting; ok is false if another holder has it. Only the processes that
// name the log by one path meet there.
func (l *Log) lockKey(_ *os.File, key string) (unlock func() error, ok bool, err error) {
	dir := l.path + HoldersSuffix
	if err := os.Mkdir(dir, dirMode(l.mode)); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, false, fmt.Errorf("%w %s: %w", ErrOpen, dir, err)
	}
	name := filepath.Join(dir, holdFileName(key))
	f, ok, err := tryHoldFile(name, l.mode)
	if errors.Is(err, safefile.ErrUnsafe) {
		return nil, false, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%w %s: %w", ErrOpen, name, err)
	}
	if !ok {
		return nil, false, nil
	}
	return func() error {
		err := unlockHold(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, true, nil
}

// tryHoldFile opens (or creates) the hold file name and takes its lock
// without waiting. ok is false, and f nil, if another holder has it. The
// file locked is the one at name when it returns, should anyone have
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
