// Package segmenttest runs segment allocators in several OS processes
// against one block store, to show what a store's own tests cannot show
// in one process: that processes sharing the store never issue one ID
// twice, also when they are killed at random moments and restarted.
//
// A store's test package uses it in three steps. Its TestMain hands
// control to Child, which returns at once in the test process and runs the
// allocator in a child process (the same test binary, started again with
// the environment this package sets):
//
//	func TestMain(m *testing.M) {
//		segmenttest.Child(func() (segment.BlockStore, error) {
//			return mystore.Open(os.Getenv("MYSTORE_DSN"))
//		})
//		os.Exit(m.Run())
//	}
//
// Its tests then run the children, passing what open needs (an address, a
// path, a table name) as environment variables of the form "KEY=value":
//
//	func TestProcesses(t *testing.T) {
//		segmenttest.Processes(t, 4, 100_000, "MYSTORE_DSN="+dsn)
//	}
//
//	func TestKillLoop(t *testing.T) {
//		segmenttest.KillLoop(t, 20, "MYSTORE_DSN="+dsn)
//	}
//
// Each call uses a tag of its own. A child writes every ID it is given to
// a file, 8 bytes big-endian each, after Next returned it. Outage checks
// one allocator in the test process against a store that a test takes
// down and brings back, and Bench measures a store the way every store is
// measured.
//
// It is for tests only; nothing in the library imports it.
package segmenttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/segment"
)

// The environment of a child process. A test may override the steps by
// passing these in env.
const (
	EnvChild   = "IDKIT_SEGMENT_CHILD"    // "1" in a child
	EnvTag     = "IDKIT_SEGMENT_TAG"      // the tag
	EnvCount   = "IDKIT_SEGMENT_COUNT"    // IDs to issue; 0: until killed
	EnvOut     = "IDKIT_SEGMENT_OUT"      // the file the IDs go to
	EnvStep    = "IDKIT_SEGMENT_STEP"     // Options.Step
	EnvMinStep = "IDKIT_SEGMENT_MIN_STEP" // Options.MinStep
	EnvMaxStep = "IDKIT_SEGMENT_MAX_STEP" // Options.MaxStep
	// EnvProgress names a file of two big-endian uint64s that the child
	// rewrites around every reservation: the reservations started and
	// those returned. The page cache keeps them through a SIGKILL, so the
	// test can tell whether a kill landed during a reservation.
	EnvProgress = "IDKIT_SEGMENT_PROGRESS"
)

// ready is what a child prints on its standard output once it has issued
// its first ID.
const ready = "issuing"

