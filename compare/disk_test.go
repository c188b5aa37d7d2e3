package compare

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/idkit/idkit/internal/testkit/testenv"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// measuredDisk reads from a report what its loads wrote and the largest
// file one held: bbolt's pages written and files, and SQLite's WAL frames
// (each written to the WAL and again by the checkpoint) and files.
func measuredDisk(r *report.Report) Disk {
	var d Disk
	page := int64(r.Config.PageSize)
	for _, s := range r.Schemes {
		for _, run := range s.Runs {
			for _, l := range run.Loads {
				d.Written += l.PagesWritten * page
				d.Peak = max(d.Peak, l.FileBytes)
			}
			for _, e := range run.Engines {
				if e.Engine != engine.SQLite {
					continue
				}
				d.Written += 2 * int64(e.Metrics["wal_frames"]) * page
				d.Peak = max(d.Peak, int64(e.Metrics["file_bytes"]))
			}
		}
	}
	return d
}

func TestEstimateDiskMatchesARun(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	est, err := EstimateDisk(Options{N: smallN, Writers: smallWriters, BatchSize: 500})
	require.NoError(t, err)
	got := measuredDisk(r)
	t.Logf("estimated %v; measured %v", est, got)
	assert.GreaterOrEqual(t, est.Peak, got.Peak, "the estimate of the largest file is below the largest file measured")
	assert.LessOrEqual(t, est.Peak, 3*got.Peak, "the estimate of the largest file is over 3 times the largest measured")
	assert.InDelta(t, 1, float64(est.Written)/float64(got.Written), 0.5, "bytes written: estimated %d, measured %d", est.Written, got.Written)
}

// TestRunRefusesAFullDisk runs compare in a 2 MiB tmpfs: it must refuse
// before the first load, say what it needs and where, and leave nothing.
func TestRunRefusesAFullDisk(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if testenv.CI() {
			t.Fatal("mounting a small tmpfs needs root, and CI runs as root")
		}
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	require.NoError(t, unix.Mount("tmpfs", dir, "tmpfs", 0, "size=2m"))
	t.Cleanup(func() { assert.NoError(t, unix.Unmount(dir, 0)) })
	work := filepath.Join(dir, "work")
	require.NoError(t, os.Mkdir(work, 0o700))

	_, err := RunContext(context.Background(), Options{N: 200_000, Schemes: mustSelect(t, "counter,uuidv4"), Dir: work})
	require.ErrorIs(t, err, ErrNoSpace)
	assert.Contains(t, err.Error(), work, "the error names the directory")
	assert.Regexp(t, `needs \d+ MiB at once .* has \d+ (MiB|KiB) free`, err.Error())
	left, err := os.ReadDir(work)
	require.NoError(t, err)
	assert.Empty(t, left, "files left in the directory")
}

func mustSelect(t *testing.T, list string) []scheme.Scheme {
	t.Helper()
	s, err := scheme.Select(list)
	require.NoError(t, err)
	return s
}
