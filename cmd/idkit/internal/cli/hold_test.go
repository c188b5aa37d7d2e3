package cli_test

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// The process tests of this file run idkit as real processes: this test
// binary (built with the race detector under -race) run again with
// clitest.OffsetEnv, which makes it idkit on the system clock.

// parallel runs the command lines at the same time and returns their
// calls.
func parallel(t *testing.T, lines [][]string) []clitest.Call {
	t.Helper()
	calls := make([]clitest.Call, len(lines))
	var wg sync.WaitGroup
	for i, args := range lines {
		wg.Go(func() { calls[i] = clitest.Exec(t, args...) })
	}
	wg.Wait()
	return calls
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
			seen := clitest.NewIDSet()
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
					printed := seen.Add(fmt.Sprintf("call %d (wait %v)", i, wait), c.Stdout)
					if c.Code == 0 {
						ok++
						assert.Equal(t, n, printed, "call %d: a call that succeeds prints every ID", i)
						continue
					}
					require.False(t, wait, "call %d with --wait failed: %s", i, c.Stderr)
					assert.Zero(t, printed, "call %d: a refused call prints nothing", i)
					// A call refused between the holder's lock and its record
					// (a write of its own, just after) says that instead.
					assert.Regexp(t, `is held by (cli\.test new `+scheme+` \(pid |another process \(its record is not written yet\))`, c.Stderr, "call %d names the holder", i)
					assert.Contains(t, c.Stderr, "use another node, wait for it with --wait DURATION, or claim nodes with --etcd")
				}
				assert.Empty(t, seen.Repeats, "IDs printed twice")
				if wait {
					assert.Equal(t, procs, ok, "with --wait every call succeeds")
				} else {
					assert.GreaterOrEqual(t, ok, 1, "the first holder succeeds")
					t.Logf("%s without --wait: %d of %d calls succeeded, the rest were refused", scheme, ok, procs)
				}
			}
			assert.GreaterOrEqual(t, len(seen.By), (procs+1)*n, "distinct IDs in all")
		})
	}
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

	code, _, stderr := clitest.RunOn(clock.NewFake(time.Date(2026, 6, 1, 12, 0, 0, 999_500_000, time.UTC)), time.Millisecond, "new", "traceid", "--node", "7")
	require.Equal(t, 0, code)
	assert.Empty(t, stderr, "no warning where stderr is not a terminal")
}
