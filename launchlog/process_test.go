package launchlog

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/testkit/testwait"
	idstore "github.com/idkit/idkit/store"
)

// TestHelperProcess is not a test: the tests below run the test binary
// again as a helper process, with LAUNCHLOG_HELPER naming what it does.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("LAUNCHLOG_HELPER")
	if mode == "" {
		t.Skip("helper process for the multi-process tests")
	}
	path := os.Getenv("LAUNCHLOG_PATH")
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	switch mode {
	case "next", "loop":
		// Call NextGenerator n times (forever in loop mode), printing each
		// value only after the call returned.
		n, _ := strconv.Atoi(os.Getenv("LAUNCHLOG_N"))
		l, err := New(Options{Path: path, Timeout: time.Minute})
		if err != nil {
			fail(err)
		}
		for i := 0; mode == "loop" || i < n; i++ {
			g, err := l.NextGenerator(context.Background(), 1)
			if err != nil {
				fail(err)
			}
			fmt.Println(g)
		}
	case "begin-loop":
		// Record launches forever, printing each id after Begin returned.
		l, err := New(Options{Path: path, Timeout: time.Minute})
		if err != nil {
			fail(err)
		}
		for {
			launch, err := l.Begin(context.Background(), idstore.Info{Ticket: "kill", By: "helper"})
			if err != nil {
				fail(err)
			}
			fmt.Println(launch.ID)
		}
	case "advance-loop":
		// Advance a mark by 1 µs forever, printing each stored mark (Unix
		// µs) after AdvanceHighWater returned.
		l, err := New(Options{Path: path, Timeout: time.Minute})
		if err != nil {
			fail(err)
		}
		mark, err := l.HighWater(context.Background(), "k")
		if err != nil {
			fail(err)
		}
		if mark.IsZero() {
			mark = time.UnixMicro(1)
		}
		for {
			if mark, err = l.AdvanceHighWater(context.Background(), "k", mark.Add(time.Microsecond)); err != nil {
				fail(err)
			}
			fmt.Println(mark.UnixMicro())
		}
	case "hold":
		// Hold the file's lock until stdin closes.
		db, err := bbolt.Open(path, 0o600, nil)
		if err != nil {
			fail(err)
		}
		fmt.Println("locked")
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = db.Close()
	case "hold-key":
		// Hold the key "node/7" until stdin closes, or the process is
		// killed.
		l, err := New(Options{Path: path})
		if err != nil {
			fail(err)
		}
		h, err := l.Hold(context.Background(), "node/7")
		if err != nil {
			fail(err)
		}
		fmt.Println("held")
		_, _ = io.Copy(io.Discard, os.Stdin)
		_ = h.Close()
	case "use":
		// Take a generator id, then wait until stdin closes, the log in
		// use through its file.
		l, err := New(Options{Path: path})
		if err != nil {
			fail(err)
		}
		if _, err := l.NextGenerator(context.Background(), 1); err != nil {
			fail(err)
		}
		fmt.Println("used")
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "wait":
		// Do nothing until stdin closes, with the descriptors it was given.
		fmt.Println("waiting")
		_, _ = io.Copy(io.Discard, os.Stdin)
	default:
		fail(fmt.Errorf("unknown mode %q", mode))
	}
	os.Exit(0)
}

// helper returns a command that runs the test binary as a helper process.
func helper(mode, path string, n int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(),
		"LAUNCHLOG_HELPER="+mode,
		"LAUNCHLOG_PATH="+path,
		"LAUNCHLOG_N="+strconv.Itoa(n),
	)
	cmd.Stderr = os.Stderr
	return cmd
}

// firstRead is a reader that closes done once r has returned data.
type firstRead struct {
	r    io.Reader
	done chan struct{}
	seen bool
}

func (f *firstRead) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if n > 0 && !f.seen {
		f.seen = true
		close(f.done)
	}
	return n, err
}

// readValues reads the complete lines of r as integers until r ends. A
// line cut short by a kill has no newline and is dropped.
func readValues(r io.Reader) ([]int, error) {
	var values []int
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return values, nil // EOF; a partial line is dropped
		}
		v, err := strconv.Atoi(line[:len(line)-1])
		if err != nil {
			return values, err
		}
		values = append(values, v)
	}
}

func TestNextGeneratorProcesses(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("1000 fsynced transactions")
	}
	const procs, calls = 4, 250
	path := filepath.Join(t.TempDir(), "launch.db")
	outs := make([]chan []int, procs)
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := helper("next", path, calls)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
		outs[p] = make(chan []int, 1)
		go func() {
			values, err := readValues(stdout)
			assert.NoError(t, err)
			outs[p] <- values
		}()
	}
	var all []int
	for p, cmd := range cmds {
		values := testwait.Recv(t, outs[p], fmt.Sprintf("end of the output of process %d", p))
		require.NoError(t, cmd.Wait(), "process %d", p)
		require.Len(t, values, calls, "process %d", p)
		assert.True(t, slices.IsSorted(values), "process %d: values not increasing", p)
		all = append(all, values...)
	}
	slices.Sort(all)
	want := make([]int, procs*calls)
	for i := range want {
		want[i] = i
	}
	assert.Equal(t, want, all, "values distinct and contiguous from 0")

	l, err := New(Options{Path: path})
	require.NoError(t, err)
	next, err := l.NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, procs*calls, next)
}

