package cli_test

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// idkitNoSleep runs the command line args on the fake clock f and fails
// the test if the command sleeps on it.
func idkitNoSleep(t *testing.T, f *clock.Fake, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := &cli.Console{Stdout: &out, Stderr: &errOut, Clock: f}
	done := make(chan int)
	go func() { done <- c.Run(args) }()
	deadline := time.Now().Add(testwait.Bound)
	for time.Now().Before(deadline) {
		select {
		case code := <-done:
			require.Equal(t, 0, code, errOut.String())
			return out.String(), errOut.String()
		case <-time.After(100 * time.Microsecond):
			if f.Sleepers() > 0 {
				f.Advance(time.Hour) // let it finish, then fail
				testwait.Recv(t, done, "return of the command once the clock moved")
				require.FailNow(t, "the command waited", "%v", args)
			}
		}
	}
	require.FailNow(t, "the command did not return", "%v within %v", args, testwait.Bound)
	return "", ""
}

// TestNewBackToBack runs 100 calls "new traceid --node 7 --log FILE -n 10"
// (and the same for snowflake) on a clock that stands still: none but the
// node's first with the log waits (a traceid one waits for the next
// second), and together they print 1,000 distinct, increasing IDs.
func TestNewBackToBack(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{"traceid", "snowflake"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "idkit.db")
			f := clock.NewFake(time.Date(2026, 6, 1, 12, 0, 0, 500_000_000, time.UTC))
			var prev int64
			for k := range 100 {
				args := []string{"new", scheme, "--node", "7", "--log", log, "-n", "10"}
				var stdout, stderr string
				if k == 0 {
					var code int
					code, stdout, stderr = clitest.RunOn(f, 10*time.Millisecond, args...)
					require.Equal(t, 0, code, stderr)
				} else {
					stdout, stderr = idkitNoSleep(t, f, args...)
				}
				assert.Empty(t, stderr)
				ids := strings.Fields(stdout)
				require.Len(t, ids, 10)
				for _, s := range ids {
					id, err := strconv.ParseInt(s, 10, 64)
					require.NoError(t, err)
					require.Greater(t, id, prev, "distinct and increasing")
					prev = id
				}
			}
		})
	}
}

// TestNewSaysWhyItWaits checks the one stderr line of a call without a
// store that waits, and that a short wait goes unsaid.
func TestNewSaysWhyItWaits(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 6, 1, 12, 0, 0, 250_000_000, time.UTC)
	code, stdout, stderr := clitest.RunOn(clock.NewFake(at), 10*time.Millisecond, "new", "traceid", "--node", "7")
	require.Equal(t, 0, code, stderr)
	assert.Len(t, strings.Fields(stdout), 1)
	assert.Equal(t, "idkit new: waiting 750ms for a fresh second, so that no earlier call's IDs repeat; --log FILE makes calls instant\n", stderr)

	code, _, stderr = clitest.RunOn(clock.NewFake(at), time.Millisecond, "new", "snowflake", "--node", "7")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr, "a wait of at most 1 ms goes unsaid")
}
