package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testenv"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// okCall requires that c succeeded, and returns what it printed.
func okCall(t *testing.T, c call) string {
	t.Helper()
	require.Equal(t, 0, c.code, "%v: %s", c.args, c.stderr)
	return c.stdout
}

// assertDisplaced checks that c was refused in one line because path is
// not where its log was last written, saying what to run, and printed no
// ID.
func assertDisplaced(t *testing.T, c call, path, what string) {
	t.Helper()
	assert.Equal(t, 1, c.code, "%s: exit status; stderr: %s", what, c.stderr)
	assert.Empty(t, c.stdout, "%s: no ID", what)
	assert.Regexp(t, regexpQuote(path)+` (is not the file this log was last written through|was written back in place from an older copy)`, c.stderr, what)
	assert.Contains(t, c.stderr, "idkit launch adopt --log "+path, "%s: says what to run", what)
	assert.Equal(t, 1, strings.Count(c.stderr, "\n"), "%s: one line: %s", what, c.stderr)
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestLogRemovedUnderServe removes a running server's launch log, or
// renames a copy over it (a restore): the server stops issuing under its
// nodes, /readyz says why, "idkit new" on the path is refused naming the
// server while it lives (and the copy, as not the log's file, once it has
// stopped), and no ID is issued twice, also once the path is used again
// as docs/cli.md says.
func TestLogRemovedUnderServe(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"removed", "replaced"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "idkit.db")
			okCall(t, runIdkit(t, "launch", "begin", "--log", log))
			srv := startServer(t, os.Args[0], []string{cliOffsetEnv + "=0s"}, "--node", "17", "--log", log, "--schemes", "traceid,snowflake,decimalid")
			pid := srv.cmd.Process.Pid
			seen := newIDSet()
			fetch := func(scheme string) error {
				got, err := srv.fetch(scheme, 2000, true)
				seen.add("the server's "+scheme, strings.Join(got, "\n"))
				return err
			}
			for _, scheme := range []string{"traceid", "snowflake", "decimalid"} {
				require.NoError(t, fetch(scheme))
			}

			if how == "removed" {
				require.NoError(t, os.Remove(log))
			} else {
				b, err := os.ReadFile(log)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(log+".restore", b, 0o600))
				require.NoError(t, os.Rename(log+".restore", log))
			}
			for _, args := range [][]string{
				{"new", "traceid", "--node", "17", "--log", log, "-n", "100000"},
				{"new", "snowflake", "--node", "17", "--log", log, "-n", "10000"},
				{"new", "decimalid", "--launch", "1", "--log", log, "-n", "1000"},
			} {
				c := runIdkit(t, args...)
				seen.add(strings.Join(args[:2], " "), c.stdout)
				assert.Equal(t, 1, c.code, "%v: %s", args, c.stderr)
				assert.Empty(t, c.stdout, "%v: no ID", args)
				assert.Contains(t, c.stderr, log+" was removed or replaced under idkit-full.test serve (pid "+strconv.Itoa(pid)+")", "%v", args)
				assert.Equal(t, 1, strings.Count(c.stderr, "\n"), "%v: one line: %s", args, c.stderr)
			}
			for _, scheme := range []string{"traceid", "snowflake", "decimalid"} {
				testwait.Until(t, func() bool { return fetch(scheme) != nil }, "the server's "+scheme+" to stop issuing")
				err := fetch(scheme)
				require.Error(t, err)
				assert.Contains(t, err.Error(), "status 503", scheme)
			}
			var rep struct {
				Status string
				Checks map[string]string
			}
			assert.Equal(t, 503, getJSON(t, srv.url+"/readyz", &rep))
			assert.Equal(t, "lost: the launch log file was removed or replaced; restart the server", rep.Checks["traceid node"], "%+v", rep)
			assert.Equal(t, "lost: the launch log file was removed or replaced; restart the server", rep.Checks["snowflake node"], "%+v", rep)
			assert.Equal(t, "lost: the launch log file was removed or replaced; restart the server", rep.Checks["launch log"], "decimalid's generator ids came from it: %+v", rep)
			require.NoError(t, srv.stop(t, syscall.SIGTERM))

			// Once the server has stopped: a new log at a removed one's
			// path; the copy, adopted as restored with the data's figures.
			if how == "replaced" {
				assertDisplaced(t, runIdkit(t, "new", "traceid", "--node", "17", "--log", log, "-n", "1000"), log, "the copy once the server stopped")
				okCall(t, runIdkit(t, "launch", "adopt", "--log", log, "--restored", "--launch", "1", "--margin", "2s"))
			}
			launch := strings.TrimSpace(okCall(t, runIdkit(t, "launch", "begin", "--log", log)))
			seen.add("traceid after", okCall(t, runIdkit(t, "new", "traceid", "--node", "17", "--log", log, "-n", "100000")))
			seen.add("snowflake after", okCall(t, runIdkit(t, "new", "snowflake", "--node", "17", "--log", log, "-n", "10000")))
			if how == "replaced" {
				seen.add("decimalid after", okCall(t, runIdkit(t, "new", "decimalid", "--launch", launch, "--log", log, "-n", "1000")))
			}
			assert.Empty(t, seen.repeats, "IDs issued twice")
		})
	}
}

