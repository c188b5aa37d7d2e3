package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/store"
)

func TestLaunch(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "idkit.db")
	f := clock.NewFake(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))

	code, stdout, stderr := clitest.RunOn(f, time.Second, "launch", "list", "--log", log)
	assert.Equal(t, 0, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "idkit launch list: no launches in "+log+"\n", stderr)
	code, stdout, _ = clitest.RunOn(f, time.Second, "launch", "list", "--log", log, "--json")
	assert.Equal(t, 0, code)
	assert.Equal(t, "[]\n", stdout)

	for i, args := range [][]string{
		{"--ticket", "REL-41", "--by", "alice"},
		{},
		{"--ticket", "REL-42", "--by", "deploy-bot", "--note", "canary\tthen all"},
	} {
		code, stdout, stderr := clitest.RunOn(f, time.Second, append([]string{"launch", "begin", "--log", log}, args...)...)
		require.Equal(t, 0, code, stderr)
		assert.Equal(t, []string{"1\n", "2\n", "3\n"}[i], stdout, "only the launch id")
		assert.Empty(t, stderr)
		f.Advance(time.Hour)
	}

	code, stdout, stderr = clitest.RunOn(f, time.Second, "launch", "current", "--log", log)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, `launch   3
started  2026-06-01T14:00:00Z
ticket   REL-42
by       deploy-bot
note     canary\tthen all
`, stdout)

	code, stdout, stderr = clitest.RunOn(f, time.Second, "launch", "current", "--log", log, "--json")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, `{"id":3,"started_at":"2026-06-01T14:00:00Z","ticket":"REL-42","by":"deploy-bot","note":"canary\tthen all"}`+"\n", stdout)

	code, stdout, stderr = clitest.RunOn(f, time.Second, "launch", "list", "--log", log)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, `LAUNCH  STARTED               TICKET  BY          NOTE
1       2026-06-01T12:00:00Z  REL-41  alice
2       2026-06-01T13:00:00Z
3       2026-06-01T14:00:00Z  REL-42  deploy-bot  canary\tthen all
`, stdout)

	code, stdout, stderr = clitest.RunOn(f, time.Second, "launch", "list", "--json", "--log", log)
	require.Equal(t, 0, code, stderr)
	var launches []store.Launch
	require.NoError(t, json.Unmarshal([]byte(stdout), &launches))
	require.Len(t, launches, 3)
	assert.Equal(t, store.Launch{ID: 2, StartedAt: time.Date(2026, 6, 1, 13, 0, 0, 0, time.UTC)}, launches[1])
	assert.Equal(t, "alice", launches[0].By)

	// The default path is idkit.db in the working directory; the log above
	// is elsewhere, so the default one has no launch.
	code, _, stderr = clitest.Run("new", "decimalid", "--log", filepath.Join(t.TempDir(), "idkit.db"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "no launch in")
}

// TestBadLaunchLog runs every command that reads or writes the launch log
// against logs that are missing, corrupt, locked, or not files: each fails
// with exit status 1 and one line that names the problem.
func TestBadLaunchLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing.db")
	noDir := filepath.Join(dir, "no", "such", "dir", "idkit.db")

	corrupt := filepath.Join(dir, "corrupt.db")
	require.NoError(t, os.WriteFile(corrupt, []byte(strings.Repeat("not a launch log\n", 1000)), 0o600))

	locked := filepath.Join(dir, "locked.db")
	code, _, stderr := clitest.Run("launch", "begin", "--log", locked)
	require.Equal(t, 0, code, stderr)
	db, err := bolt.Open(locked, 0o600, &bolt.Options{Timeout: time.Second}) // holds the file's lock
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	commands := func(log string) [][]string {
		return [][]string{
			{"launch", "begin", "--log", log},
			{"launch", "current", "--log", log},
			{"launch", "list", "--log", log},
			{"new", "decimalid", "--log", log},
			{"new", "decimalid", "--log", log, "--launch", "3"},
			{"new", "traceid", "--node", "1", "--log", log},
			{"new", "snowflake", "--node", "1", "--log", log},
			{"inspect", "decimalid", "1-00001-00001", "--log", log},
		}
	}
	for _, tt := range []struct {
		name string
		log  string
		msg  string // in every error
		skip int    // how many of the commands succeed on this log
	}{
		{"corrupt", corrupt, "launchlog: corrupt file", 0},
		{"locked", locked, "launchlog: file locked by another process", 0},
		{"directory", dir, "is a directory", 0},
		{"no directory", noDir, "", 0},
	} {
		for _, args := range commands(tt.log) {
			t.Run(tt.name+"/"+strings.Join(args[:2], " "), func(t *testing.T) {
				t.Parallel()
				code, stdout, stderr := clitest.Run(args...)
				assert.Equal(t, 1, code, stdout)
				assert.Empty(t, stdout)
				assert.Contains(t, stderr, tt.msg)
				assert.Contains(t, stderr, tt.log, "names the file")
				clitest.AssertOneLine(t, stderr, args)
			})
		}
	}

	// A missing file is an empty log: reading it says there is no launch
	// and does not create it.
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"launch", "current", "--log", missing}, "no launch in " + missing + " yet; record one with 'idkit launch begin --log " + missing + "'"},
		{[]string{"new", "decimalid", "--log", missing}, "no launch in " + missing + " yet; record one with 'idkit launch begin --log " + missing + "', or give --launch N"},
		{[]string{"inspect", "decimalid", "1-00001-00001", "--log", missing}, "launch 1 of 10000100001 is not in " + missing},
	} {
		t.Run("missing/"+strings.Join(tt.args[:2], " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := clitest.Run(tt.args...)
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			assert.Equal(t, "idkit "+tt.args[0]+": "+tt.msg+"\n", stderr)
			assert.NoFileExists(t, missing)
		})
	}
}
