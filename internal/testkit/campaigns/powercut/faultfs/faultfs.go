// Package faultfs is a FUSE file system for tests that fails the way a
// disk does. It passes every call through to a backing directory, except
// what a power cut would lose, which it keeps in memory:
//   - the writes and size changes of a file since its last fsync (or
//     fdatasync);
//   - the files created in a directory since that directory's last fsync.
//
// [FS.PowerCut] throws that layer away, optionally tearing the last unsynced
// write at a sector boundary, and mounts the file system again, as a
// reboot would. [FS.Inject] makes writes, or fsyncs, fail with ENOSPC or
// EIO; a failed fsync drops the file's unsynced data, as Linux may
// ("fsyncgate"), so that a program that retries it and trusts the data
// reads the old contents.
//
// Renames, unlinks, directories and metadata (mode, owner, times) reach
// the backing directory at once: only file data and new file names are
// volatile. File locks are the kernel's own, as on a local disk.
//
// The file system is served by a child process (the test binary again, see
// [Main]), never by the test process itself: a process that serves a FUSE
// file system and reads a memory map of a file on it (bbolt does) can
// deadlock, as a page fault waits for a server goroutine that a stopped
// world does not run.
//
// Mounting needs /dev/fuse and root; [Mount] skips the test, or fails it
// under CI=true, where either is missing.
package faultfs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// SectorSize is the unit a torn write keeps: a power cut during a write
// leaves whole sectors of it on the disk, new or old.
const SectorSize = 512

// Op names the operation a fault fails.
type Op int

const (
	// Write is write(2), and truncate(2) that grows a file.
	Write Op = iota + 1
	// Sync is fsync(2) and fdatasync(2) of a file.
	Sync
)

func (op Op) String() string {
	switch op {
	case Write:
		return "write"
	case Sync:
		return "fsync"
	}
	return fmt.Sprintf("Op(%d)", int(op))
}

// A Fault fails every operation On with Errno until [FS.Heal].
type Fault struct {
	On    Op
	Errno syscall.Errno // syscall.ENOSPC or syscall.EIO
}

func (f Fault) String() string { return fmt.Sprintf("%v on %v", f.Errno, f.On) }

// server is the file system, in the child process.
type server struct {
	backing, mnt string

	mu      sync.Mutex
	fuse    *fuse.Server                 // nil while unmounted
	files   map[uint64][]byte            // contents of files with unsynced changes, by backing inode
	created map[uint64]map[string]string // per directory inode, names created since its fsync → backing path
	last    *pendingWrite                // the last unsynced write, which a cut may tear
	fault   Fault
	failed  int // operations failed by the fault

	freezeAfter int           // writes until the file system freezes; 0 for never
	frozen      chan struct{} // made when it freezes, closed by thaw
	thawed      bool          // frozen is closed: writes and fsyncs fail until the cut
}

type pendingWrite struct {
	ino  uint64
	path string
	off  int64
	data []byte
}

func (f *server) inject(fault Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fault = fault
}

// freeze makes the file system freeze after n more writes (see
// FS.FreezeAfter).
func (f *server) freeze(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.freezeAfter = n
}

// thaw fails the writes and fsyncs that wait on a frozen file system, and
// every later one until the cut: a process killed while it waits cannot
// end before its call does, as FUSE waits for the answer.
func (f *server) thaw() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.frozen != nil && !f.thawed {
		close(f.frozen)
		f.thawed = true
	}
}

func (f *server) isFrozen() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frozen != nil
}

// wait blocks a write or fsync while the file system is frozen, until the
// cut, and then fails it: the caller holds f.mu, which wait releases
// while it blocks. It reports whether it failed the operation.
func (f *server) wait() bool {
	if f.frozen == nil {
		return false
	}
	ch := f.frozen
	f.mu.Unlock()
	<-ch
	f.mu.Lock()
	return true
}

func (f *server) failures() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

// A Cut says what a power cut threw away.
type Cut struct {
	Files   int   // files whose unsynced changes were lost
	Names   int   // file names lost, as their directory was not synced
	Torn    bool  // whether the last unsynced write was torn
	Kept    int64 // bytes of the torn write that reached the disk
	Written int64 // bytes of the torn write
}

