package powercut

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/idkit/idkit/internal/testkit/campaigns/crashkit"
	"github.com/idkit/idkit/internal/testkit/campaigns/powercut/faultfs"
	"github.com/idkit/idkit/launchlog"
)

// The power-cut campaign runs a child process (this test binary again, in
// TestPowerCutChild) that issues IDs of one scheme through a launch log on
// a faultfs mount, and records each ID outside that mount as soon as the
// generator returns it. The parent kills the child at a random moment,
// cuts the power (tearing the last unsynced write in every second cut),
// and starts it again, with its clock sometimes stepped back, as after a
// reboot. The child's clock runs `speed` times faster than the wall clock.
const speed = 10

// Environment of the child.
const (
	envChild  = "IDKIT_POWERCUT_CHILD"  // scheme
	envLog    = "IDKIT_POWERCUT_LOG"    // launch log path
	envLaunch = "IDKIT_POWERCUT_LAUNCH" // launch id, for decimalid
	envOut    = "IDKIT_POWERCUT_OUT"    // file the IDs are appended to
	envBase   = "IDKIT_POWERCUT_BASE"   // the child clock's time at the anchor, Unix ns
	envAnchor = "IDKIT_POWERCUT_ANCHOR" // wall-clock anchor, Unix ns
)

// schemes are the campaign's generators, each on its own launch log.
var schemes = []string{"traceid", "snowflake", "decimalid", "segment"}

// unsynced is the deliberately wrong store's scheme: DecimalId with
// generator ids kept in a file written without fsync.
const unsynced = "decimalid-unsynced"

// cuts returns how many power cuts a campaign makes per scheme:
// IDKIT_POWER_CUTS, or 200 (20 with -short).
func cuts(t *testing.T) int {
	if s := os.Getenv("IDKIT_POWER_CUTS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "IDKIT_POWER_CUTS")
		return n
	}
	if testing.Short() {
		return 20
	}
	return 200
}

// TestPowerCutChild is not a test: it is the child of the campaigns.
func TestPowerCutChild(t *testing.T) {
	scheme := os.Getenv(envChild)
	if scheme == "" {
		t.Skip("child process of TestPowerCut")
	}
	if err := runChild(scheme); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runChild(scheme string) error {
	base, _ := strconv.ParseInt(os.Getenv(envBase), 10, 64)
	anchor, _ := strconv.ParseInt(os.Getenv(envAnchor), 10, 64)
	launch, _ := strconv.Atoi(os.Getenv(envLaunch))
	path := os.Getenv(envLog)
	var next func() (int64, error)
	var err error
	if scheme == unsynced {
		next, err = crashkit.DecimalNext(unsyncedGenerators{path: path}, launch)
	} else {
		var log *launchlog.Log
		if log, err = launchlog.New(launchlog.Options{Path: path, Timeout: 30 * time.Second}); err != nil {
			return err
		}
		next, err = crashkit.NewNext(scheme, log, launch, crashkit.FastClock(base, anchor, speed))
	}
	if err != nil {
		return err
	}
	return crashkit.Issue(next, os.Getenv(envOut))
}

// unsyncedGenerators is a wrong generator-id store, for the campaign's
// own test: it keeps the next id in a file that it writes without fsync.
type unsyncedGenerators struct{ path string }

func (s unsyncedGenerators) NextGenerator(context.Context, int) (int, error) {
	b, err := os.ReadFile(s.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	next, _ := strconv.Atoi(string(b))
	return next, os.WriteFile(s.path, []byte(strconv.Itoa(next+1)), 0o600)
}

// TestPowerCut runs the campaign for each scheme on its own faulty file
// system, and fails on an ID issued twice, on a launch log that idkit
// cannot open after a cut, and on one that bbolt's check rejects.
func TestPowerCut(t *testing.T) {
	for _, scheme := range schemes {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			f := faultfs.Mount(t)
			logPath := filepath.Join(f.Dir(), "launch.db")
			runs, stats := campaign(t, f, scheme, logPath, cuts(t))
			require.NoError(t, crashkit.Check(scheme, runs))
			checkLog(t, logPath)
			t.Logf("%s: %d power cuts, %d IDs, no duplicate; %v", scheme, len(runs), crashkit.Total(runs), stats)
		})
	}
}

