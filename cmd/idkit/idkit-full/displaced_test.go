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

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/testenv"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

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
			clitest.OK(t, clitest.Exec(t, "launch", "begin", "--log", log))
			srv := startServer(t, os.Args[0], []string{clitest.OffsetEnv(0)}, "--node", "17", "--log", log, "--schemes", "traceid,snowflake,decimalid")
			pid := srv.cmd.Process.Pid
			seen := clitest.NewIDSet()
			fetch := func(scheme string) error {
				got, err := srv.fetch(scheme, 2000, true)
				seen.Add("the server's "+scheme, strings.Join(got, "\n"))
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
				c := clitest.Exec(t, args...)
				seen.Add(strings.Join(args[:2], " "), c.Stdout)
				assert.Equal(t, 1, c.Code, "%v: %s", args, c.Stderr)
				assert.Empty(t, c.Stdout, "%v: no ID", args)
				assert.Contains(t, c.Stderr, log+" was removed or replaced under idkit-full.test serve (pid "+strconv.Itoa(pid)+")", "%v", args)
				assert.Equal(t, 1, strings.Count(c.Stderr, "\n"), "%v: one line: %s", args, c.Stderr)
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
				clitest.AssertDisplaced(t, clitest.Exec(t, "new", "traceid", "--node", "17", "--log", log, "-n", "1000"), log, "the copy once the server stopped")
				clitest.OK(t, clitest.Exec(t, "launch", "adopt", "--log", log, "--restored", "--launch", "1", "--margin", "2s"))
			}
			launch := strings.TrimSpace(clitest.OK(t, clitest.Exec(t, "launch", "begin", "--log", log)))
			seen.Add("traceid after", clitest.OK(t, clitest.Exec(t, "new", "traceid", "--node", "17", "--log", log, "-n", "100000")))
			seen.Add("snowflake after", clitest.OK(t, clitest.Exec(t, "new", "snowflake", "--node", "17", "--log", log, "-n", "10000")))
			if how == "replaced" {
				seen.Add("decimalid after", clitest.OK(t, clitest.Exec(t, "new", "decimalid", "--launch", launch, "--log", log, "-n", "1000")))
			}
			assert.Empty(t, seen.Repeats, "IDs issued twice")
		})
	}
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
	clitest.OK(t, clitest.Exec(t, "launch", "begin", "--log", log))
	srv := startServer(t, os.Args[0], []string{clitest.OffsetEnv(0)}, "--node", "17", "--log", log, "--schemes", "traceid,decimalid")
	seen := clitest.NewIDSet()
	got, err := srv.fetch("traceid", 5000, true)
	require.NoError(t, err)
	seen.Add("the server", strings.Join(got, "\n"))

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
		seen.Add("the container", c.Stdout)
		clitest.AssertDisplaced(t, c, copied, strings.Join(args[:2], " ")+" in another network namespace")
	}
	got, err = srv.fetch("traceid", 5000, true)
	require.NoError(t, err, "the server goes on")
	seen.Add("the server", strings.Join(got, "\n"))
	require.NoError(t, srv.stop(t, syscall.SIGTERM))
	assert.Empty(t, seen.Repeats, "IDs issued twice")
}
