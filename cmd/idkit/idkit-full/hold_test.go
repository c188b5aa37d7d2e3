package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// The tests of this file run idkit as real processes: this test binary
// (built with the race detector under -race) run again with cliOffsetEnv,
// which makes it idkit on the system clock.

// idkitCmd returns the command that runs idkit with args.
func idkitCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), cliOffsetEnv+"=0s")
	return cmd
}

// call is one finished idkit process.
type call struct {
	args           []string
	code           int
	stdout, stderr string
	took           time.Duration
}

// runIdkit runs idkit with args to the end, within testwait.Bound.
func runIdkit(t *testing.T, args ...string) call {
	t.Helper()
	return runCall(t, func(ctx context.Context) *exec.Cmd { return idkitCmd(ctx, args...) }, args)
}

// runCall runs the command that command makes, idkit with args, to the
// end, within testwait.Bound.
func runCall(t *testing.T, command func(context.Context) *exec.Cmd, args []string) call {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Bound)
	defer cancel()
	cmd := command(ctx)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	c := call{args: args, stdout: stdout.String(), stderr: stderr.String(), took: time.Since(began)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && ctx.Err() == nil:
		c.code = exit.ExitCode()
	default:
		t.Fatalf("idkit %v: %v (stderr: %s)", args, err, c.stderr)
	}
	return c
}

// parallel runs the command lines at the same time and returns their
// calls.
func parallel(t *testing.T, lines [][]string) []call {
	t.Helper()
	calls := make([]call, len(lines))
	var wg sync.WaitGroup
	for i, args := range lines {
		wg.Go(func() { calls[i] = runIdkit(t, args...) })
	}
	wg.Wait()
	return calls
}

// ids keeps the IDs that processes printed and the repeats among them.
type ids struct {
	by      map[string]string // ID → who printed it first
	repeats []string
}

func newIDSet() *ids { return &ids{by: make(map[string]string)} }

func (s *ids) add(who, out string) int {
	n := 0
	for id := range strings.FieldsSeq(out) {
		n++
		if first, ok := s.by[id]; ok {
			if len(s.repeats) < 5 {
				s.repeats = append(s.repeats, fmt.Sprintf("%s from %s, first from %s", id, who, first))
			}
			continue
		}
		s.by[id] = who
	}
	return n
}

// assertHeldBy checks the one line of a call refused because pid holds the
// node.
func assertHeldBy(t *testing.T, c call, pid int, node string) {
	t.Helper()
	assert.Equal(t, 1, c.code, "%v: exit status; stderr: %s", c.args, c.stderr)
	assert.Contains(t, c.stderr, node+" in ", "%v: names the node", c.args)
	assert.Contains(t, c.stderr, fmt.Sprintf("(pid %d) since ", pid), "%v: names the holder", c.args)
	assert.Equal(t, 1, strings.Count(c.stderr, "\n"), "%v: one line: %s", c.args, c.stderr)
}

// TestParallelCallsOneNode runs 8 calls "idkit new SCHEME --node 7 --log F
// -n 200000" at once: no ID repeats, and each call either prints all its
// IDs or fails naming the holder (or saying that its record is not written
// yet, in the moment between its lock and its record). With --wait every
// call prints all its IDs, one after another.
func TestParallelCallsOneNode(t *testing.T) {
	t.Parallel()
	const procs, n = 8, 200_000
	for _, scheme := range []string{"traceid", "snowflake"} {
		t.Run(scheme, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "idkit.db")
			seen := newIDSet()
			for _, wait := range []bool{false, true} {
				lines := make([][]string, procs)
				for i := range lines {
					lines[i] = []string{"new", scheme, "--node", "7", "--log", log, "-n", strconv.Itoa(n)}
					if wait {
						lines[i] = append(lines[i], "--wait", testwait.Bound.String())
					}
				}
				ok := 0
				for i, c := range parallel(t, lines) {
					printed := seen.add(fmt.Sprintf("call %d (wait %v)", i, wait), c.stdout)
					if c.code == 0 {
						ok++
						assert.Equal(t, n, printed, "call %d: a call that succeeds prints every ID", i)
						continue
					}
					require.False(t, wait, "call %d with --wait failed: %s", i, c.stderr)
					assert.Zero(t, printed, "call %d: a refused call prints nothing", i)
					// A call refused between the holder's lock and its record
					// (a write of its own, just after) says that instead.
					assert.Regexp(t, `is held by (idkit-full\.test new `+scheme+` \(pid |another process \(its record is not written yet\))`, c.stderr, "call %d names the holder", i)
					assert.Contains(t, c.stderr, "use another node, wait for it with --wait DURATION, or claim nodes with --etcd")
				}
				assert.Empty(t, seen.repeats, "IDs printed twice")
				if wait {
					assert.Equal(t, procs, ok, "with --wait every call succeeds")
				} else {
					assert.GreaterOrEqual(t, ok, 1, "the first holder succeeds")
					t.Logf("%s without --wait: %d of %d calls succeeded, the rest were refused", scheme, ok, procs)
				}
			}
			assert.GreaterOrEqual(t, len(seen.by), (procs+1)*n, "distinct IDs in all")
		})
	}
}

