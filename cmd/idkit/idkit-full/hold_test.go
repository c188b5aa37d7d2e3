package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// The tests of this file run idkit as real processes: this test binary
// (built with the race detector under -race) run again with
// clitest.OffsetEnv, which makes it idkit on the system clock.

// assertHeldBy checks the one line of a call refused because pid holds the
// node.
func assertHeldBy(t *testing.T, c clitest.Call, pid int, node string) {
	t.Helper()
	assert.Equal(t, 1, c.Code, "%v: exit status; stderr: %s", c.Args, c.Stderr)
	assert.Contains(t, c.Stderr, node+" in ", "%v: names the node", c.Args)
	assert.Contains(t, c.Stderr, fmt.Sprintf("(pid %d) since ", pid), "%v: names the holder", c.Args)
	assert.Equal(t, 1, strings.Count(c.Stderr, "\n"), "%v: one line: %s", c.Args, c.Stderr)
}

// TestServeHoldsItsNodes runs "idkit serve --node 7 --log F": a second
// server on the node exits at once naming the first, an "idkit new" call
// beside it fails naming it, and one with --wait waits until the server
// stops, then prints IDs that the server never issued.
func TestServeHoldsItsNodes(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "idkit.db")
	env := []string{clitest.OffsetEnv(0)}
	first := startServer(t, os.Args[0], env, "--node", "7", "--log", log, "--schemes", "traceid,snowflake")
	pid := first.cmd.Process.Pid
	seen := clitest.NewIDSet()
	served := func() {
		for _, scheme := range []string{"traceid", "snowflake"} {
			got, err := first.fetch(scheme, 1000, true)
			require.NoError(t, err)
			seen.Add("the server", strings.Join(got, "\n"))
		}
	}
	served()

	trivial := clitest.Exec(t, "help")
	second := clitest.Exec(t, "serve", "--addr", "127.0.0.1:0", "--node", "7", "--log", log, "--schemes", "snowflake,traceid")
	assertHeldBy(t, second, pid, "traceid/node/7")
	assert.Contains(t, second.Stderr, "; use another node, or claim nodes with --etcd")
	assert.Less(t, second.Took, trivial.Took+time.Second, "the second server exits at once (a call of idkit help took %v)", trivial.Took)
	t.Logf("the second server exited after %v; idkit help takes %v", second.Took, trivial.Took)

	for _, scheme := range []string{"traceid", "snowflake"} {
		c := clitest.Exec(t, "new", scheme, "--node", "7", "--log", log, "-n", "1000")
		assert.Empty(t, c.Stdout, "a refused call prints no ID")
		node := "traceid/node/7"
		if scheme == "snowflake" {
			node = "snowflake/twitter/datacenter=0,worker=7"
		}
		assertHeldBy(t, c, pid, node)
	}
	other := clitest.Exec(t, "new", "traceid", "--node", "8", "--log", log, "-n", "10")
	require.Equal(t, 0, other.Code, "another node is free: %s", other.Stderr)

	// Calls that wait for the server's nodes, then continue after it.
	waiting := make(chan clitest.Call, 2)
	for _, scheme := range []string{"traceid", "snowflake"} {
		go func() {
			waiting <- clitest.Exec(t, "new", scheme, "--node", "7", "--log", log, "-n", "5000", "--wait", testwait.Bound.String())
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
		require.Equal(t, 0, c.Code, "%v: %s", c.Args, c.Stderr)
		assert.Equal(t, 5000, seen.Add(strings.Join(c.Args[:2], " "), c.Stdout))
	}
	assert.Empty(t, seen.Repeats, "IDs issued twice")
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
		cmd := clitest.Command(ctx, "new", "traceid", "--node", "7", "--log", log, "-n", "100000000")
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

		next := clitest.Exec(t, "new", "traceid", "--node", "7", "--log", log, "-n", "100000")
		require.Equal(t, 0, next.Code, "the next call takes the node at once: %s", next.Stderr)
		seen := clitest.NewIDSet()
		assert.Greater(t, seen.Add("the killed call", killed), 100_000)
		assert.Equal(t, 100_000, seen.Add("the next call", next.Stdout))
		assert.Empty(t, seen.Repeats, "IDs printed twice")
	})
	t.Run("serve", func(t *testing.T) {
		t.Parallel()
		log := filepath.Join(t.TempDir(), "idkit.db")
		env := []string{clitest.OffsetEnv(0)}
		seen := clitest.NewIDSet()
		first := startServer(t, os.Args[0], env, "--node", "7", "--log", log, "--schemes", "traceid")
		got, err := first.fetch("traceid", 10_000, true)
		require.NoError(t, err)
		seen.Add("the killed server", strings.Join(got, "\n"))
		_ = first.stop(t, syscall.SIGKILL)

		next := startServer(t, os.Args[0], env, "--node", "7", "--log", log, "--schemes", "traceid")
		got, err = next.fetch("traceid", 10_000, true)
		require.NoError(t, err, "the next server takes the node at once: %s", next.log())
		seen.Add("the next server", strings.Join(got, "\n"))
		assert.Empty(t, seen.Repeats, "IDs issued twice")
		require.NoError(t, next.stop(t, syscall.SIGTERM))
	})
}
