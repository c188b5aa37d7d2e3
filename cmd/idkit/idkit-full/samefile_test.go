package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/testenv"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// The tests of this file reach one launch log by two names, as operators
// and containers do: a hard link, a bind-mounted file, a path that only
// another mount namespace sees, and a copy of the file. A node held
// through one name is held through every other, and the second holder
// is refused naming the first.

// otherName is a second way to reach a launch log: the path, and the
// programs the process runs under to see it (unshare, for a mount
// namespace of its own).
type otherName struct {
	path   string
	prefix []string
}

// command returns the command that runs idkit with args through the
// name.
func (n otherName) command(ctx context.Context, args ...string) *exec.Cmd {
	if len(n.prefix) == 0 {
		return clitest.Command(ctx, args...)
	}
	cmd := exec.CommandContext(ctx, n.prefix[0], append(append(n.prefix[1:], os.Args[0]), args...)...)
	cmd.Env = append(os.Environ(), clitest.OffsetEnv(0))
	return cmd
}

// run runs idkit with args through the name, to the end.
func (n otherName) run(t *testing.T, args ...string) clitest.Call {
	t.Helper()
	return clitest.ExecCmd(t, func(ctx context.Context) *exec.Cmd { return n.command(ctx, args...) }, args)
}

// secondNames makes a launch log at first and returns the other names of
// it that the tests use, by kind.
func secondNames(t *testing.T, first string) map[string]otherName {
	t.Helper()
	begin := clitest.Exec(t, "launch", "begin", "--log", first)
	require.Equal(t, 0, begin.Code, begin.Stderr)
	names := map[string]otherName{}

	link := filepath.Join(t.TempDir(), "linked.db")
	require.NoError(t, os.Link(first, link))
	names["a hard link"] = otherName{path: link}

	if os.Geteuid() != 0 {
		testenv.Missing(t, "a bind mount and a mount namespace of its own need root")
	}
	mounted := filepath.Join(t.TempDir(), "mounted.db")
	require.NoError(t, os.WriteFile(mounted, nil, 0o600))
	out, err := exec.Command("mount", "--bind", first, mounted).CombinedOutput()
	require.NoError(t, err, "mount --bind %s %s: %s", first, mounted, out)
	t.Cleanup(func() {
		out, err := exec.Command("umount", mounted).CombinedOutput()
		assert.NoError(t, err, "umount %s: %s", mounted, out)
	})
	names["a bind-mounted file"] = otherName{path: mounted}

	// A directory that is the log's only in a mount namespace of the
	// process's own: there it is a bind mount of the log's directory.
	seen := t.TempDir()
	names["another mount namespace"] = otherName{
		path: filepath.Join(seen, filepath.Base(first)),
		prefix: []string{"unshare", "--mount", "--propagation", "private", "sh", "-c",
			`mount --bind "$1" "$2" && shift 2 && exec "$@"`, "sh", filepath.Dir(first), seen},
	}
	return names
}

// holdingCall starts "idkit new traceid --node 17 --log path -n 1000000"
// and returns once it has printed its first ID: it then holds the node,
// blocked on its output, which nobody reads until finish is called.
// finish reads the rest, waits for the end and returns every ID printed.
func holdingCall(t *testing.T, path string) (pid int, finish func() string) {
	t.Helper()
	cmd := clitest.Command(context.Background(), "new", "traceid", "--node", "17", "--log", path, "-n", "1000000")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	r := bufio.NewReader(stdout)
	first := make(chan string, 1)
	go func() {
		line, _ := r.ReadString('\n')
		first <- line
	}()
	line := testwait.Recv(t, first, "the first ID of the holding call")
	require.NotEmpty(t, line, "the holding call printed nothing: %s", stderr.String())
	return cmd.Process.Pid, func() string {
		rest, err := io.ReadAll(r)
		require.NoError(t, err)
		require.NoError(t, cmd.Wait(), "the holding call: %s", stderr.String())
		return line + string(rest)
	}
}

// assertRefused checks that c was refused because pid holds node 17's
// TraceIds, in one line that names the holder, and printed no ID.
func assertRefused(t *testing.T, c clitest.Call, pid int, what string) {
	t.Helper()
	assert.Equal(t, 1, c.Code, "%s: exit status; stderr: %s", what, c.Stderr)
	assert.Empty(t, c.Stdout, "%s: no ID", what)
	assert.Contains(t, c.Stderr, "traceid/node/17 in ", "%s: names the node", what)
	assert.Contains(t, c.Stderr, fmt.Sprintf("(pid %d) since ", pid), "%s: names the holder", what)
	assert.Equal(t, 1, strings.Count(c.Stderr, "\n"), "%s: one line: %s", what, c.Stderr)
}