// TestServeHoldsItsNodes runs "idkit serve --node 7 --log F": a second
// server on the node exits at once naming the first, an "idkit new" call
// beside it fails naming it, and one with --wait waits until the server
// stops, then prints IDs that the server never issued.
func TestServeHoldsItsNodes(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "idkit.db")
	env := []string{cliOffsetEnv + "=0s"}
	first := startServer(t, os.Args[0], env, "--node", "7", "--log", log, "--schemes", "traceid,snowflake")
	pid := first.cmd.Process.Pid
	seen := newIDSet()
	served := func() {
		for _, scheme := range []string{"traceid", "snowflake"} {
			got, err := first.fetch(scheme, 1000, true)
			require.NoError(t, err)
			seen.add("the server", strings.Join(got, "\n"))
		}
	}
	served()

	trivial := runIdkit(t, "help")
	second := runIdkit(t, "serve", "--addr", "127.0.0.1:0", "--node", "7", "--log", log, "--schemes", "snowflake,traceid")
	assertHeldBy(t, second, pid, "traceid/node/7")
	assert.Contains(t, second.stderr, "; use another node, or claim nodes with --etcd")
	assert.Less(t, second.took, trivial.took+time.Second, "the second server exits at once (a call of idkit help took %v)", trivial.took)
	t.Logf("the second server exited after %v; idkit help takes %v", second.took, trivial.took)

	for _, scheme := range []string{"traceid", "snowflake"} {
		c := runIdkit(t, "new", scheme, "--node", "7", "--log", log, "-n", "1000")
		assert.Empty(t, c.stdout, "a refused call prints no ID")
		node := "traceid/node/7"
		if scheme == "snowflake" {
			node = "snowflake/twitter/datacenter=0,worker=7"
		}
		assertHeldBy(t, c, pid, node)
	}
	other := runIdkit(t, "new", "traceid", "--node", "8", "--log", log, "-n", "10")
	require.Equal(t, 0, other.code, "another node is free: %s", other.stderr)

	// Calls that wait for the server's nodes, then continue after it.
	waiting := make(chan call, 2)
	for _, scheme := range []string{"traceid", "snowflake"} {
		go func() {
			waiting <- runIdkit(t, "new", scheme, "--node", "7", "--log", log, "-n", "5000", "--wait", testwait.Bound.String())
		}()
	}
	served()
	select {
	case c := <-waiting:
		t.Fatalf("a call with --wait ended while the server held its node: %+v", c)
	default:
	}
	require.NoError(t, first.stop(t, syscall.SIGTERM))
	for range 2 {
		c := testwait.Recv(t, waiting, "the end of a call with --wait once the server stopped")
		require.Equal(t, 0, c.code, "%v: %s", c.args, c.stderr)
		assert.Equal(t, 5000, seen.add(strings.Join(c.args[:2], " "), c.stdout))
	}
	assert.Empty(t, seen.repeats, "IDs issued twice")
}