// TestPowerCutCatchesAStoreThatSkipsFsync: the campaign fails a store that
// does not sync what it hands out: after a cut it hands a DecimalId
// generator id out again, and IDs repeat.
func TestPowerCutCatchesAStoreThatSkipsFsync(t *testing.T) {
	t.Parallel()
	f := faultfs.Mount(t)
	runs, _ := campaign(t, f, unsynced, filepath.Join(f.Dir(), "generators"), 10)
	err := crashkit.Check("decimalid", runs)
	require.Error(t, err, "the campaign passed a store that skips fsync")
	assert.Regexp(t, "reused generator id|issued twice", err.Error())
}

// cutStats sums what the cuts of a campaign threw away, and how long the
// child took to issue again after each.
type cutStats struct {
	torn, files, names, kept int
	recover                  []time.Duration // a run's start to its first ID, for the runs that issued
}

// String says what the cuts threw away and how long recovery took.
func (s cutStats) String() string {
	slices.Sort(s.recover)
	var p50, p99, most time.Duration
	if n := len(s.recover); n > 0 {
		p50, p99, most = s.recover[n/2], s.recover[n*99/100], s.recover[n-1]
	}
	return fmt.Sprintf("%d writes torn, %d of them keeping some of their sectors; unsynced changes of %d files and %d file names lost; "+
		"%d starts after a cut issued; from such a start to the first ID: p50 %v, p99 %v, max %v",
		s.torn, s.kept, s.files, s.names, len(s.recover), p50.Round(time.Millisecond), p99.Round(time.Millisecond), most.Round(time.Millisecond))
}

// campaign makes cuts power cuts of a child issuing IDs of scheme, whose
// store is at path on f, and returns what each run issued.
func campaign(t *testing.T, f *faultfs.FS, scheme, path string, cuts int) ([]crashkit.Run, cutStats) {
	r := rand.New(rand.NewPCG(crashkit.Seed(t), 11))
	// The children's launch: NextGenerator takes a launch id that Begin
	// never recorded. This process writes nothing to the log, as no
	// process outlives a real power cut: a writer that did would hold its
	// file's identity, and the file a cut leaves would be refused as a
	// copy of it.
	const launch = 1
	out := t.TempDir() // on the real disk: what callers were given survives every cut
	childNow := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	var runs []crashkit.Run
	var stats cutStats
	for i := range cuts {
		// After a reboot the clock may be a little behind, or a lot.
		var step time.Duration
		if i > 0 && r.IntN(2) == 0 {
			step = time.Duration(r.Int64N(int64(2 * time.Second)))
			if r.IntN(10) == 0 {
				step = 10 * time.Second
			}
		}
		childNow -= int64(step)
		ids := filepath.Join(out, fmt.Sprintf("run-%03d.bin", i))
		anchor := time.Now().UnixNano()
		cmd := exec.Command(os.Args[0], "-test.run=^TestPowerCutChild$")
		cmd.Env = append(os.Environ(),
			envChild+"="+scheme,
			envLog+"="+path,
			envLaunch+"="+strconv.Itoa(launch),
			envOut+"="+ids,
			envBase+"="+strconv.FormatInt(childNow, 10),
			envAnchor+"="+strconv.FormatInt(anchor, 10),
		)
		// Every second cut tears: it lands in the middle of a transaction,
		// after one of the child's next 8 writes, or (when the child
		// writes no more) a second after its first ID. Of the others,
		// one in five lands in the child's start-up, the rest after its
		// first ID.
		tear := i%2 == 0
		child := crashkit.Child{Cmd: cmd, AtStart: i%5 == 4}
		if tear {
			child.Stopped, child.Killed = f.FreezeAfter(1+r.IntN(8)), f.Thaw
		}
		if ready := crashkit.Kill(t, r, child); ready > 0 && i > 0 {
			stats.recover = append(stats.recover, ready)
		}
		childNow += (time.Now().UnixNano() - anchor) * speed
		cut, err := f.PowerCut(tear, r)
		require.NoError(t, err, "cut %d", i)
		if cut.Torn {
			stats.torn++
		}
		if cut.Kept > 0 {
			stats.kept++
		}
		stats.files += cut.Files
		stats.names += cut.Names
		runs = append(runs, crashkit.Run{IDs: crashkit.ReadIDs(t, ids), StepBack: step})
	}
	return runs, stats
}

// checkLog runs bbolt's own consistency check on the launch log.
func checkLog(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	require.NoError(t, err, "bbolt opens the launch log after the last cut")
	defer db.Close()
	require.NoError(t, db.View(func(tx *bbolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	}), "bbolt's check of the launch log")
}
