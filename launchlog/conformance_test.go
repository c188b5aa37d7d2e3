package launchlog_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/store"
)

// TestConformance runs the launch log contract that the etcd backend
// (fleet.Log) keeps too, on a file in a temporary directory.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.LaunchLog(t, func(t *testing.T, clk clock.Clock) (store.LaunchLog, func(*testing.T) store.LaunchLog) {
		path := filepath.Join(t.TempDir(), "launch.db")
		open := func(t *testing.T) store.LaunchLog {
			l, err := launchlog.New(launchlog.Options{Path: path, Clock: clk})
			require.NoError(t, err)
			return l
		}
		return open(t), open
	})
}
