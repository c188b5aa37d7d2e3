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
// docs/cli.md tells an operator to: the restored file, as a new file or
// written back over the log's own, is refused as it is (it would hand out
// again the launch ids, generator ids and blocks handed out since the
// backup); "idkit launch adopt --restored" with the data's figures moves
// it past them, and past the time its TraceIds were issued in, so that
// nothing repeats even with the clock stepped back.
func TestRestoredLogMovedPast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "idkit.db")
	ok := func(c call) string {
		t.Helper()
		return okCall(t, c)
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

	// Restored as a new file, and over the log's own: refused as it is,
	// by launch advance too.
	bare := filepath.Join(t.TempDir(), "idkit.db")
	require.NoError(t, os.WriteFile(bare, backup, 0o600))
	assertDisplaced(t, runIdkit(t, "launch", "begin", "--log", bare), bare, "a backup restored as a new file")
	require.NoError(t, os.WriteFile(log, backup, 0o600))
	assertDisplaced(t, runIdkit(t, "launch", "begin", "--log", log), log, "a backup written back in place")
	assertDisplaced(t, runIdkit(t, "new", "traceid", "--node", "3", "--log", log, "-n", "1000"), log, "traceid from a backup written back in place")
	c := runIdkit(t, "launch", "advance", "--log", log, "--launch", "3")
	assert.Equal(t, 1, c.code)
	assert.Contains(t, c.stderr, "idkit launch adopt --log "+log+" --restored")

	// Adopted without a figure the log cannot know: refused, naming it.
	c = runIdkit(t, "launch", "adopt", "--log", log, "--restored")
	assert.Equal(t, 1, c.code)
	assert.Contains(t, c.stderr, "it cannot know, and will not guess, the last launch id (it holds launches up to 2; --launch N)")
	c = runIdkit(t, "launch", "adopt", "--log", log, "--moved")
	assert.Equal(t, 1, c.code)
	assert.Contains(t, c.stderr, "cannot be adopted as moved")

	// Adopted with the figures the data holds: the last launch, 3, and
	// launch 2 gone on with, its last generator id 1.
	out := ok(runIdkit(t, "launch", "adopt", "--log", log, "--restored", "--launch", "3", "--generator", "2=1", "--margin", "2s", "--by", "ops"))
	assert.Regexp(t, `^adopted +`+regexpQuote(log)+` \(rolled back\)\n`+
		`launch +next after 3\n`+
		`generator of launch 2 +next after 1\n`+
		`high-water marks +at least \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$`, out)
	c = runIdkit(t, "launch", "adopt", "--log", log, "--restored", "--launch", "3")
	assert.Equal(t, 1, c.code, "a second adoption: nothing to adopt")

	assert.Equal(t, "4\n", ok(runIdkit(t, "launch", "begin", "--log", log)))
	seen.add("decimalid after the restore", ok(runIdkit(t, "new", "decimalid", "--launch", "2", "--log", log, "-n", "3")))
	stepped := runWithOffset(t, -30*time.Second, "new", "traceid", "--node", "3", "--log", log, "-n", "1000")
	seen.add("traceid after the restore, the clock 30 s back", ok(stepped))
	assert.Empty(t, seen.repeats, "IDs issued twice")
	assert.Len(t, seen.by, 3*3+3*1000)

	// A backup written back under a running server: adopt refuses while
	// the server holds its node, naming it.
	srv := startServer(t, os.Args[0], []string{cliOffsetEnv + "=0s"}, "--node", "3", "--log", log, "--schemes", "traceid")
	require.NoError(t, os.WriteFile(log, backup, 0o600))
	c = runIdkit(t, "launch", "adopt", "--log", log, "--restored", "--launch", "4")
	assert.Equal(t, 1, c.code)
	assert.Contains(t, c.stderr, "traceid/node/3 in "+log+" is held by ")
	require.NoError(t, srv.stop(t, syscall.SIGTERM))
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