// TestKilledHolderFreesItsNode kills a call and a server in the middle of
// issuing: the next process for the node takes it at once, without
// --wait, and repeats none of the IDs the killed one printed.
func TestKilledHolderFreesItsNode(t *testing.T) {
	t.Parallel()
	t.Run("new", func(t *testing.T) {
		t.Parallel()
		log := filepath.Join(t.TempDir(), "idkit.db")
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Bound)
		defer cancel()
		cmd := idkitCmd(ctx, "new", "traceid", "--node", "7", "--log", log, "-n", "100000000")
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		printed := make(chan string, 1)
		started := make(chan struct{})
		go func() {
			var out strings.Builder
			r := bufio.NewReader(stdout)
			for lines := 0; ; lines++ {
				line, err := r.ReadString('\n')
				if err != nil {
					break // a line cut short by the kill has no newline
				}
				out.WriteString(line)
				if lines == 100_000 {
					close(started)
				}
			}
			printed <- out.String()
		}()
		testwait.Recv(t, started, "100,000 IDs from the call")
		require.NoError(t, cmd.Process.Kill())
		killed := testwait.Recv(t, printed, "the killed call's output")
		_ = cmd.Wait()

		next := runIdkit(t, "new", "traceid", "--node", "7", "--log", log, "-n", "100000")
		require.Equal(t, 0, next.code, "the next call takes the node at once: %s", next.stderr)
		seen := newIDSet()
		assert.Greater(t, seen.add("the killed call", killed), 100_000)
		assert.Equal(t, 100_000, seen.add("the next call", next.stdout))
		assert.Empty(t, seen.repeats, "IDs printed twice")
	})
	t.Run("serve", func(t *testing.T) {
		t.Parallel()
		log := filepath.Join(t.TempDir(), "idkit.db")
		env := []string{cliOffsetEnv + "=0s"}
		seen := newIDSet()
		first := startServer(t, os.Args[0], env, "--node", "7", "--log", log, "--schemes", "traceid")
		got, err := first.fetch("traceid", 10_000, true)
		require.NoError(t, err)
		seen.add("the killed server", strings.Join(got, "\n"))
		_ = first.stop(t, syscall.SIGKILL)

		next := startServer(t, os.Args[0], env, "--node", "7", "--log", log, "--schemes", "traceid")
		got, err = next.fetch("traceid", 10_000, true)
		require.NoError(t, err, "the next server takes the node at once: %s", next.log())
		seen.add("the next server", strings.Join(got, "\n"))
		assert.Empty(t, seen.repeats, "IDs issued twice")
		require.NoError(t, next.stop(t, syscall.SIGTERM))
	})
}

// TestNewWarnsWithoutLog: a call with a node but no store says on a
// terminal that nothing holds its node; piped, it says nothing.
func TestNewWarnsWithoutLog(t *testing.T) {
	t.Parallel()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close()
	defer tty.Close()
	f := clock.NewFake(time.Date(2026, 6, 1, 12, 0, 0, 999_500_000, time.UTC))
	var stdout bytes.Buffer
	c := &cli.Console{Stdout: &stdout, Stderr: tty, Clock: f}
	done := make(chan int, 1)
	go func() { done <- c.Run([]string{"new", "traceid", "--node", "7"}) }()
	testwait.Sleepers(t, f, 1) // the wait for a fresh second
	f.Advance(time.Second)
	require.Equal(t, 0, testwait.Recv(t, done, "the call's end"))
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(ptmx).ReadString('\n')
		line <- s
	}()
	assert.Equal(t, "idkit new: warning: without --log, nothing stops another process from issuing node 7's IDs at the same time; --log FILE holds the node on this host, --etcd claims nodes across hosts\r\n",
		testwait.Recv(t, line, "the warning on the terminal"))

	code, _, stderr := idkitOn(clock.NewFake(time.Date(2026, 6, 1, 12, 0, 0, 999_500_000, time.UTC)), time.Millisecond, "new", "traceid", "--node", "7")
	require.Equal(t, 0, code)
	assert.Empty(t, stderr, "no warning where stderr is not a terminal")
}