// TestCopiesUsedOneAfterAnother bakes a launch log into two copies, as an
// image does, and uses them one after the other: each is refused until a
// person adopts it; adopted as moved, the first serves; the second is
// still refused, after the first has ended too; no ID repeats.
func TestCopiesUsedOneAfterAnother(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	origin := filepath.Join(dir, "idkit.db")
	okCall(t, runIdkit(t, "launch", "begin", "--log", origin))
	seen := newIDSet()
	seen.add("the origin's traceid", okCall(t, runIdkit(t, "new", "traceid", "--node", "4", "--log", origin, "-n", "100000")))
	seen.add("the origin's decimalid", okCall(t, runIdkit(t, "new", "decimalid", "--log", origin, "-n", "1000")))
	b, err := os.ReadFile(origin)
	require.NoError(t, err)
	first, second := filepath.Join(t.TempDir(), "idkit.db"), filepath.Join(t.TempDir(), "idkit.db")
	require.NoError(t, os.WriteFile(first, b, 0o600))
	require.NoError(t, os.WriteFile(second, b, 0o600))
	require.NoError(t, os.Remove(origin)) // the image's build is gone

	for _, path := range []string{first, second} {
		assertDisplaced(t, runIdkit(t, "new", "traceid", "--node", "4", "--log", path, "-n", "100000"), path, "traceid from a baked copy")
		assertDisplaced(t, runIdkit(t, "new", "decimalid", "--log", path, "-n", "1000"), path, "decimalid from a baked copy")
	}
	out := okCall(t, runIdkit(t, "launch", "adopt", "--log", first, "--moved", "--by", "ops"))
	assert.Regexp(t, `^adopted +`+regexpQuote(first)+` \(moved\)\nwas +inode \d+ on an? .*\nnow +inode \d+ on `, out)
	seen.add("the first copy's traceid", okCall(t, runIdkit(t, "new", "traceid", "--node", "4", "--log", first, "-n", "100000")))
	seen.add("the first copy's decimalid", okCall(t, runIdkit(t, "new", "decimalid", "--log", first, "-n", "1000")))
	assertDisplaced(t, runIdkit(t, "new", "traceid", "--node", "4", "--log", second, "-n", "100000"), second, "the second copy after the first")
	assertDisplaced(t, runIdkit(t, "launch", "begin", "--log", second), second, "a launch from the second copy")
	assert.Empty(t, seen.repeats, "IDs issued twice")
	assert.Len(t, seen.by, 2*100000+2*1000)
}

// TestCopyFromAnotherNetworkNamespace runs a server on a launch log and,
// in a network and mount namespace of its own (a container's), "idkit
// new" on a copy of the log: refused, as not the log's file, though no
// socket of the server's namespace is seen there.
func TestCopyFromAnotherNetworkNamespace(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		testenv.Missing(t, "a network namespace of its own needs root")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		testenv.Missing(t, "unshare (util-linux) is not installed")
	}
	log := filepath.Join(t.TempDir(), "idkit.db")
	okCall(t, runIdkit(t, "launch", "begin", "--log", log))
	srv := startServer(t, os.Args[0], []string{cliOffsetEnv + "=0s"}, "--node", "17", "--log", log, "--schemes", "traceid,decimalid")
	seen := newIDSet()
	got, err := srv.fetch("traceid", 5000, true)
	require.NoError(t, err)
	seen.add("the server", strings.Join(got, "\n"))

	copied := filepath.Join(t.TempDir(), "idkit.db")
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(copied, b, 0o600))
	container := otherName{path: copied, prefix: []string{"unshare", "--net", "--mount", "--propagation", "private"}}
	for _, args := range [][]string{
		{"new", "traceid", "--node", "17", "--log", copied, "-n", "100000"},
		{"new", "decimalid", "--launch", "1", "--log", copied, "-n", "1000"},
	} {
		c := container.run(t, args...)
		seen.add("the container", c.stdout)
		assertDisplaced(t, c, copied, strings.Join(args[:2], " ")+" in another network namespace")
	}
	got, err = srv.fetch("traceid", 5000, true)
	require.NoError(t, err, "the server goes on")
	seen.add("the server", strings.Join(got, "\n"))
	require.NoError(t, srv.stop(t, syscall.SIGTERM))
	assert.Empty(t, seen.repeats, "IDs issued twice")
}
