package launchlog

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// A process that writes to a log registers, until it ends, which file it
// reaches the log's identity through: an abstract Unix socket named by the
// identity, the file's device and inode, and the process. Before its first
// write to a log, a process looks among the host's sockets (those of its
// network namespace, /proc/net/unix) for a process that reaches the same
// identity through another file, a copy: then it refuses, since the copy
// would hand out again the launches, generator ids and blocks that the
// original hands out. A process whose own file is no longer at the path
// it reached it by (a restore renamed another over it, or a power cut left
// another) goes on with the file there now.

// usePrefix begins the names of the sockets that say which file a process
// uses a log through.
const usePrefix = "@idkit/log/"

// uses holds this process's registrations: log identity (hex) → the file
// it uses that log through, and the socket that says so.
var uses struct {
	sync.Mutex
	by map[string]*use
}

type use struct {
	file string // device:inode
	path string // the name it was reached by
	ln   *net.UnixListener
}

// gone reports whether the file u registers is no longer at the path it
// was reached by: removed, or replaced by another file renamed over it (a
// restore, or what a power cut left). Its process then uses the log
// through the file there now.
func (u *use) gone() bool {
	fi, err := os.Stat(u.path)
	return err != nil || fileID(fi) != u.file
}

// fileID names the file fi describes by device and inode.
func fileID(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return strconv.FormatUint(st.Dev, 10) + ":" + strconv.FormatUint(st.Ino, 10)
}

// useLog registers that this process writes to the log of identity id
// through file f, unless another process of the host (or this one) uses
// that identity through another file; then it returns a *HeldError that
// names that process.
func (l *Log) useLog(id []byte, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("launchlog: %s: %w", l.path, err)
	}
	file := fileID(fi)
	if file == "" {
		return nil
	}
	key := hex.EncodeToString(id)
	uses.Lock()
	defer uses.Unlock()
	if u := uses.by[key]; u != nil {
		if u.file == file {
			return nil
		}
		if !u.gone() {
			return &HeldError{Path: l.path, Holder: Holder{PID: os.Getpid(), Command: processCommand()}, Copy: true}
		}
		_ = u.ln.Close()
		delete(uses.by, key)
	}
	name := usePrefix + key + "/" + file + "/" + strconv.Itoa(os.Getpid())
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
	if err != nil {
		return fmt.Errorf("launchlog: %s: register its use: %w", l.path, err)
	}
	if other, ok := otherUse(key, file); ok {
		ln.Close()
		return &HeldError{Path: l.path, Holder: other, Copy: true}
	}
	if uses.by == nil {
		uses.by = make(map[string]*use)
	}
	abs, err := filepath.Abs(l.path)
	if err != nil {
		abs = l.path
	}
	uses.by[key] = &use{file: file, path: abs, ln: ln}
	return nil
}

// otherUse looks for another process that uses the log of identity key
// through another file than file. This process's own sockets are passed
// over: its registrations are in uses, and one it has just closed can
// linger a moment in a child it forks, until the child runs its program.
func otherUse(key, file string) (Holder, bool) {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return Holder{}, false // no way to know: the holds still see each key's holder
	}
	defer f.Close()
	prefix := usePrefix + key + "/"
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		rest, ok := strings.CutPrefix(fields[len(fields)-1], prefix)
		if !ok {
			continue
		}
		other, pid, _ := strings.Cut(rest, "/")
		if other == file {
			continue
		}
		h := Holder{Command: "a process"}
		if n, err := strconv.Atoi(pid); err == nil {
			if n == os.Getpid() {
				continue
			}
			h.PID = n
			h.Command = commandOf(n)
		}
		return h, true
	}
	return Holder{}, false
}

// commandOf names process pid as processCommand names this one, from its
// command line, or "a process" where it cannot be read.
func commandOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return "a process"
	}
	return commandWords(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"))
}
