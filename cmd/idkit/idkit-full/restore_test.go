package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
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
	ok := func(c clitest.Call) string {
		t.Helper()
		return clitest.OK(t, c)
	}
	ok(clitest.Exec(t, "launch", "begin", "--log", log))
	assert.Equal(t, "2\n", ok(clitest.Exec(t, "launch", "begin", "--log", log)))
	seen := clitest.NewIDSet()
	seen.Add("decimalid before the backup", ok(clitest.Exec(t, "new", "decimalid", "--launch", "2", "--log", log, "-n", "3")))
	seen.Add("traceid before the backup", ok(clitest.Exec(t, "new", "traceid", "--node", "3", "--log", log, "-n", "1000")))
	backup, err := os.ReadFile(log)
	require.NoError(t, err)

	// After the backup: a launch, a generator id, TraceIds.
	assert.Equal(t, "3\n", ok(clitest.Exec(t, "launch", "begin", "--log", log)))
	seen.Add("decimalid after the backup", ok(clitest.Exec(t, "new", "decimalid", "--launch", "2", "--log", log, "-n", "3")))
	seen.Add("traceid after the backup", ok(clitest.Exec(t, "new", "traceid", "--node", "3", "--log", log, "-n", "1000")))

	// Restored as a new file, and over the log's own: refused as it is,
	// by launch advance too.
	bare := filepath.Join(t.TempDir(), "idkit.db")
	require.NoError(t, os.WriteFile(bare, backup, 0o600))
	clitest.AssertDisplaced(t, clitest.Exec(t, "launch", "begin", "--log", bare), bare, "a backup restored as a new file")
	require.NoError(t, os.WriteFile(log, backup, 0o600))
	clitest.AssertDisplaced(t, clitest.Exec(t, "launch", "begin", "--log", log), log, "a backup written back in place")
	clitest.AssertDisplaced(t, clitest.Exec(t, "new", "traceid", "--node", "3", "--log", log, "-n", "1000"), log, "traceid from a backup written back in place")
	c := clitest.Exec(t, "launch", "advance", "--log", log, "--launch", "3")
	assert.Equal(t, 1, c.Code)
	assert.Contains(t, c.Stderr, "idkit launch adopt --log "+log+" --restored")

	// Adopted without a figure the log cannot know: refused, naming it.
	c = clitest.Exec(t, "launch", "adopt", "--log", log, "--restored")
	assert.Equal(t, 1, c.Code)
	assert.Contains(t, c.Stderr, "it cannot know, and will not guess, the last launch id (it holds launches up to 2; --launch N)")
	c = clitest.Exec(t, "launch", "adopt", "--log", log, "--moved")
	assert.Equal(t, 1, c.Code)
	assert.Contains(t, c.Stderr, "cannot be adopted as moved")

	// Adopted with the figures the data holds: the last launch, 3, and
	// launch 2 gone on with, its last generator id 1.
	out := ok(clitest.Exec(t, "launch", "adopt", "--log", log, "--restored", "--launch", "3", "--generator", "2=1", "--margin", "2s", "--by", "ops"))
	assert.Regexp(t, `^adopted +`+regexp.QuoteMeta(log)+` \(rolled back\)\n`+
		`launch +next after 3\n`+
		`generator of launch 2 +next after 1\n`+
		`high-water marks +at least \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$`, out)
	c = clitest.Exec(t, "launch", "adopt", "--log", log, "--restored", "--launch", "3")
	assert.Equal(t, 1, c.Code, "a second adoption: nothing to adopt")

	assert.Equal(t, "4\n", ok(clitest.Exec(t, "launch", "begin", "--log", log)))
	seen.Add("decimalid after the restore", ok(clitest.Exec(t, "new", "decimalid", "--launch", "2", "--log", log, "-n", "3")))
	stepped := runWithOffset(t, -30*time.Second, "new", "traceid", "--node", "3", "--log", log, "-n", "1000")
	seen.Add("traceid after the restore, the clock 30 s back", ok(stepped))
	assert.Empty(t, seen.Repeats, "IDs issued twice")
	assert.Len(t, seen.By, 3*3+3*1000)

	// A backup written back under a running server: adopt refuses while
	// the server holds its node, naming it.
	srv := startServer(t, os.Args[0], []string{clitest.OffsetEnv(0)}, "--node", "3", "--log", log, "--schemes", "traceid")
	require.NoError(t, os.WriteFile(log, backup, 0o600))
	c = clitest.Exec(t, "launch", "adopt", "--log", log, "--restored", "--launch", "4")
	assert.Equal(t, 1, c.Code)
	assert.Contains(t, c.Stderr, "traceid/node/3 in "+log+" is held by ")
	require.NoError(t, srv.stop(t, syscall.SIGTERM))
}

// runWithOffset runs idkit with args on a clock off by offset.
func runWithOffset(t *testing.T, offset time.Duration, args ...string) clitest.Call {
	t.Helper()
	return clitest.ExecCmd(t, func(ctx context.Context) *exec.Cmd {
		cmd := clitest.Command(ctx, args...)
		cmd.Env = append(cmd.Env, clitest.OffsetEnv(offset))
		return cmd
	}, args)
}
