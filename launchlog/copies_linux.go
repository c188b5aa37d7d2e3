package launchlog

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// A process that writes to a log registers, until it ends, which file it
// writes the log through at its path: an abstract Unix socket named by
// the path, the log's identity, the file's place (its file system and
// inode, as the log's home names it) and the process. The identity tells
// a new log from the old one where a new file gets the inode number that
// the removed one freed. Before its
// first write through a path, a process looks among the sockets of its
// network namespace (/proc/net/unix) for another that writes through the
// same path but another file: a file that was removed or replaced under
// it (a cleaner, a new log made in its place, a restore). Then it
// refuses, naming that process, which may still issue from what the old
// file handed it. And a process whose own file is no longer at the path
// writes no more through it (a DisplacedError of kind Replaced).

// usePrefix begins the names of the sockets that say which file a process
// writes a log path through.
const usePrefix = "@idkit/path/"

// uses holds this process's registrations: path key → the file it writes
// the log at that path through, and the socket that says so.
var uses struct {
	sync.Mutex
	by map[string]*use
}

type use struct {
	file  string // identity:fs type:fs id:inode
	place place  // the file's
	ln    *net.UnixListener
}

// pathKey names the log's absolute path, in this process's mount
// namespace, in a socket name: two containers that share the host's
// network but not its mounts may each have a log of their own at one
// path.
func (l *Log) pathKey() string {
	abs, err := filepath.Abs(l.path)
	if err != nil {
		abs = l.path
	}
	ns, _ := os.Readlink("/proc/self/ns/mnt")
	sum := sha256.Sum256([]byte(ns + "\x00" + abs))
	return hex.EncodeToString(sum[:8])
}

// useLog registers that this process writes to the log of identity id at
// its path through file f. It fails with a *DisplacedError if this process wrote
// through another file at the path before, and with a *HeldError that
// names the process if another one of the host does.
func (l *Log) useLog(f *os.File, id []byte) error {
	p, ok := placeOf(f)
	if !ok {
		return nil
	}
	// The file's place, as the home names it (a FUSE file system mounted
	// again is the same), and the log's identity.
	file := fmt.Sprintf("%x:%x:%x:%d", id[:4], p.FSType, p.FSID, p.Inode)
	key := l.pathKey()
	uses.Lock()
	defer uses.Unlock()
	if u := uses.by[key]; u != nil {
		if u.file == file {
			return nil
		}
		return &DisplacedError{Path: l.path, Why: Replaced}
	}
	name := usePrefix + key + "/" + file + "/" + strconv.Itoa(os.Getpid())
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: name, Net: "unix"})
	if err != nil {
		return fmt.Errorf("launchlog: %s: register its use: %w", l.path, err)
	}
	if other, ok := otherUse(key, file); ok {
		ln.Close()
		return &HeldError{Path: l.path, Holder: other}
	}
	if uses.by == nil {
		uses.by = make(map[string]*use)
	}
	uses.by[key] = &use{file: file, place: p, ln: ln}
	return nil
}

// Check returns nil while the file this process writes the log through is
// the one at the log's path, or while it has written none through it; and
// a *DisplacedError (Replaced) once that file was removed, or another put
// in its place: what the log handed this process (a decimalid generator
// id, a segment block) could then be handed out again from a file at the
// path. It opens the path, so a caller that issues many IDs looks now and
// then, not per ID. A new file that got the removed one's inode number
// passes here; the registration still refuses it to other processes.
func (l *Log) Check() error {
	uses.Lock()
	u := uses.by[l.pathKey()]
	uses.Unlock()
	if u == nil {
		return nil
	}
	f, err := os.Open(l.path)
	if err != nil {
		return &DisplacedError{Path: l.path, Why: Replaced}
	}
	defer f.Close()
	if p, ok := placeOf(f); ok && p != u.place {
		return &DisplacedError{Path: l.path, Why: Replaced}
	}
	return nil
}

// otherUse looks for another process that writes the log at the path of
// key through another file than file. This process's own sockets are
// passed over: its registrations are in uses, and one it has just closed
// can linger a moment in a child it forks, until the child runs its
// program.
func otherUse(key, file string) (Holder, bool) {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return Holder{}, false // no way to know: the holds and homes still stand
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
