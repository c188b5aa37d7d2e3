package cli_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// TestNewCrashRestart runs "idkit new traceid|snowflake --node 7 --log FILE
// -n K" as separate processes, one after another: some on a clock stepped
// back 0 to 2 s, some killed with SIGKILL at a random moment. Every ID a
// call printed (killed or not) was reserved before it was printed, so no ID
// repeats and each call's IDs are above every earlier call's.
// IDKIT_CRASH_CALLS sets the number of calls per scheme (default 24: each process of the test binary takes a while to start).
func TestNewCrashRestart(t *testing.T) {
	t.Parallel()
	calls := 24
	if s := os.Getenv("IDKIT_CRASH_CALLS"); s != "" {
		var err error
		calls, err = strconv.Atoi(s)
		require.NoError(t, err, "IDKIT_CRASH_CALLS")
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	for _, scheme := range []string{"traceid", "snowflake"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(uint64(seed), uint64(len(scheme))))
			log := filepath.Join(t.TempDir(), "idkit.db")
			var high int64 // the largest ID printed so far
			total, killed, killedPrinted, stepped := 0, 0, 0, 0
			took := 20 * time.Millisecond // how long a whole call takes, updated as calls finish
			for i := range calls {
				var offset time.Duration
				if rng.IntN(3) == 0 {
					offset = -time.Duration(rng.Int64N(int64(2 * time.Second)))
					stepped++
				}
				k := 1 + rng.IntN(50)
				// A call waits at most for a clock stepped back 2 s; one
				// still running after testwait.Bound is killed and fails.
				ctx, cancel := context.WithTimeout(context.Background(), testwait.Bound)
				cmd := exec.CommandContext(ctx, os.Args[0], "new", scheme, "--node", "7", "--log", log, "-n", strconv.Itoa(k))
				cmd.Env = append(os.Environ(), clitest.OffsetEnv(offset))
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				start := time.Now()
				require.NoError(t, cmd.Start())
				kill := rng.IntN(3) == 0
				if kill {
					// A random moment of a real process, most often late,
					// while it reserves and prints.
					time.Sleep(took/2 + time.Duration(rng.Int64N(int64(took/2))))
					_ = cmd.Process.Signal(syscall.SIGKILL)
				}
				err := cmd.Wait()
				timedOut := ctx.Err()
				cancel()
				require.NoError(t, timedOut, "call %d did not end within %v: %s", i, testwait.Bound, stderr.String())
				if !kill {
					took = time.Since(start)
				}
				if kill && err != nil {
					killed++
				} else {
					require.NoError(t, err, "call %d: %s", i, stderr.String())
				}
				out := stdout.String()
				if j := strings.LastIndexByte(out, '\n'); j >= 0 {
					out = out[:j+1] // a line cut off by the kill is no ID
				} else {
					out = ""
				}
				ids := strings.Fields(out)
				if !kill || err == nil {
					require.Len(t, ids, k, "call %d", i)
				} else if len(ids) > 0 {
					killedPrinted++
				}
				for _, s := range ids {
					id, err := strconv.ParseInt(s, 10, 64)
					require.NoError(t, err, "call %d", i)
					require.Greater(t, id, high, "call %d (clock offset %v) repeats or goes below an earlier ID", i, offset)
					high = id
					total++
				}
			}
			t.Logf("%d calls, %d killed (%d after printing IDs), %d on a clock stepped back; %d IDs, no repeat",
				calls, killed, killedPrinted, stepped, total)
			assert.Positive(t, total)
		})
	}
}
