package idkit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// heldCases are the generators that hold their node in a launch log, each
// built on the log at path with a fake clock, and the unit of time their
// IDs are issued in.
var heldCases = []struct {
	name  string
	unit  time.Duration
	build func(t *testing.T, log *launchlog.Log, fake *clock.Fake) func() (any, error)
}{
	{"traceid", time.Second, func(t *testing.T, log *launchlog.Log, fake *clock.Fake) func() (any, error) {
		g, err := traceid.New(context.Background(), traceid.Options{Node: 3, Store: log, Clock: fake, NoWait: true})
		require.NoError(t, err)
		t.Cleanup(func() { g.Close() })
		return func() (any, error) { return g.Next() }
	}},
	{"traceid/PerCore", time.Second, func(t *testing.T, log *launchlog.Log, fake *clock.Fake) func() (any, error) {
		g, err := traceid.New(context.Background(), traceid.Options{Node: 3, Store: log, Clock: fake, NoWait: true, ThreadBits: 4})
		require.NoError(t, err)
		t.Cleanup(func() { g.Close() })
		pc := g.PerCore()
		return func() (any, error) { return pc.Next() }
	}},
	{"snowflake", time.Millisecond, func(t *testing.T, log *launchlog.Log, fake *clock.Fake) func() (any, error) {
		g, err := snowflake.New(context.Background(), snowflake.Options{Layout: snowflake.Twitter(), Node: map[string]int64{"datacenter": 1, "worker": 2}, Store: log, Clock: fake, ExhaustPolicy: snowflake.ExhaustError})
		require.NoError(t, err)
		t.Cleanup(func() { g.Close() })
		return func() (any, error) { return g.Next() }
	}},
	{"flake128", time.Millisecond, func(t *testing.T, log *launchlog.Log, fake *clock.Fake) func() (any, error) {
		g, err := flake128.New(context.Background(), flake128.Options{Worker: 5, Store: log, Clock: fake, MaxWait: time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { g.Close() })
		return func() (any, error) { return g.Next() }
	}},
}

// TestLostHoldEntersNoNewUnit removes, or replaces, the launch log under a
// generator that holds its node in it, and moves the clock to the next
// unit of time: the first call fails with ErrNodeLost, before any ID of a
// unit that began after the loss, in which a new holder of the node on a
// new log could issue the same IDs. It does not wait for the hold to
// notice on its own.
func TestLostHoldEntersNoNewUnit(t *testing.T) {
	t.Parallel()
	for _, c := range heldCases {
		for _, how := range []string{"removed", "replaced"} {
			t.Run(c.name+"/"+how, func(t *testing.T) {
				t.Parallel()
				path := filepath.Join(t.TempDir(), "idkit.db")
				log, err := launchlog.New(launchlog.Options{Path: path})
				require.NoError(t, err)
				fake := clock.NewFake(closedStart)
				next := c.build(t, log, fake)
				fake.Advance(2 * time.Second)
				_, err = next()
				require.NoError(t, err, "before the loss")

				loseLog(t, path, how)
				fake.Advance(c.unit)
				_, err = next()
				assert.ErrorIs(t, err, idkit.ErrNodeLost, "the first call in a unit begun after the loss")
				assert.ErrorContains(t, err, "the log file was "+how+" under the hold")
				fake.Advance(time.Minute)
				_, err = next()
				assert.ErrorIs(t, err, idkit.ErrNodeLost, "a lost hold stays lost")
			})
		}
	}
}

// TestLostHoldStopsWithinItsUnit removes the launch log under a
// generator, the clock standing still: the generator stops issuing once
// its hold finds the file gone, without a write of its own and without a
// new unit of time.
func TestLostHoldStopsWithinItsUnit(t *testing.T) {
	t.Parallel()
	for _, c := range heldCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "idkit.db")
			log, err := launchlog.New(launchlog.Options{Path: path})
			require.NoError(t, err)
			fake := clock.NewFake(closedStart)
			next := c.build(t, log, fake)
			fake.Advance(2 * time.Second)
			_, err = next()
			require.NoError(t, err, "before the loss")

			loseLog(t, path, "removed")
			testwait.Until(t, func() bool {
				_, err := next() // IDs of the unit, or the unit used up, until the loss is found
				return errors.Is(err, idkit.ErrNodeLost)
			}, "a call failing with ErrNodeLost on the clock that stands still")
			_, err = next()
			assert.ErrorIs(t, err, idkit.ErrNodeLost)
		})
	}
}

// loseLog takes the log at path away from its holder: removes it, or
// renames a copy of it over it, as a restore does.
func loseLog(t *testing.T, path, how string) {
	t.Helper()
	if how == "removed" {
		require.NoError(t, os.Remove(path))
		return
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path+".restore", b, 0o600))
	require.NoError(t, os.Rename(path+".restore", path))
}
