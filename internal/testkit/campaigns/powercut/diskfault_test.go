package powercut

import (
	"context"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/internal/testkit/campaigns/powercut/faultfs"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
	idstore "github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

// diskFaults are the disk's failures: a full disk and an I/O error, on a
// write and on an fsync.
var diskFaults = []faultfs.Fault{
	{On: faultfs.Write, Errno: syscall.ENOSPC},
	{On: faultfs.Write, Errno: syscall.EIO},
	{On: faultfs.Sync, Errno: syscall.ENOSPC},
	{On: faultfs.Sync, Errno: syscall.EIO},
}

// assertDiskError checks that err stops issuing the way a disk fault
// must: of the ErrUnavailable kind, naming the file and the cause.
func assertDiskError(t *testing.T, err error, path string, fault faultfs.Fault) {
	t.Helper()
	require.Error(t, err, "issuing under %v", fault)
	assert.ErrorIs(t, err, idkit.ErrUnavailable)
	assert.ErrorIs(t, err, launchlog.ErrWrite)
	assert.ErrorIs(t, err, fault.Errno)
	assert.Contains(t, err.Error(), path, "the error names the file")
}

// TestDiskFaultStopsTraceId: a TraceId generator whose mark cannot be
// made durable stops issuing with a clear error, issues nothing past the
// last durable mark (a power cut during the fault, then a restart with the
// clock back at the start, repeats no ID), and resumes when the disk heals.
func TestDiskFaultStopsTraceId(t *testing.T) {
	for _, fault := range diskFaults {
		t.Run(fault.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := faultfs.Mount(t)
			path := filepath.Join(f.Dir(), "launch.db")
			log, err := launchlog.New(launchlog.Options{Path: path})
			require.NoError(t, err)
			start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
			c := clock.NewFake(start)
			g, err := traceid.New(ctx, traceid.Options{Node: 1, Store: log, Clock: c})
			require.NoError(t, err)
			id, err := issue(t, g, c)
			require.NoError(t, err)
			ids := []traceid.ID{id}

			f.Inject(fault)
			for i := 0; i < 30 && err == nil; i++ {
				c.Advance(time.Second)
				if id, err = issue(t, g, c); err == nil {
					ids = append(ids, id)
				}
			}
			assertDiskError(t, err, path, fault)
			_, err = issue(t, g, c)
			assertDiskError(t, err, path, fault) // and again: a failed fsync is not retried and trusted

			// The power goes while the disk fails; a new run starts with
			// its clock back at the first ID's second, once the disk heals.
			require.NoError(t, g.Close())
			_, err = f.PowerCut(true, nil)
			require.NoError(t, err)
			f.Heal()
			c2 := clock.NewFake(start)
			g2, err := traceid.New(ctx, traceid.Options{Node: 1, Store: log, Clock: c2})
			require.NoError(t, err)
			defer g2.Close()
			id, err = issue(t, g2, c2)
			require.NoError(t, err, "after the disk healed")
			require.Greater(t, id, slices.Max(ids), "the restart issued at or below an ID issued before the fault")
		})
	}
}

// issue returns g.Next, moving the fake clock c a second whenever Next
// sleeps on it (waiting out a mark or the next second), at most 60 times.
func issue(t *testing.T, g *traceid.Generator, c *clock.Fake) (traceid.ID, error) {
	t.Helper()
	type result struct {
		id  traceid.ID
		err error
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		id, err := g.NextContext(ctx)
		done <- result{id, err}
	}()
	for moves := 0; ; {
		select {
		case r := <-done:
			return r.id, r.err
		case <-time.After(time.Millisecond):
		}
		if c.Sleepers() > 0 {
			if moves == 60 {
				cancel()
				<-done
				t.Fatalf("Next still waits after the clock moved 60 s")
			}
			c.Advance(time.Second)
			moves++
		}
	}
}

// TestDiskFaultStopsSegment: a segment allocator whose next block cannot
// be reserved durably stops with a clear error once its block runs out,
// and resumes above every ID it issued when the disk heals.
func TestDiskFaultStopsSegment(t *testing.T) {
	for _, fault := range diskFaults {
		t.Run(fault.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := faultfs.Mount(t)
			path := filepath.Join(f.Dir(), "launch.db")
			log, err := launchlog.New(launchlog.Options{Path: path})
			require.NoError(t, err)
			a, err := segment.New(ctx, segment.Options{Store: log, Tag: "order", Step: 10, MinStep: 10, MaxStep: 10})
			require.NoError(t, err)
			defer a.Close()
			var ids []segment.ID
			f.Inject(fault)
			for i := 0; i < 100 && err == nil; i++ {
				var id segment.ID
				if id, err = a.Next(); err == nil {
					ids = append(ids, id)
				}
			}
			assertDiskError(t, err, path, fault)
			require.LessOrEqual(t, len(ids), 20, "issued past the blocks reserved before the fault")

			f.Heal()
			var id segment.ID
			for i := 0; i < 10; i++ { // the allocator retries its store in the background
				if id, err = a.Next(); err == nil {
					break
				}
			}
			require.NoError(t, err, "after the disk healed")
			if len(ids) > 0 {
				require.Greater(t, id, slices.Max(ids))
			}
		})
	}
}

// TestDiskFaultStopsDecimalId: a DecimalId generator cannot start when
// its generator id cannot be made durable, and starts with a new one when
// the disk heals.
func TestDiskFaultStopsDecimalId(t *testing.T) {
	for _, fault := range diskFaults {
		t.Run(fault.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := faultfs.Mount(t)
			path := filepath.Join(f.Dir(), "launch.db")
			log, err := launchlog.New(launchlog.Options{Path: path})
			require.NoError(t, err)
			launch, err := log.Begin(ctx, idstore.Info{Ticket: "disk", By: t.Name()})
			require.NoError(t, err)
			f.Inject(fault)
			_, err = decimalid.New(ctx, decimalid.Options{Launch: launch.ID, Source: log})
			assertDiskError(t, err, path, fault)
			f.Heal()
			g, err := decimalid.New(ctx, decimalid.Options{Launch: launch.ID, Source: log})
			require.NoError(t, err)
			id, err := g.Next()
			require.NoError(t, err)
			assert.Equal(t, 0, id.Generator(), "the failed start handed out no generator id")
		})
	}
}