// Child runs the body of a child process and exits, if this process is a
// child (EnvChild is set); otherwise it returns at once. Call it first
// thing in TestMain, with a function that opens the store from the
// environment.
//
// The child opens the store, creates an Allocator for EnvTag with the
// steps of the environment and a timeout of 30s, and issues EnvCount IDs
// (forever if 0) one Next at a time, writing each to EnvOut. It exits 0
// when done, 1 with the error on standard error when anything fails.
func Child(open func() (segment.BlockStore, error)) {
	if os.Getenv(EnvChild) == "" {
		return
	}
	if err := runChild(open); err != nil {
		fmt.Fprintln(os.Stderr, "segmenttest child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runChild(open func() (segment.BlockStore, error)) error {
	count, err := envInt(EnvCount)
	if err != nil {
		return err
	}
	o := segment.Options{Tag: os.Getenv(EnvTag), Timeout: 30 * time.Second}
	for _, f := range []struct {
		env string
		dst *int64
	}{{EnvStep, &o.Step}, {EnvMinStep, &o.MinStep}, {EnvMaxStep, &o.MaxStep}} {
		if *f.dst, err = envInt(f.env); err != nil {
			return err
		}
	}
	if o.Store, err = open(); err != nil {
		return fmt.Errorf("open the store: %w", err)
	}
	if path := os.Getenv(EnvProgress); path != "" {
		p, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		o.Store = &progressStore{BlockStore: o.Store, f: p}
	}
	a, err := segment.New(context.Background(), o)
	if err != nil {
		return err
	}
	defer a.Close()
	f, err := os.OpenFile(os.Getenv(EnvOut), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// Killed children lose what is buffered, which only hides IDs from
	// the check; flushing often keeps most of them visible.
	w := bufio.NewWriterSize(f, 8*256)
	var buf [8]byte
	for i := int64(0); count == 0 || i < count; i++ {
		id, err := a.Next()
		if err != nil {
			return err
		}
		binary.BigEndian.PutUint64(buf[:], uint64(id))
		if _, err := w.Write(buf[:]); err != nil {
			return err
		}
		if i == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
			fmt.Println(ready)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// progressStore counts the reservations of the store it wraps in a file
// (EnvProgress) as they start and as they return.
type progressStore struct {
	segment.BlockStore
	f *os.File

	mu                sync.Mutex
	started, returned uint64
}

func (p *progressStore) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	p.record(1, 0)
	defer p.record(0, 1)
	return p.BlockStore.ReserveBlock(ctx, tag, step)
}

// record adds to the counts and writes both with one pwrite, which a kill
// cannot cut in two.
func (p *progressStore) record(started, returned uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started += started
	p.returned += returned
	var buf [16]byte
	binary.BigEndian.PutUint64(buf[:8], p.started)
	binary.BigEndian.PutUint64(buf[8:], p.returned)
	_, _ = p.f.WriteAt(buf[:], 0)
}

func envInt(name string) (int64, error) {
	s := os.Getenv(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", name, s, err)
	}
	return n, nil
}

// child is one child process started by a test.
type child struct {
	cmd      *exec.Cmd
	out      string        // the file of its IDs
	progress string        // its EnvProgress file
	stderr   *bytes.Buffer // what it wrote on standard error
	ready    chan struct{} // closed once it printed ready
	done     chan struct{} // closed once it exited
	err      error         // how it exited, set before done is closed
}

// start starts a child issuing count IDs (0: until killed) for tag.
func start(t *testing.T, tag string, count int, env []string) *child {
	t.Helper()
	dir := t.TempDir()
	out, progress := dir+"/ids", dir+"/progress"
	for _, name := range []string{out, progress} {
		require.NoError(t, os.WriteFile(name, nil, 0o644))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		EnvChild+"=1",
		EnvTag+"="+tag,
		EnvCount+"="+strconv.Itoa(count),
		EnvOut+"="+out,
		EnvProgress+"="+progress,
	)
	cmd.Env = append(cmd.Env, env...) // later entries win
	c := &child{cmd: cmd, out: out, progress: progress, stderr: new(bytes.Buffer), ready: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: c.stderr}
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		r := bufio.NewReader(stdout)
		for {
			line, err := r.ReadString('\n')
			if line == ready+"\n" {
				close(c.ready)
			}
			if err != nil {
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.done
	})
	return c
}

// lockedWriter lets the exec package's copying goroutine and a failing
// test's report share a buffer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (c *child) errText() string {
	w := c.cmd.Stderr.(*lockedWriter)
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(c.stderr.String())
}

// ids reads the IDs the child wrote; a record cut short by a kill is
// dropped.
func (c *child) ids(t *testing.T) []int64 {
	t.Helper()
	data, err := os.ReadFile(c.out)
	require.NoError(t, err)
	ids := make([]int64, len(data)/8)
	for i := range ids {
		ids[i] = int64(binary.BigEndian.Uint64(data[8*i:]))
	}
	return ids
}

// reserving reports whether the child was in the middle of a reservation
// when it ended: one had started and not returned.
func (c *child) reserving(t *testing.T) bool {
	t.Helper()
	data, err := os.ReadFile(c.progress)
	require.NoError(t, err)
	if len(data) < 16 {
		return false // it ended before its first reservation
	}
	return binary.BigEndian.Uint64(data[:8]) > binary.BigEndian.Uint64(data[8:])
}

// Processes runs procs child processes at once, each issuing perProc IDs
// for one new tag, and checks that each got them all, every ID positive
// and strictly increasing within the process, and no ID in two processes.
// Unless env says otherwise the children use a fixed step of 1000, so
// that they reserve many blocks side by side. It returns each process's
// IDs for further checks. It skips the test under -short.
func Processes(t *testing.T, procs, perProc int, env ...string) [][]int64 {
	t.Helper()
	if testing.Short() {
		t.Skip("runs processes")
	}
	tag := storetest.Tag(t, "procs")
	env = append([]string{EnvStep + "=1000", EnvMinStep + "=1000", EnvMaxStep + "=1000"}, env...)
	children := make([]*child, procs)
	for p := range children {
		children[p] = start(t, tag, perProc, env)
	}
	timeout := time.NewTimer(3 * time.Minute)
	defer timeout.Stop()
	got := make([][]int64, procs)
	for p, c := range children {
		select {
		case <-c.done:
		case <-timeout.C:
			t.Fatalf("process %d of %d: not done within 3 minutes", p, procs)
		}
		require.NoError(t, c.err, "process %d: %s", p, c.errText())
		ids := c.ids(t)
		require.Len(t, ids, perProc, "process %d", p)
		requireIncreasing(t, ids, fmt.Sprintf("process %d", p))
		got[p] = ids
	}
	requireDistinct(t, got)
	return got
}

// KillLoop runs rounds of two child processes issuing IDs for one new tag
// until the test kills them with SIGKILL at a random moment, mostly while
// they issue and sometimes before their first ID, and checks the IDs of
// all rounds: strictly increasing within a process, none in two
// processes, and every ID of a round above every ID of the rounds before
// (a restarted process reserves new blocks). Unless env says otherwise the
// children use small steps (10 to 200), so that kills often land in a
// reservation; the test fails if none did. It skips the test under
// -short.
func KillLoop(t *testing.T, rounds int, env ...string) {
	t.Helper()
	killLoop(t, rounds, nil, env)
}

// RestartLoop is KillLoop with the store's server crashed too: in each
// round, once the children issue, restart crashes the server and starts
// it again, returning when it answers. The test fails if no crash began
// while a child had a reservation in flight. Children that fail while it is
// down end on their own; the others are killed after the restart. The
// checks are KillLoop's, so a server that loses a committed reservation
// in its crash fails the test.
func RestartLoop(t *testing.T, rounds int, restart func(t *testing.T), env ...string) {
	t.Helper()
	killLoop(t, rounds, restart, env)
}

// RestartServers skips t unless IDKIT_RESTART_SERVERS=1: a test that
// crashes the machine's own database server must run with nothing else
// using it, as the server-restart step of .ci/run runs it.
func RestartServers(t *testing.T) {
	t.Helper()
	if os.Getenv("IDKIT_RESTART_SERVERS") != "1" {
		t.Skip("crashes the machine's database server; set IDKIT_RESTART_SERVERS=1 to run it with nothing else using the server")
	}
}

func killLoop(t *testing.T, rounds int, restart func(t *testing.T), env []string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs processes")
	}
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	tag := storetest.Tag(t, "kill")
	env = append([]string{EnvStep + "=10", EnvMinStep + "=10", EnvMaxStep + "=200"}, env...)
	var all [][]int64
	var below int64 // the highest ID of the rounds before
	kills, reserving, failed, issued := 0, 0, 0, 0
	crashes := 0 // server crashes with a reservation in flight
	for round := range rounds {
		children := []*child{start(t, tag, 0, env), start(t, tag, 0, env)}
		early := restart == nil && r.IntN(4) == 0 // kill before the first ID, maybe in New
		if !early {
			for p, c := range children {
				select {
				case <-c.ready:
				case <-c.done:
					t.Fatalf("round %d, process %d: exited before issuing: %v: %s", round, p, c.err, c.errText())
				case <-time.After(testwait.Bound):
					t.Fatalf("round %d, process %d: no ID within %v", round, p, testwait.Bound)
				}
			}
		}
		if restart != nil {
			if slices.ContainsFunc(children, func(c *child) bool { return c.reserving(t) }) {
				crashes++
			}
			restart(t)
		}
		time.Sleep(time.Duration(r.IntN(30_000)) * time.Microsecond)
		for _, c := range children {
			_ = c.cmd.Process.Signal(syscall.SIGKILL)
		}
		var highest int64
		for p, c := range children {
			testwait.Recv(t, c.done, fmt.Sprintf("end of process %d of round %d", p, round))
			var exit *exec.ExitError
			switch {
			case errors.As(c.err, &exit) && exit.ExitCode() == -1:
				kills++
				if c.reserving(t) {
					reserving++
				}
			case restart != nil && errors.As(c.err, &exit) && exit.ExitCode() == 1:
				failed++ // it gave up while the server was down
			default:
				t.Fatalf("round %d, process %d: want killed, got %v: %s", round, p, c.err, c.errText())
			}
			ids := c.ids(t)
			requireIncreasing(t, ids, fmt.Sprintf("round %d, process %d", round, p))
			if len(ids) > 0 {
				require.Greater(t, ids[0], below, "round %d, process %d: an ID at or below one of an earlier round", round, p)
				highest = max(highest, ids[len(ids)-1])
			}
			issued += len(ids)
			all = append(all, ids)
		}
		below = max(below, highest)
	}
	requireDistinct(t, all)
	require.Positive(t, issued, "no process issued an ID before it was killed")
	t.Logf("%d IDs in %d processes killed (%d of them during a reservation); the highest %d", issued, kills, reserving, below)
	if restart == nil {
		require.Positive(t, reserving, "no kill of %d landed during a reservation: the loop did not test what it is for", kills)
	} else {
		t.Logf("%d processes failed with the server down; %d of %d server crashes began with a reservation in flight", failed, crashes, rounds)
		require.Positive(t, crashes, "no server crash of %d began with a reservation in flight: the loop did not test what it is for", rounds)
	}
}

// requireIncreasing checks that ids are positive and strictly
// increasing.
func requireIncreasing(t *testing.T, ids []int64, what string) {
	t.Helper()
	if err := increasing(ids); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// increasing returns an error unless ids are positive and strictly
// increasing. It compares by hand: testify per ID would cost more than
// the processes took to issue them.
func increasing(ids []int64) error {
	for i, id := range ids {
		switch {
		case id <= 0:
			return fmt.Errorf("ID %d is %d, want a positive ID", i, id)
		case i > 0 && id <= ids[i-1]:
			return fmt.Errorf("ID %d is %d after %d, want strictly increasing IDs", i, id, ids[i-1])
		}
	}
	return nil
}

// requireDistinct checks that no ID occurs twice in ids.
func requireDistinct(t *testing.T, ids [][]int64) {
	t.Helper()
	if err := distinct(ids); err != nil {
		t.Fatal(err)
	}
}

// distinct returns an error if an ID occurs twice in ids.
func distinct(ids [][]int64) error {
	var all []int64
	for _, s := range ids {
		all = append(all, s...)
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			return fmt.Errorf("ID %d issued twice (%d IDs in all)", all[i], len(all))
		}
	}
	return nil
}

// recorder is a store that remembers the blocks its store reserved.
type recorder struct {
	store  segment.BlockStore
	mu     sync.Mutex
	blocks []segment.Block
}

func (r *recorder) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	b, err := r.store.ReserveBlock(ctx, tag, step)
	if err == nil {
		r.mu.Lock()
		r.blocks = append(r.blocks, b)
		r.mu.Unlock()
	}
	return b, err
}

func (r *recorder) holds(id segment.ID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.blocks, func(b segment.Block) bool { return b.First <= int64(id) && int64(id) <= b.Last })
}

