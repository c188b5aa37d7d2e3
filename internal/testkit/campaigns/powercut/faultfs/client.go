package faultfs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/testkit/testenv"
)

// envServe makes the test binary a file system server (see Main).
const envServe = "IDKIT_FAULTFS_SERVE"

// FS is a faulty file system, mounted and served by a child process. Its
// methods are safe for concurrent use.
type FS struct {
	t            testing.TB
	backing, mnt string

	mu    sync.Mutex
	cmd   *exec.Cmd
	enc   *json.Encoder
	dec   *json.Decoder
	stdin io.Closer
	watch chan struct{} // stops the watch of FreezeAfter
}

// request and reply are the lines the test and its server exchange.
type request struct {
	Op      string // mount, inject, freeze, thaw, frozen, cut, failed, unmount
	Backing string `json:",omitempty"`
	Mnt     string `json:",omitempty"`
	Fault   Fault  `json:",omitzero"`
	Tear    bool   `json:",omitempty"`
	Seed    uint64 `json:",omitempty"`
	Writes  int    `json:",omitempty"`
}

type reply struct {
	Error  string `json:",omitempty"`
	Cut    Cut    `json:",omitzero"`
	Failed int    `json:",omitempty"`
	Frozen bool   `json:",omitempty"`
}

// Main serves the file system when the test binary runs as its server,
// and returns at once otherwise. A package that mounts one calls it first
// in TestMain:
//
//	func TestMain(m *testing.M) {
//		faultfs.Main()
//		os.Exit(m.Run())
//	}
func Main() {
	if os.Getenv(envServe) == "" {
		return
	}
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "faultfs server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serve answers requests until its input ends, then unmounts.
func serve(in io.Reader, out io.Writer) error {
	f := &server{}
	defer f.unmount()
	dec, enc := json.NewDecoder(bufio.NewReader(in)), json.NewEncoder(out)
	for {
		var req request
		if err := dec.Decode(&req); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		var rep reply
		var err error
		switch req.Op {
		case "mount":
			f.backing, f.mnt = req.Backing, req.Mnt
			err = f.mount()
		case "inject":
			f.inject(req.Fault)
		case "cut":
			rep.Cut, err = f.powerCut(req.Tear, rand.New(rand.NewPCG(req.Seed, 0)))
		case "freeze":
			f.freeze(req.Writes)
		case "thaw":
			f.thaw()
		case "frozen":
			rep.Frozen = f.isFrozen()
		case "failed":
			rep.Failed = f.failures()
		case "unmount":
			err = f.unmount()
		default:
			err = fmt.Errorf("unknown request %q", req.Op)
		}
		if err != nil {
			rep.Error = err.Error()
		}
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
}

// Mount mounts a faulty file system over a new temporary backing directory
// at a new temporary mount point, served by a child process, and unmounts
// it when the test ends. The test binary must call Main in TestMain.
func Mount(t testing.TB) *FS {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil || os.Geteuid() != 0 {
		testenv.Missing(t, "faultfs needs /dev/fuse and root, to mount a FUSE file system")
	}
	f := &FS{t: t, backing: t.TempDir(), mnt: t.TempDir()}
	f.cmd = exec.Command(os.Args[0], "-test.run=^$")
	f.cmd.Env = append(os.Environ(), envServe+"=1")
	f.cmd.Stderr = os.Stderr
	stdin, err := f.cmd.StdinPipe()
	if err != nil {
		t.Fatalf("faultfs: %v", err)
	}
	stdout, err := f.cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("faultfs: %v", err)
	}
	if err := f.cmd.Start(); err != nil {
		t.Fatalf("faultfs: start the server: %v", err)
	}
	f.stdin, f.enc, f.dec = stdin, json.NewEncoder(stdin), json.NewDecoder(stdout)
	t.Cleanup(f.stop)
	if _, err := f.call(request{Op: "mount", Backing: f.backing, Mnt: f.mnt}); err != nil {
		t.Fatalf("faultfs: mount at %s: %v", f.mnt, err)
	}
	return f
}

// call sends one request and returns its reply.
func (f *FS) call(req request) (reply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enc.Encode(req); err != nil {
		return reply{}, fmt.Errorf("%s: the server is gone: %w", req.Op, err)
	}
	var rep reply
	if err := f.dec.Decode(&rep); err != nil {
		return reply{}, fmt.Errorf("%s: no answer from the server (does TestMain call faultfs.Main?): %w", req.Op, err)
	}
	if rep.Error != "" {
		return rep, fmt.Errorf("%s", rep.Error)
	}
	return rep, nil
}

// stop unmounts and ends the server, killing it if it does not end within
// ten seconds.
func (f *FS) stop() {
	f.mu.Lock()
	if f.watch != nil {
		close(f.watch)
		f.watch = nil
	}
	f.mu.Unlock()
	if _, err := f.call(request{Op: "unmount"}); err != nil {
		f.t.Errorf("faultfs: %v", err)
	}
	_ = f.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- f.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			f.t.Errorf("faultfs: the server ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		_ = f.cmd.Process.Kill()
		<-done
		f.t.Errorf("faultfs: the server did not end within 10 s of its input; killed")
	}
}

// Dir returns the mount point: the faulty directory.
func (f *FS) Dir() string { return f.mnt }

// Backing returns the backing directory: what the disk holds.
func (f *FS) Backing() string { return f.backing }

// Inject makes every operation fault.On fail with fault.Errno until Heal.
func (f *FS) Inject(fault Fault) {
	f.t.Helper()
	if _, err := f.call(request{Op: "inject", Fault: fault}); err != nil {
		f.t.Fatalf("faultfs: %v", err)
	}
}

// Heal ends the fault: space returns, or the disk answers again.
func (f *FS) Heal() { f.t.Helper(); f.Inject(Fault{}) }

// Failed returns how many operations the faults have failed so far.
func (f *FS) Failed() int {
	f.t.Helper()
	rep, err := f.call(request{Op: "failed"})
	if err != nil {
		f.t.Fatalf("faultfs: %v", err)
	}
	return rep.Failed
}

// PowerCut cuts the power: it unmounts the file system, throws away every
// unsynced change and remounts it. With tear and a last unsynced write
// that spans a sector boundary, the write's first sectors, a random number
// of them from r but not all, reach the disk. The caller must have ended
// every process that uses the file system first, as a cut would.
func (f *FS) PowerCut(tear bool, r *rand.Rand) (Cut, error) {
	var seed uint64
	if r != nil {
		seed = r.Uint64()
	}
	f.mu.Lock()
	if f.watch != nil {
		close(f.watch)
		f.watch = nil
	}
	f.mu.Unlock()
	rep, err := f.call(request{Op: "cut", Tear: tear, Seed: seed})
	return rep.Cut, err
}

// Thaw fails the writes and fsyncs waiting on a frozen file system, and
// every later one until the next PowerCut. A killed process that waits on
// one cannot end until then: FUSE waits for the answer.
func (f *FS) Thaw() {
	f.t.Helper()
	if _, err := f.call(request{Op: "thaw"}); err != nil {
		f.t.Fatalf("faultfs: %v", err)
	}
}

// FreezeAfter makes the file system stop, as a machine that loses power
// in the middle of a transaction: after n more writes, the last of them
// applied but not synced, every write and fsync waits until Thaw or the
// next PowerCut, which fail them. The channel it returns is closed once the
// file system froze.
func (f *FS) FreezeAfter(n int) <-chan struct{} {
	f.t.Helper()
	if _, err := f.call(request{Op: "freeze", Writes: n}); err != nil {
		f.t.Fatalf("faultfs: %v", err)
	}
	frozen, stop := make(chan struct{}), make(chan struct{})
	f.mu.Lock()
	if f.watch != nil {
		close(f.watch)
	}
	f.watch = stop
	f.mu.Unlock()
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if rep, err := f.call(request{Op: "frozen"}); err != nil || rep.Frozen {
				close(frozen)
				return
			}
		}
	}()
	return frozen
}
