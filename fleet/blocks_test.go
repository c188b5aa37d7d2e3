package fleet_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/leakcheck"
	"github.com/idkit/idkit/internal/testkit/suites/segmenttest"
	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
)

// The etcd endpoint and key prefix of the segment child processes.
const (
	envBlocksEndpoint = "IDKIT_FLEET_BLOCKS_ENDPOINT"
	envBlocksPrefix   = "IDKIT_FLEET_BLOCKS_PREFIX"
)

func TestMain(m *testing.M) {
	testwait.Parallel() // the tests wait on etcd's leases and TTLs, child processes and fsyncs
	segmenttest.Child(func() (segment.BlockStore, error) {
		cli, err := clientv3.New(clientv3.Config{
			Endpoints: []string{os.Getenv(envBlocksEndpoint)}, DialTimeout: 10 * time.Second, Logger: zap.NewNop(),
		})
		if err != nil {
			return nil, err
		}
		return fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: os.Getenv(envBlocksPrefix), Timeout: 20 * time.Second})
	})
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

var _ segment.BlockStore = (*fleet.Log)(nil)

func newBlockLog(t *testing.T, cli *clientv3.Client, prefix string) *fleet.Log {
	t.Helper()
	l, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: prefix})
	require.NoError(t, err)
	return l
}

func TestBlockStoreConformance(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	cli := cluster.Client()
	prefix := fleettest.Prefix(t, cli)
	storetest.BlockStore(t, func(t *testing.T) segment.BlockStore {
		// Each handle has a client of its own, as another host would.
		return newBlockLog(t, fleettest.NewClient(t, cluster.Endpoints()...), prefix)
	})
}

// TestBlockProcesses runs 4 processes issuing 100,000 IDs each from one
// etcd: no ID twice, each process's strictly increasing. It runs alone,
// not in parallel with the package's other tests, whose timeouts its
// processes would eat into.
func TestBlockProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("4 processes x 100,000 IDs")
	}
	cluster := fleettest.Start(t, 1)
	prefix := fleettest.Prefix(t, cluster.Client())
	// Steps of 1000 doubling up to 4000: about 30 blocks per process.
	segmenttest.Processes(t, 4, 100_000, envBlocksEndpoint+"="+cluster.Endpoint(0), envBlocksPrefix+"="+prefix,
		segmenttest.EnvMaxStep+"=4000")
}

// TestBlockKillLoop kills processes issuing IDs from one etcd at random
// moments and restarts them: no ID twice across all runs. It runs alone,
// as TestBlockProcesses does.
func TestBlockKillLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes in a loop")
	}
	cluster := fleettest.Start(t, 1)
	prefix := fleettest.Prefix(t, cluster.Client())
	segmenttest.KillLoop(t, 10, envBlocksEndpoint+"="+cluster.Endpoint(0), envBlocksPrefix+"="+prefix)
}

// TestBlockOutage cuts an allocator's client off from etcd and restores
// it.
func TestBlockOutage(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	proxy := tcpproxy.New(t, cluster.Endpoint(0))
	cli := fleettest.NewClient(t, proxy.Endpoint())
	prefix := fleettest.Prefix(t, cluster.Client())
	// Timeouts generous enough for a busy machine while etcd answers.
	l, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: prefix, Timeout: 10 * time.Second})
	require.NoError(t, err)
	segmenttest.Outage(t, l, proxy.Cut, proxy.Restore, fleet.ErrUnavailable, 10*time.Second)
}

func TestReserveBlockEtcd(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	cli := cluster.Client()
	ctx := context.Background()

	t.Run("key and value", func(t *testing.T) {
		prefix := fleettest.Prefix(t, cli)
		l := newBlockLog(t, cli, prefix)
		for _, want := range []segment.Block{{First: 1, Last: 1000}, {First: 1001, Last: 2000}} {
			b, err := l.ReserveBlock(ctx, "order", 1000)
			require.NoError(t, err)
			assert.Equal(t, want, b)
		}
		resp, err := cli.Get(ctx, prefix+"blocks/order")
		require.NoError(t, err)
		require.Len(t, resp.Kvs, 1)
		assert.Equal(t, "2000", string(resp.Kvs[0].Value))
	})

	t.Run("corrupt", func(t *testing.T) {
		for _, v := range []string{"", "0", "-5", "007", "12x", "9223372036854775808"} {
			prefix := fleettest.Prefix(t, cli)
			_, err := cli.Put(ctx, prefix+"blocks/t", v)
			require.NoError(t, err)
			_, err = newBlockLog(t, cli, prefix).ReserveBlock(ctx, "t", 10)
			assert.ErrorIs(t, err, fleet.ErrCorrupt, "value %q", v)
			assert.ErrorContains(t, err, fmt.Sprintf("%q", v))
		}
	})

	t.Run("exhausted", func(t *testing.T) {
		prefix := fleettest.Prefix(t, cli)
		_, err := cli.Put(ctx, prefix+"blocks/t", strconv.FormatInt(math.MaxInt64-10, 10))
		require.NoError(t, err)
		l := newBlockLog(t, cli, prefix)
		b, err := l.ReserveBlock(ctx, "t", 10)
		require.NoError(t, err)
		assert.Equal(t, segment.Block{First: math.MaxInt64 - 9, Last: math.MaxInt64}, b)
		_, err = l.ReserveBlock(ctx, "t", 1)
		assert.ErrorIs(t, err, segment.ErrExhausted)
		assert.ErrorContains(t, err, `tag "t"`)
	})

	t.Run("invalid", func(t *testing.T) {
		l := newBlockLog(t, cli, fleettest.Prefix(t, cli))
		_, err := l.ReserveBlock(ctx, "a/b", 10)
		for _, want := range []error{segment.ErrInvalid, fleet.ErrInvalid, launchlog.ErrInvalid} {
			assert.ErrorIs(t, err, want)
		}
		assert.ErrorContains(t, err, `tag "a/b"`)
	})
}

// TestBlockNewStoreDown: an allocator whose etcd does not answer is not
// created, and fails within its timeout.
func TestBlockNewStoreDown(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	proxy := tcpproxy.New(t, cluster.Endpoint(0))
	proxy.Cut()
	cli := fleettest.NewClient(t, proxy.Endpoint())
	l, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: fleettest.Prefix(t, cluster.Client()), Timeout: time.Second})
	require.NoError(t, err)
	start := time.Now()
	_, err = segment.New(context.Background(), segment.Options{Store: l, Tag: "order", Timeout: 2 * time.Second})
	assert.Less(t, time.Since(start), 10*time.Second, "fails within its timeouts, generously")
	assert.ErrorIs(t, err, segment.ErrUnavailable)
	assert.ErrorIs(t, err, fleet.ErrUnavailable)
	assert.ErrorContains(t, err, `tag "order": *fleet.Log.ReserveBlock: fleet: etcd unavailable`)
}