// powerCut unmounts the file system, throws away every unsynced change
// (tearing the last write with tear) and mounts it again.
func (f *server) powerCut(tear bool, r *rand.Rand) (Cut, error) {
	f.thaw()
	if err := f.unmount(); err != nil {
		return Cut{}, err
	}
	f.mu.Lock()
	cut := Cut{Files: len(f.files)}
	if w := f.last; tear && w != nil {
		if err := tearWrite(w, r, &cut); err != nil {
			f.mu.Unlock()
			return cut, err
		}
	}
	for _, names := range f.created {
		for _, path := range names {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				f.mu.Unlock()
				return cut, fmt.Errorf("power cut: drop %s: %w", path, err)
			}
			cut.Names++
		}
	}
	f.files, f.created, f.last = nil, nil, nil
	f.freezeAfter, f.frozen, f.thawed = 0, nil, false
	f.mu.Unlock()
	return cut, f.mount()
}

// tearWrite writes the first sectors of w to the disk: up to a random
// sector boundary inside the write.
func tearWrite(w *pendingWrite, r *rand.Rand, cut *Cut) error {
	first := (w.off/SectorSize + 1) * SectorSize // first boundary after the write's start
	end := w.off + int64(len(w.data))
	cut.Written = int64(len(w.data))
	if first >= end {
		return nil // inside one sector: all or nothing, and here nothing
	}
	cut.Torn = true
	boundaries := (end-1-first)/SectorSize + 1 // boundaries strictly inside the write
	k := r.Int64N(boundaries + 1)              // 0 keeps nothing
	if k == 0 {
		return nil
	}
	cut.Kept = first + (k-1)*SectorSize - w.off
	file, err := os.OpenFile(w.path, os.O_WRONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		cut.Kept = 0
		return nil // its name was lost too
	}
	if err == nil {
		_, err = file.WriteAt(w.data[:cut.Kept], w.off)
		if err == nil {
			err = file.Sync()
		}
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("power cut: tear the last write to %s: %w", w.path, err)
	}
	return nil
}

func (f *server) mount() error {
	var st syscall.Stat_t
	if err := syscall.Stat(f.backing, &st); err != nil {
		return fmt.Errorf("stat %s: %w", f.backing, err)
	}
	// NewNode, unlike NodeWrapChilder, hands over the backing file's stat,
	// whose inode number keys the unsynced contents.
	//lint:ignore SA1019 NodeWrapChilder gets no stat
	root := &fs.LoopbackRoot{Path: f.backing, Dev: st.Dev, NewNode: f.newNode}
	root.RootNode = f.newNode(root, nil, "", &st)
	noCache := time.Duration(0)
	server, err := fs.Mount(f.mnt, root.RootNode, &fs.Options{
		EntryTimeout: &noCache, AttrTimeout: &noCache, NegativeTimeout: &noCache,
		MountOptions: fuse.MountOptions{Name: "faultfs", FsName: "faultfs", DirectMountStrict: true},
	})
	if err != nil {
		return fmt.Errorf("mount at %s: %w", f.mnt, err)
	}
	f.mu.Lock()
	f.fuse = server
	f.mu.Unlock()
	return nil
}

