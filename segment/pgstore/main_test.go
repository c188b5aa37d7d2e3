package pgstore_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/idkit/idkit/internal/testkit/leakcheck"
	"github.com/idkit/idkit/internal/testkit/suites/segmenttest"
	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/pgstore"
)

// envTable names the table a child process of segmenttest opens.
const envTable = "IDKIT_PGSTORE_TABLE"

func TestMain(m *testing.M) {
	segmenttest.Child(func() (segment.BlockStore, error) {
		return pgstore.Open(context.Background(), os.Getenv(envDSN), pgstore.Options{Table: os.Getenv(envTable)})
	})
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

func TestConformance(t *testing.T) {
	t.Parallel()
	dsn, schema, _ := newSchema(t)
	storetest.BlockStore(t, func(t *testing.T) segment.BlockStore {
		return open(t, dsn, schema+".blocks")
	})
}

// TestProcesses: 4 processes issue 100,000 IDs each from one tag.
// It and TestKillLoop run alone, not in parallel: their processes would
// eat into the timeouts of the package's other tests.
func TestProcesses(t *testing.T) {
	_, schema, _ := newSchema(t)
	segmenttest.Processes(t, 4, 100_000, envTable+"="+schema+".blocks")
}

// TestKillLoop: processes killed with SIGKILL, mostly in the middle of
// reserving, never repeat an ID after a restart.
func TestKillLoop(t *testing.T) {
	_, schema, _ := newSchema(t)
	segmenttest.KillLoop(t, 15, envTable+"="+schema+".blocks")
}

// TestServerRestart: processes issue IDs while PostgreSQL itself
// crashes (an immediate shutdown, which skips the checkpoint) and starts
// again, five times; no ID repeats and every round starts above the
// rounds before. It runs only in the server-restart step of .ci/run.
func TestServerRestart(t *testing.T) {
	segmenttest.RestartServers(t)
	_, schema, pool := newSchema(t)
	versions, err := os.ReadDir("/etc/postgresql")
	require.NoError(t, err, "pg_ctlcluster's clusters")
	require.Len(t, versions, 1, "one PostgreSQL version in /etc/postgresql")
	restart := func(t *testing.T) {
		out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", versions[0].Name(), "main",
			"restart", "-m", "immediate").CombinedOutput()
		require.NoError(t, err, "pg_ctlcluster restart: %s", out)
		pool.Reset() // its connections died with the server
		testwait.Until(t, func() bool { return pool.Ping(context.Background()) == nil }, "PostgreSQL answering after its restart")
	}
	segmenttest.RestartLoop(t, 5, restart, envTable+"="+schema+".blocks")
}

// TestOutage: with the connection to the server cut, an allocator issues
// only what its committed blocks hold, then fails clearly; it resumes
// once the server is reachable.
func TestOutage(t *testing.T) {
	t.Parallel()
	dsn, schema, _ := newSchema(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy := tcpproxy.New(t, "tcp://"+u.Host)
	u.Host = proxy.Addr()
	s := open(t, u.String(), schema+".blocks")
	segmenttest.Outage(t, s, proxy.Cut, proxy.Restore, nil, 10*time.Second)
}