// TestKilledMidWrite kills a process at random moments of a loop of one
// write (NextGenerator, Begin, AdvanceHighWater) and restarts it. After
// every kill the file must pass bbolt's own consistency check, and no
// value may come out twice: generator and launch ids stay distinct, and a
// mark never falls below one already returned.
func TestKilledMidWrite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes in a loop")
	}
	for _, tt := range []struct {
		mode string
		// next reads, after the last round, the value the log would hand
		// out next; every value handed out must be below it.
		next func(l *Log) (int, error)
	}{
		{"loop", func(l *Log) (int, error) { return l.NextGenerator(context.Background(), 1) }},
		{"begin-loop", func(l *Log) (int, error) {
			launch, err := l.Begin(context.Background(), idstore.Info{})
			return launch.ID, err
		}},
		{"advance-loop", func(l *Log) (int, error) {
			mark, err := l.HighWater(context.Background(), "k")
			return int(mark.UnixMicro()) + 1, err
		}},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			killMidWrite(t, tt.mode, tt.next)
		})
	}
}

func killMidWrite(t *testing.T, mode string, next func(l *Log) (int, error)) {
	const rounds = 20
	r := rand.New(rand.NewPCG(testSeed(t), 3))
	path := filepath.Join(t.TempDir(), "launch.db")
	seen := make(map[int]int) // value → round that got it
	highest, kills := -1, 0
	for round := range rounds {
		cmd := helper(mode, path, 0)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		got, first, ended := make(chan []int, 1), make(chan struct{}), make(chan struct{})
		go func() {
			values, _ := readValues(&firstRead{r: stdout, done: first})
			got <- values
			close(ended)
		}()
		// Kill at a random moment: in even rounds counted from the start,
		// so sometimes before the first call ends; in odd rounds from the
		// first value, which the test waits for however slow the start on
		// a busy machine, so that half the rounds are killed mid-write.
		// Mostly the kill lands in the middle of a transaction or an
		// fsync.
		if round%2 == 1 {
			select {
			case <-first:
			case <-ended:
				t.Fatalf("round %d: the helper ended before it handed out a value", round)
			case <-time.After(testwait.Bound):
				_ = cmd.Process.Kill()
				t.Fatalf("round %d: the helper handed out no value within %v", round, testwait.Bound)
			}
		}
		time.Sleep(time.Duration(r.IntN(60_000)) * time.Microsecond)
		require.NoError(t, cmd.Process.Kill())
		values := testwait.Recv(t, got, "end of the killed helper's output")
		_ = cmd.Wait()
		switch code := cmd.ProcessState.ExitCode(); code {
		case -1:
			kills++ // killed by the signal
		case 0:
			t.Errorf("round %d: helper exited by itself", round)
		default:
			t.Errorf("round %d: helper failed with status %d", round, code)
		}
		for _, v := range values {
			if prev, dup := seen[v]; dup {
				t.Errorf("value %d handed out in round %d and again in round %d", v, prev, round)
			}
			require.Greater(t, v, highest, "round %d: a value at or below one handed out before", round)
			seen[v] = round
			highest = v
		}
		requireBoltCheck(t, path)
	}
	require.Positive(t, kills, "no helper was killed")
	require.NotEmpty(t, seen, "no helper got a value before it was killed")

	l, err := New(Options{Path: path})
	require.NoError(t, err)
	n, err := next(l)
	require.NoError(t, err)
	assert.Greater(t, n, highest, "the log continues past every value handed out")
	t.Logf("%s: %d values in %d kills; next %d", mode, len(seen), kills, n)
}

// requireBoltCheck runs bbolt's consistency check on the file at path, if
// there is one yet. A helper killed after it created the file and before
// bbolt wrote its first pages leaves it empty: bbolt lays those pages down
// at the next open for writing, and a read-only open cannot, so there is
// nothing to check yet.
func requireBoltCheck(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if os.IsNotExist(err) {
		return
	}
	require.NoError(t, err)
	if fi.Size() == 0 {
		return
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}), "bbolt's consistency check")
}

func TestLockedByProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "launch.db")
	cmd := helper("hold", path, 0)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "locked\n", line)

	const timeout = 300 * time.Millisecond
	const margin = 2 * time.Second // generous: the machine is shared
	l, err := New(Options{Path: path, Timeout: timeout})
	require.NoError(t, err)
	for _, op := range ops(l) {
		start := time.Now()
		err := op.call()
		elapsed := time.Since(start)
		assert.ErrorIs(t, err, berrors.ErrTimeout, op.name)
		assert.ErrorIs(t, err, ErrLocked, op.name)
		assert.ErrorContains(t, err, "not free within 300ms", op.name)
		assert.GreaterOrEqual(t, elapsed, timeout, op.name)
		assert.Less(t, elapsed, timeout+margin, op.name)
	}

	// Once the other process lets go, the same handle works.
	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait())
	got, err := l.NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	assert.Equal(t, 0, got)
}