// unmount unmounts the file system, waiting out the kernel's release of
// the files of processes that just ended.
func (f *server) unmount() error {
	f.mu.Lock()
	server := f.fuse
	f.fuse = nil
	f.mu.Unlock()
	if server == nil {
		return nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := server.Unmount()
		if err == nil {
			server.Wait()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("unmount %s: %w", f.mnt, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// fail returns the fault's errno for op, or 0.
func (f *server) fail(op Op) syscall.Errno {
	if f.fault.On != op {
		return 0
	}
	f.failed++
	return f.fault.Errno
}

// contents returns the unsynced contents of the file ino, reading them
// from the disk through fd the first time.
func (f *server) contents(ino uint64, fd int) ([]byte, syscall.Errno) {
	if data, ok := f.files[ino]; ok {
		return data, 0
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, fs.ToErrno(err)
	}
	data := make([]byte, st.Size)
	for n := 0; n < len(data); {
		m, err := syscall.Pread(fd, data[n:], int64(n))
		if err != nil {
			return nil, fs.ToErrno(err)
		}
		if m == 0 {
			data = data[:n]
			break
		}
		n += m
	}
	if f.files == nil {
		f.files = map[uint64][]byte{}
	}
	f.files[ino] = data
	return data, 0
}

// resize sets the unsynced size of file ino.
func (f *server) resize(ino uint64, fd int, size int64) syscall.Errno {
	data, errno := f.contents(ino, fd)
	if errno != 0 {
		return errno
	}
	if size > int64(len(data)) {
		if errno := f.fail(Write); errno != 0 {
			return errno
		}
		data = append(data, make([]byte, size-int64(len(data)))...)
	}
	f.files[ino] = data[:size]
	return 0
}

// sync makes the unsynced changes of file ino durable.
func (f *server) sync(ino uint64, fd int) syscall.Errno {
	data, dirty := f.files[ino]
	if errno := f.fail(Sync); errno != 0 {
		if dirty {
			f.drop(ino)
		}
		return errno
	}
	if !dirty {
		return 0
	}
	if err := syscall.Ftruncate(fd, int64(len(data))); err != nil {
		return fs.ToErrno(err)
	}
	for n := 0; n < len(data); {
		m, err := syscall.Pwrite(fd, data[n:], int64(n))
		if err != nil {
			return fs.ToErrno(err)
		}
		n += m
	}
	if err := syscall.Fsync(fd); err != nil {
		return fs.ToErrno(err)
	}
	f.drop(ino)
	return 0
}

// drop forgets the unsynced changes of file ino.
func (f *server) drop(ino uint64) {
	delete(f.files, ino)
	if f.last != nil && f.last.ino == ino {
		f.last = nil
	}
}

func (f *server) newNode(root *fs.LoopbackRoot, _ *fs.Inode, _ string, st *syscall.Stat_t) fs.InodeEmbedder {
	return &node{LoopbackNode: fs.LoopbackNode{RootData: root}, fs: f, ino: st.Ino}
}

// node is a file or directory; it passes through what it does not
// override.
type node struct {
	fs.LoopbackNode
	fs  *server
	ino uint64 // of the backing file
}

var (
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
)

func (n *node) backingPath() string {
	return filepath.Join(n.RootData.Path, n.Path(nil))
}

// Open opens the backing file for reading and writing, whatever the
// caller asked for: the node needs both to load and sync its contents.
// O_TRUNC is an unsynced change like any other.
func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fd, err := syscall.Open(n.backingPath(), syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	h := &handle{node: n, fd: fd}
	if flags&syscall.O_TRUNC != 0 {
		n.fs.mu.Lock()
		errno := n.fs.resize(n.ino, fd, 0)
		n.fs.mu.Unlock()
		if errno != 0 {
			_ = syscall.Close(fd)
			return nil, 0, errno
		}
	}
	return h, 0, 0
}

// Create creates the file on the disk, but remembers its name as unsynced
// until its directory is synced.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	path := filepath.Join(n.backingPath(), name)
	_, statErr := os.Lstat(path)
	fd, err := syscall.Open(path, syscall.O_RDWR|syscall.O_CREAT|syscall.O_CLOEXEC|int(flags&syscall.O_EXCL), mode)
	if err != nil {
		return nil, nil, 0, fs.ToErrno(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		_ = syscall.Close(fd)
		return nil, nil, 0, fs.ToErrno(err)
	}
	child := n.fs.newNode(n.RootData, n.EmbeddedInode(), name, &st).(*node)
	inode := n.NewInode(ctx, child, fs.StableAttr{Mode: st.Mode & syscall.S_IFMT, Ino: st.Ino})
	n.fs.mu.Lock()
	defer n.fs.mu.Unlock()
	if errors.Is(statErr, os.ErrNotExist) {
		if n.fs.created == nil {
			n.fs.created = map[uint64]map[string]string{}
		}
		if n.fs.created[n.ino] == nil {
			n.fs.created[n.ino] = map[string]string{}
		}
		n.fs.created[n.ino][name] = path
	}
	if flags&syscall.O_TRUNC != 0 {
		if errno := n.fs.resize(st.Ino, fd, 0); errno != 0 {
			_ = syscall.Close(fd)
			return nil, nil, 0, errno
		}
	}
	out.FromStat(&st)
	n.fs.fixSize(st.Ino, &out.Attr)
	return inode, &handle{node: child, fd: fd}, 0, 0
}

// fixSize reports the unsynced size of file ino in a.
func (f *server) fixSize(ino uint64, a *fuse.Attr) {
	if data, ok := f.files[ino]; ok {
		a.Size = uint64(len(data))
		a.Blocks = (a.Size + 511) / 512
	}
}

func (n *node) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if errno := n.LoopbackNode.Getattr(ctx, nil, out); errno != 0 {
		return errno
	}
	n.fs.mu.Lock()
	defer n.fs.mu.Unlock()
	n.fs.fixSize(n.ino, &out.Attr)
	return 0
}

// Setattr passes mode, owner and times through, and keeps a new size as an
// unsynced change.
func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		fd := -1
		if h, ok := fh.(*handle); ok {
			fd = h.fd
		} else {
			var err error
			if fd, err = syscall.Open(n.backingPath(), syscall.O_RDONLY|syscall.O_CLOEXEC, 0); err != nil {
				return fs.ToErrno(err)
			}
			defer syscall.Close(fd)
		}
		n.fs.mu.Lock()
		errno := n.fs.resize(n.ino, fd, int64(size))
		n.fs.mu.Unlock()
		if errno != 0 {
			return errno
		}
		rest := *in
		rest.Valid &^= fuse.FATTR_SIZE
		in = &rest
	}
	if errno := n.LoopbackNode.Setattr(ctx, nil, in, out); errno != 0 {
		return errno
	}
	n.fs.mu.Lock()
	defer n.fs.mu.Unlock()
	n.fs.fixSize(n.ino, &out.Attr)
	return 0
}

// Unlink removes the file at once; a name never synced is forgotten.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if errno := n.LoopbackNode.Unlink(ctx, name); errno != 0 {
		return errno
	}
	n.fs.mu.Lock()
	defer n.fs.mu.Unlock()
	delete(n.fs.created[n.ino], name)
	return 0
}

