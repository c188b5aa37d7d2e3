package launchlog_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/idkit/idkit/internal/testkit/leakcheck"
	"github.com/idkit/idkit/internal/testkit/suites/segmenttest"
	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
)

// envBlocks names the launch log file of the segment child processes.
const envBlocks = "IDKIT_LAUNCHLOG_BLOCKS"

func TestMain(m *testing.M) {
	testwait.Parallel() // the tests wait on child processes, flocks and fsyncs
	segmenttest.Child(func() (segment.BlockStore, error) {
		return launchlog.New(launchlog.Options{Path: os.Getenv(envBlocks), Timeout: 30 * time.Second})
	})
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

var _ segment.BlockStore = (*launchlog.Log)(nil)

func TestBlockStoreConformance(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "launch.db")
	storetest.BlockStore(t, func(t *testing.T) segment.BlockStore {
		l, err := launchlog.New(launchlog.Options{Path: path, Timeout: 10 * time.Second})
		require.NoError(t, err)
		return l
	})
}

// TestBlockProcesses runs 4 processes issuing 100,000 IDs each from one
// file: no ID twice, each process's strictly increasing. It runs alone,
// not in parallel with the package's other tests, whose timeouts its
// processes would eat into.
func TestBlockProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("4 processes x 100,000 IDs")
	}
	path := filepath.Join(t.TempDir(), "launch.db")
	// Steps of 1000 doubling up to 4000: about 30 blocks per process.
	segmenttest.Processes(t, 4, 100_000, envBlocks+"="+path, segmenttest.EnvMaxStep+"=4000")
}

// TestBlockKillLoop kills processes issuing IDs from one file at random
// moments and restarts them: no ID twice across all runs. It runs alone,
// as TestBlockProcesses does.
func TestBlockKillLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes in a loop")
	}
	path := filepath.Join(t.TempDir(), "launch.db")
	segmenttest.KillLoop(t, 20, envBlocks+"="+path)
	requireBoltCheck(t, path)
}

// TestBlockOutage takes the file away from an allocator, two ways.
func TestBlockOutage(t *testing.T) {
	t.Parallel()
	t.Run("directory gone", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "data")
		require.NoError(t, os.Mkdir(dir, 0o755))
		l, err := launchlog.New(launchlog.Options{Path: filepath.Join(dir, "launch.db")})
		require.NoError(t, err)
		segmenttest.Outage(t, l,
			func() { require.NoError(t, os.Rename(dir, dir+".gone")) },
			func() { require.NoError(t, os.Rename(dir+".gone", dir)) },
			launchlog.ErrOpen, 5*time.Second)
	})
	t.Run("locked", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "launch.db")
		l, err := launchlog.New(launchlog.Options{Path: path, Timeout: 100 * time.Millisecond})
		require.NoError(t, err)
		var holder *bbolt.DB
		segmenttest.Outage(t, l,
			func() {
				// Another handle on the file holds its lock, as another
				// process that hangs would.
				holder, err = bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 5 * time.Second})
				require.NoError(t, err)
			},
			func() { require.NoError(t, holder.Close()) },
			launchlog.ErrLocked, 5*time.Second)
	})
}

// TestBlockAllocatorRestart checks that allocators created one after the
// other on a file continue above each other's blocks, with the gap the
// unused rest of a block leaves.
func TestBlockAllocatorRestart(t *testing.T) {
	t.Parallel()
	l, err := launchlog.New(launchlog.Options{Path: filepath.Join(t.TempDir(), "launch.db")})
	require.NoError(t, err)
	var first segment.ID // the first ID of the run before
	for run := range 3 {
		a, err := segment.New(context.Background(), segment.Options{Store: l, Tag: "order", Step: 100, MinStep: 100, MaxStep: 100})
		require.NoError(t, err)
		id, err := a.Next()
		require.NoError(t, err)
		if run == 0 {
			assert.Equal(t, segment.ID(1), id)
		} else {
			// The rest of a block of 100 is lost at each restart, and a
			// second block if the prefetch got it.
			assert.Contains(t, []segment.ID{first + 100, first + 200}, id, "run %d", run)
		}
		first = id
		for range 20 {
			_, err := a.Next()
			require.NoError(t, err)
		}
		require.NoError(t, a.Close())
	}
}

func requireBoltCheck(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}))
}

// TestBlockNewStoreDown: an allocator whose store cannot reserve its first
// block is not created, and the error says why.
func TestBlockNewStoreDown(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing", "launch.db")
	l, err := launchlog.New(launchlog.Options{Path: missing})
	require.NoError(t, err)
	_, err = segment.New(context.Background(), segment.Options{Store: l, Tag: "order"})
	assert.ErrorIs(t, err, segment.ErrUnavailable)
	assert.ErrorIs(t, err, launchlog.ErrOpen)
	assert.ErrorContains(t, err, `tag "order": *launchlog.Log.ReserveBlock: launchlog: cannot open file`)
}