// startUser starts a helper that takes a generator id from the log at
// path and then uses it until the test ends; it returns the helper and a
// function that ends it.
func startUser(t *testing.T, path string) (*exec.Cmd, func()) {
	t.Helper()
	cmd := helper("use", path, 0)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	end := func() { _ = stdin.Close(); _ = cmd.Wait() }
	t.Cleanup(end)
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
	}()
	require.Equal(t, "used\n", testwait.Recv(t, line, "the helper's use of the log"))
	return cmd, end
}

// TestCopyOfALog uses a log in another process, then a copy of it here:
// every write to the copy (a launch, a generator id, a block, a mark, a
// hold) is refused, naming what to run, while the other process lives and
// after it has ended; reads answer. Adopted as moved, the copy goes on
// from where it was copied.
func TestCopyOfALog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "idkit.db")
	_, end := startUser(t, path)

	copied := filepath.Join(dir, "copy.db")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(copied, b, 0o600))
	c, err := New(Options{Path: copied})
	require.NoError(t, err)
	ctx := context.Background()
	writes := map[string]func() error{
		"Begin":            func() error { _, err := c.Begin(ctx, idstore.Info{}); return err },
		"NextGenerator":    func() error { _, err := c.NextGenerator(ctx, 1); return err },
		"ReserveBlock":     func() error { _, err := c.ReserveBlock(ctx, "orders", 100); return err },
		"AdvanceHighWater": func() error { _, err := c.AdvanceHighWater(ctx, "k", time.Unix(100, 0)); return err },
		"Hold":             func() error { _, err := c.Hold(ctx, "traceid/node/7"); return err },
		"AdvanceCounters":  func() error { _, err := c.AdvanceCounters(ctx, Counters{Launch: 5}); return err },
	}
	refused := func(when string) {
		for name, write := range writes {
			err := write()
			var displaced *DisplacedError
			require.ErrorAs(t, err, &displaced, "%s %s", name, when)
			assert.Equal(t, Moved, displaced.Why, name)
			assert.ErrorIs(t, err, idkit.ErrRefused, name)
			assert.NotErrorIs(t, err, idkit.ErrUnavailable, "%s: trying again does not help", name)
			assert.ErrorContains(t, err, copied+" is not the file this log was last written through", name)
			assert.ErrorContains(t, err, "idkit launch adopt --log "+copied, name)
		}
	}
	refused("while the original is in use")
	got, err := c.Current(ctx)
	assert.ErrorIs(t, err, ErrNoLaunch, "reading a copy is harmless: %v", got)

	end()
	refused("once the original is no longer in use")

	a, err := c.Adopt(ctx, AdoptOptions{Moved: true, By: "ops", Note: "moved to the new disk"})
	require.NoError(t, err)
	assert.Equal(t, "moved", a.Why)
	assert.True(t, a.Moved)
	assert.NotEqual(t, a.Was, a.Now)
	g, err := c.NextGenerator(ctx, 1)
	require.NoError(t, err, "the copy once adopted")
	assert.Equal(t, 1, g, "the copy goes on from where it was copied")
	adoptions, err := c.Adoptions(ctx)
	require.NoError(t, err)
	require.Len(t, adoptions, 1)
	assert.Equal(t, "ops", adoptions[0].By)
	assert.Equal(t, "moved to the new disk", adoptions[0].Note)
	_, err = c.Adopt(ctx, AdoptOptions{Moved: true})
	assert.ErrorIs(t, err, ErrInvalid, "nothing to adopt once adopted")
}

// TestLogRemovedUnderAProcess removes the log while another process uses
// it: a new log made at its path is refused here, naming that process,
// which may still issue from what the old file handed it; once it has
// ended, the path is free for a new log.
func TestLogRemovedUnderAProcess(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "idkit.db")
	cmd, end := startUser(t, path)
	require.NoError(t, os.Remove(path))

	l, err := New(Options{Path: path})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = l.NextGenerator(ctx, 1)
	var held *HeldError
	require.ErrorAs(t, err, &held, "a new log where the one in use was")
	assert.Equal(t, cmd.Process.Pid, held.Holder.PID)
	assert.Empty(t, held.Key)
	assert.ErrorIs(t, err, idkit.ErrHeld)
	assert.ErrorContains(t, err, path+" was removed or replaced under ")

	end()
	g, err := l.NextGenerator(ctx, 1)
	require.NoError(t, err, "a new log once the old one's user has ended")
	assert.Equal(t, 0, g)
}