// Outage checks an Allocator on store through an outage: down (after
// calling cut) it issues what its two blocks hold and then fails with an
// error wrapping segment.ErrUnavailable and want (the store's error, if
// not nil) that names the tag; up again (after restore) it issues again,
// above every ID before. Every ID it issues lies in a block that the
// store's ReserveBlock returned without error. timeout is the allocator's
// Options.Timeout: the store must fail within it. It bounds the healthy
// reservations too, so a timeout of a second or two can run out on a
// loaded machine; a store cut off by a proxy fails at once whatever it is.
func Outage(t *testing.T, store segment.BlockStore, cut, restore func(), want error, timeout time.Duration) {
	t.Helper()
	rec := &recorder{store: store}
	tag := storetest.Tag(t, "outage")
	a, err := segment.New(context.Background(), segment.Options{
		Store: rec, Tag: tag, Step: 100, MinStep: 100, MaxStep: 100, Timeout: timeout,
	})
	require.NoError(t, err)
	defer a.Close()
	var last segment.ID
	// check checks an ID issued.
	check := func(id segment.ID) {
		t.Helper()
		require.Greater(t, id, last)
		require.True(t, rec.holds(id), "ID %d from a block the store did not reserve", id)
		last = id
	}
	issue := func(n int) {
		t.Helper()
		for range n {
			id, err := a.Next()
			require.NoError(t, err)
			check(id)
		}
	}
	issue(250)

	cut()
	restored := false
	defer func() {
		if !restored {
			restore()
		}
	}()
	var n int
	for {
		id, err := a.Next()
		if err != nil {
			require.ErrorIs(t, err, segment.ErrUnavailable)
			if want != nil {
				require.ErrorIs(t, err, want)
			}
			require.ErrorContains(t, err, tag, "the error names the tag")
			t.Logf("with the store down, %d IDs, then: %v", n, err)
			break
		}
		check(id)
		n++
		require.LessOrEqual(t, n, 200, "issued more than two blocks hold with the store down")
	}
	_, err = a.Next()
	require.ErrorIs(t, err, segment.ErrUnavailable, "still down")

	restore()
	restored = true
	var id segment.ID
	testwait.Until(t, func() bool {
		id, err = a.Next()
		return err == nil
	}, "issuing again once the store is back")
	check(id)
	issue(250)
	s := a.Stats()
	assert.Positive(t, s.StoreErrors)
	assert.Positive(t, s.Waits)
}
