package launchlog

import (
	"bufio"
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
			g, err := l.NextGenerator(1)
			if err != nil {
				fail(err)
			}
			fmt.Println(g)
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
		values := <-outs[p]
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
	next, err := l.NextGenerator(1)
	require.NoError(t, err)
	assert.Equal(t, procs*calls, next)
}

func TestNextGeneratorKilled(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes in a loop")
	}
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 3))
	path := filepath.Join(t.TempDir(), "launch.db")
	seen := make(map[int]int) // value → round that got it
	kills := 0
	for round := range 20 {
		cmd := helper("loop", path, 0)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		got := make(chan []int, 1)
		go func() {
			values, _ := readValues(stdout)
			got <- values
		}()
		// Kill at a random moment: sometimes before the first call ends,
		// mostly in the middle of a transaction or an fsync.
		time.Sleep(time.Duration(r.IntN(60_000)) * time.Microsecond)
		require.NoError(t, cmd.Process.Kill())
		values := <-got
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
			seen[v] = round
		}
	}
	require.Positive(t, kills, "no helper was killed")
	require.NotEmpty(t, seen, "no helper got a value before it was killed")

	// The file is intact and continues past every value handed out.
	l, err := New(Options{Path: path})
	require.NoError(t, err)
	next, err := l.NextGenerator(1)
	require.NoError(t, err)
	for v := range seen {
		assert.Less(t, v, next)
	}
	t.Logf("%d values in %d kills; next %d", len(seen), kills, next)
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
	got, err := l.NextGenerator(1)
	require.NoError(t, err)
	assert.Equal(t, 0, got)
}
