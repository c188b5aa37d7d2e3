package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRestoredLogMovedPast restores a launch log from a backup, as
// docs/cli.md tells an operator to: a restored log alone would hand out
// again the launch ids, generator ids and blocks handed out since the
// backup; "idkit launch advance" moves it past them, and past the time its
// TraceIds were issued in, so that nothing repeats even with the clock
// stepped back.
func TestRestoredLogMovedPast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "idkit.db")
	ok := func(c call) string {
		t.Helper()
		require.Equal(t, 0, c.code, "%v: %s", c.args, c.stderr)
		return c.stdout
	}
	ok(runIdkit(t, "launch", "begin", "--log", log))
	assert.Equal(t, "2\n", ok(runIdkit(t, "launch", "begin", "--log", log)))
	seen := newIDSet()
	seen.add("decimalid before the backup", ok(runIdkit(t, "new", "decimalid", "--launch", "2", "--log", log, "-n", "3")))
	seen.add("traceid before the backup", ok(runIdkit(t, "new", "traceid", "--node", "3", "--log", log, "-n", "1000")))
	backup, err := os.ReadFile(log)
	require.NoError(t, err)

	// After the backup: a launch, a generator id, TraceIds.
	assert.Equal(t, "3\n", ok(runIdkit(t, "launch", "begin", "--log", log)))
	seen.add("decimalid after the backup", ok(runIdkit(t, "new", "decimalid", "--launch", "2", "--log", log, "-n", "3")))
	seen.add("traceid after the backup", ok(runIdkit(t, "new", "traceid", "--node", "3", "--log", log, "-n", "1000")))
	lastUse := time.Now()

	// Restored and used as it is, the log repeats the launch id.
	bare := filepath.Join(t.TempDir(), "idkit.db")
	require.NoError(t, os.WriteFile(bare, backup, 0o600))
	assert.Equal(t, "3\n", ok(runIdkit(t, "launch", "begin", "--log", bare)), "a restored log hands out launch 3 again")

	// Restored, then moved past what was handed out since the backup.
	require.NoError(t, os.WriteFile(log, backup, 0o600))
	marks := lastUse.Add(2 * time.Second).UTC().Format(time.RFC3339) // the last use plus the lease, a second
	out := ok(runIdkit(t, "launch", "advance", "--log", log, "--launch", "3", "--generator", "2=1", "--marks", marks))
	assert.Equal(t, "launch                 next after 3\n"+
		"generator of launch 2  next after 1\n"+
		"high-water marks       at least "+marks+"\n", out)
	assert.Equal(t, "nothing moved: "+log+" is past every value given\n",
		ok(runIdkit(t, "launch", "advance", "--log", log, "--launch", "3", "--generator", "2=1", "--marks", marks)), "a second run moves nothing")

	assert.Equal(t, "4\n", ok(runIdkit(t, "launch", "begin", "--log", log)))
	seen.add("decimalid after the restore", ok(runIdkit(t, "new", "decimalid", "--launch", "2", "--log", log, "-n", "3")))
	stepped := runWithOffset(t, -30*time.Second, "new", "traceid", "--node", "3", "--log", log, "-n", "1000")
	seen.add("traceid after the restore, the clock 30 s back", ok(stepped))
	assert.Empty(t, seen.repeats, "IDs issued twice")
	assert.Len(t, seen.by, 3*3+3*1000)

	// advance refuses while a node is held, naming the holder.
	first := startServer(t, os.Args[0], []string{cliOffsetEnv + "=0s"}, "--node", "3", "--log", log, "--schemes", "traceid")
	c := runIdkit(t, "launch", "advance", "--log", log, "--launch", "10")
	assert.Equal(t, 1, c.code)
	assert.Contains(t, c.stderr, "traceid/node/3 in "+log+" is held by ")
	require.NoError(t, first.stop(t, syscall.SIGTERM))
}

// runWithOffset runs idkit with args on a clock off by offset.
func runWithOffset(t *testing.T, offset time.Duration, args ...string) call {
	t.Helper()
	return runCall(t, func(ctx context.Context) *exec.Cmd {
		cmd := idkitCmd(ctx, args...)
		cmd.Env = append(cmd.Env, cliOffsetEnv+"="+offset.String())
		return cmd
	}, args)
}
