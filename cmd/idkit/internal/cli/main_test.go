package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/leakcheck"
)

// handedOver is what the tests' handOver prints instead of running
// idkit-full: no test process turns into another program.
const handedOver = "handed over:"

func TestMain(m *testing.M) {
	handOver = func(args []string, stderr io.Writer) int {
		fmt.Fprintln(stderr, handedOver, strings.Join(args, " "))
		return 3
	}
	clitest.Main(m, func(stdin io.Reader, stdout, stderr io.Writer, clk clock.Clock, args []string) int {
		return (&Console{Stdin: stdin, Stdout: stdout, Stderr: stderr, Clock: clk}).Run(args)
	}, leakcheck.Options()...)
}

// TestHandsOverWhatNeedsFull: serve, compare, nodes, their help and every
// command line with --etcd (or $IDKIT_ETCD_ENDPOINTS) go to idkit-full
// unchanged; everything else runs here.
func TestHandsOverWhatNeedsFull(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--node", "1"},
		{"serve", "-h"},
		{"compare", "-n", "1000"},
		{"nodes", "--etcd", "127.0.0.1:2379"},
		{"help", "serve"},
		{"new", "traceid", "--etcd", "127.0.0.1:2379"},
		{"new", "snowflake", "-etcd=127.0.0.1:2379", "--datacenter", "1"},
		{"launch", "begin", "--etcd=127.0.0.1:2379"},
		{"inspect", "decimalid", "10000100001", "--etcd", "127.0.0.1:2379"},
	} {
		code, stdout, stderr := clitest.Run(args...)
		assert.Equal(t, 3, code, "%q: %s", args, stderr)
		assert.Empty(t, stdout, "%q", args)
		assert.Equal(t, handedOver+" "+strings.Join(args, " ")+"\n", stderr, "%q", args)
	}
	for _, args := range [][]string{
		{"new", "traceid", "--node", "1", "--etcd-prefix", "app/"},
		{"new", "uuidv7", "--", "--etcd"},
		{"inspect", "traceid", "1"},
		{"help"},
		{"help", "new"},
		{"version"},
	} {
		code, _, stderr := clitest.Run(args...)
		assert.NotContains(t, stderr, handedOver, "%q", args)
		assert.NotEqual(t, 3, code, "%q", args)
	}
	t.Run("environment", func(t *testing.T) {
		t.Setenv(EnvEtcdEndpoints, "127.0.0.1:2379")
		code, _, stderr := clitest.Run("launch", "list")
		assert.Equal(t, 3, code, stderr)
		assert.Equal(t, handedOver+" launch list\n", stderr)
	})
}

// TestHelpListsEveryCommand: idkit's own help lists the commands that it
// hands over, with their synopses.
func TestHelpListsEveryCommand(t *testing.T) {
	code, stdout, stderr := clitest.Run("help")
	require.Equal(t, 0, code, stderr)
	for _, name := range []string{"new", "inspect", "launch", "nodes", "serve", "sql", "publicid", "compare", "version", "help"} {
		cmd := Lookup(name)
		require.NotNil(t, cmd, name)
		assert.Contains(t, stdout, "\n  "+name+" ", name)
		assert.NotEmpty(t, cmd.Usage, name)
		assert.Contains(t, stdout, cmd.Short, name)
		if marked := strings.Contains(stdout, cmd.Short+" [idkit-full]\n"); name == "nodes" || name == "serve" || name == "compare" {
			assert.True(t, marked, "%s runs in idkit-full: help says so", name)
		} else {
			assert.False(t, marked, "%s runs in idkit", name)
		}
	}
	assert.Contains(t, stdout, "The commands marked [idkit-full], and every command line with --etcd, run in\nidkit-full")
}

// TestHandOverRunsIdkitFull builds idkit and runs it beside a stand-in for
// idkit-full: the stand-in takes idkit's place (same pid, same arguments,
// its exit status), from idkit's directory or else from $PATH; without
// one, idkit says how to install it.
func TestHandOverRunsIdkitFull(t *testing.T) {
	bin := clitest.Build(t, "github.com/idkit/idkit/cmd/idkit")
	dir := filepath.Dir(bin)
	standIn := "#!/bin/sh\necho \"full $$ $*\"\nexit 7\n"

	run := func(path string) (code, pid int, stdout, stderr string) {
		var o, e bytes.Buffer
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "PATH="+path, EnvEtcdEndpoints+"=")
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var exit *exec.ExitError
		if err != nil && !assert.ErrorAs(t, err, &exit) {
			return -1, 0, "", err.Error()
		}
		return cmd.ProcessState.ExitCode(), cmd.Process.Pid, o.String(), e.String()
	}

	require.NoError(t, os.WriteFile(filepath.Join(dir, "idkit-full"), []byte(standIn), 0o755))
	code, pid, stdout, stderr := run("/usr/bin:/bin")
	assert.Equal(t, 7, code, stderr)
	assert.Equal(t, fmt.Sprintf("full %d serve --addr 127.0.0.1:0\n", pid), stdout, "beside idkit")

	onPath := t.TempDir()
	require.NoError(t, os.Rename(filepath.Join(dir, "idkit-full"), filepath.Join(onPath, "idkit-full")))
	code, pid, stdout, stderr = run(onPath + ":/usr/bin:/bin")
	assert.Equal(t, 7, code, stderr)
	assert.Equal(t, fmt.Sprintf("full %d serve --addr 127.0.0.1:0\n", pid), stdout, "on $PATH")

	code, _, stdout, stderr = run("/usr/bin:/bin")
	assert.Equal(t, 1, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "idkit serve: this command runs in idkit-full, which is not installed beside idkit or on $PATH; install both with 'go install github.com/idkit/idkit/cmd/idkit/...@latest'\n", stderr)
}

// TestIdkitLinksNoServiceClient holds idkit to its promise of a quick
// start: none of the packages that only idkit-full needs, whose package
// initialisation took most of a call's start-up, is linked into idkit.
func TestIdkitLinksNoServiceClient(t *testing.T) {
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the test lists idkit's packages with the go command")
	out, err := exec.Command(goTool, "list", "-deps", "github.com/idkit/idkit/cmd/idkit").CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/idkit/idkit/cmd/idkit/internal/cli", "the list is idkit's")
	for _, dep := range deps {
		for _, heavy := range []string{
			"google.golang.org/grpc", "google.golang.org/protobuf", "connectrpc.com/",
			"go.etcd.io/etcd/", "github.com/prometheus/", "modernc.org/",
			"github.com/jackc/pgx", "github.com/go-sql-driver/", "github.com/redis/",
			"go.uber.org/zap",
			"github.com/idkit/idkit/serve", "github.com/idkit/idkit/fleet",
			"github.com/idkit/idkit/compare", "github.com/idkit/idkit/segment/",
		} {
			assert.False(t, strings.HasPrefix(dep, heavy), "idkit links %s", dep)
		}
	}
}