// OpendirHandle wraps the directory's handle so that its fsync makes the
// names created in it durable.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	h, fuseFlags, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	return &dirHandle{node: n, h: h}, fuseFlags, 0
}

// dirHandle is an open directory.
type dirHandle struct {
	node *node
	h    fs.FileHandle
}

func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	return d.h.(fs.FileReaddirenter).Readdirent(ctx)
}

func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	return d.h.(fs.FileSeekdirer).Seekdir(ctx, off)
}

func (d *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	d.h.(fs.FileReleasedirer).Releasedir(ctx, flags)
}

// Fsyncdir makes the names created in the directory durable.
func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if errno := d.h.(fs.FileFsyncdirer).Fsyncdir(ctx, flags); errno != 0 {
		return errno
	}
	f := d.node.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.wait() {
		return syscall.EIO
	}
	delete(f.created, d.node.ino)
	return 0
}

// handle is an open regular file, on a descriptor of its backing file.
type handle struct {
	node *node
	fd   int
}

var (
	_ fs.FileReader    = (*handle)(nil)
	_ fs.FileWriter    = (*handle)(nil)
	_ fs.FileFsyncer   = (*handle)(nil)
	_ fs.FileFlusher   = (*handle)(nil)
	_ fs.FileReleaser  = (*handle)(nil)
	_ fs.FileGetattrer = (*handle)(nil)
)

func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	f := h.node.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if data, ok := f.files[h.node.ino]; ok {
		if off >= int64(len(data)) {
			return fuse.ReadResultData(nil), 0
		}
		n := copy(dest, data[off:])
		return fuse.ReadResultData(dest[:n]), 0
	}
	n, err := syscall.Pread(h.fd, dest, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	f := h.node.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.wait() {
		return 0, syscall.EIO
	}
	if errno := f.fail(Write); errno != 0 {
		return 0, errno
	}
	contents, errno := f.contents(h.node.ino, h.fd)
	if errno != 0 {
		return 0, errno
	}
	if end := off + int64(len(data)); end > int64(len(contents)) {
		contents = append(contents, make([]byte, end-int64(len(contents)))...)
	}
	copy(contents[off:], data)
	f.files[h.node.ino] = contents
	f.last = &pendingWrite{ino: h.node.ino, path: h.node.backingPath(), off: off, data: append([]byte(nil), data...)}
	if f.freezeAfter > 0 {
		if f.freezeAfter--; f.freezeAfter == 0 {
			f.frozen = make(chan struct{})
		}
	}
	return uint32(len(data)), 0
}

func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	f := h.node.fs
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.wait() {
		return syscall.EIO
	}
	return f.sync(h.node.ino, h.fd)
}

// Flush (close(2)) syncs nothing, as on a disk.
func (h *handle) Flush(ctx context.Context) syscall.Errno { return 0 }

func (h *handle) Release(ctx context.Context) syscall.Errno {
	return fs.ToErrno(syscall.Close(h.fd))
}

func (h *handle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	return h.node.Getattr(ctx, nil, out)
}