// TestOneHolderWhateverTheName: for each other name of a log, two "idkit
// new" calls, two servers, and a server beside a call, one through each
// name: the second is refused naming the first, and no ID is issued twice.
func TestOneHolderWhateverTheName(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "idkit.db")
	env := []string{clitest.OffsetEnv(0)}
	for kind, other := range secondNames(t, log) {
		t.Run(kind, func(t *testing.T) {
			seen := clitest.NewIDSet()

			pid, finish := holdingCall(t, log)
			second := other.run(t, "new", "traceid", "--node", "17", "--log", other.path, "-n", "1000")
			assertRefused(t, second, pid, kind+": new beside new")
			assert.Equal(t, 1_000_000, seen.Add("the holding call", finish()))

			first := startServer(t, os.Args[0], env, "--node", "17", "--log", log, "--schemes", "traceid")
			got, err := first.fetch("traceid", 10_000, true)
			require.NoError(t, err)
			seen.Add("the server", strings.Join(got, "\n"))
			c := other.run(t, "new", "traceid", "--node", "17", "--log", other.path, "-n", "1000")
			assertRefused(t, c, first.cmd.Process.Pid, kind+": new beside a server")
			c = other.run(t, "serve", "--addr", "127.0.0.1:0", "--node", "17", "--log", other.path, "--schemes", "traceid")
			assertRefused(t, c, first.cmd.Process.Pid, kind+": a second server")
			got, err = first.fetch("traceid", 10_000, true)
			require.NoError(t, err)
			seen.Add("the server", strings.Join(got, "\n"))
			require.NoError(t, first.stop(t, syscall.SIGTERM))

			// The other way round: the server through the other name.
			cmd := other.command(context.Background(), "serve", "--addr", "127.0.0.1:0", "--node", "17", "--log", other.path, "--schemes", "traceid")
			behind := startServerCmd(t, cmd)
			got, err = behind.fetch("traceid", 10_000, true)
			require.NoError(t, err)
			seen.Add("the server through "+kind, strings.Join(got, "\n"))
			c = clitest.Exec(t, "new", "traceid", "--node", "17", "--log", log, "-n", "1000")
			// unshare and its shell exec idkit in their own process: the pid
			// is the server's.
			assertRefused(t, c, behind.cmd.Process.Pid, kind+": new beside a server through the other name")
			require.NoError(t, behind.stop(t, syscall.SIGTERM))

			after := clitest.Exec(t, "new", "traceid", "--node", "17", "--log", log, "-n", "1000")
			require.Equal(t, 0, after.Code, "the node is free once its holders ended: %s", after.Stderr)
			seen.Add("a call after them", after.Stdout)
			assert.Empty(t, seen.Repeats, "IDs issued twice")
		})
	}
}

// TestHoldOutlivesItsFiles removes everything beside a live server's log
// (the hold files of earlier versions lived there): a second holder is
// still refused, and so is a copy of the live log, as not the log's file,
// and no ID is issued twice.
func TestHoldOutlivesItsFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "idkit.db")
	env := []string{clitest.OffsetEnv(0)}
	seen := clitest.NewIDSet()
	first := startServer(t, os.Args[0], env, "--node", "17", "--log", log, "--schemes", "traceid")
	pid := first.cmd.Process.Pid
	got, err := first.fetch("traceid", 10_000, true)
	require.NoError(t, err)
	seen.Add("the server", strings.Join(got, "\n"))

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		if e.Name() != "idkit.db" {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, e.Name())))
		}
	}
	assertRefused(t, clitest.Exec(t, "new", "traceid", "--node", "17", "--log", log, "-n", "1000"), pid, "new after the files beside the log were removed")

	copied := filepath.Join(t.TempDir(), "copy.db")
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(copied, b, 0o600))
	for _, args := range [][]string{
		{"new", "traceid", "--node", "17", "--log", copied, "-n", "1000"},
		{"serve", "--addr", "127.0.0.1:0", "--node", "17", "--log", copied, "--schemes", "traceid"},
	} {
		c := clitest.Exec(t, args...)
		clitest.AssertDisplaced(t, c, copied, "a copy of the live log: "+strings.Join(args, " "))
	}
	got, err = first.fetch("traceid", 10_000, true)
	require.NoError(t, err)
	seen.Add("the server", strings.Join(got, "\n"))
	require.NoError(t, first.stop(t, syscall.SIGTERM))
	assert.Empty(t, seen.Repeats, "IDs issued twice")
}
