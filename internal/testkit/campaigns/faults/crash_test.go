package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/campaigns/crashkit"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/store"
)

// The crash campaign runs a child process (this test binary again, in
// TestCrashChild) that issues IDs for one node through the real launch log
// and appends each to a file as soon as Next returns. The parent kills it
// with SIGKILL at a random moment and starts it again, often with the
// child's clock stepped back by 0-2 s and sometimes by 10 s. The child's
// clock runs `speed` times faster than the wall clock (a fake clock driven
// from the wall clock), so that a campaign of many restarts of a
// one-second-tick scheme fits in CI.
const speed = 10

// Environment of the child.
const (
	envChild  = "IDKIT_FAULTS_CHILD"  // scheme
	envLog    = "IDKIT_FAULTS_LOG"    // launch log path
	envLaunch = "IDKIT_FAULTS_LAUNCH" // launch id, for decimalid
	envOut    = "IDKIT_FAULTS_OUT"    // file the IDs are appended to
	envBase   = "IDKIT_FAULTS_BASE"   // the child clock's time at the anchor, Unix ns
	envAnchor = "IDKIT_FAULTS_ANCHOR" // wall-clock anchor, Unix ns
)

// restarts returns how many restarts a campaign runs per scheme:
// IDKIT_CRASH_RESTARTS, or 100 (10 with -short).
func restarts(t *testing.T) int {
	if s := os.Getenv("IDKIT_CRASH_RESTARTS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "IDKIT_CRASH_RESTARTS")
		return n
	}
	if testing.Short() {
		return 10
	}
	return 100
}

// TestCrashChild is not a test: it is the child of TestCrashRestart.
func TestCrashChild(t *testing.T) {
	scheme := os.Getenv(envChild)
	if scheme == "" {
		t.Skip("child process of TestCrashRestart")
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
	log, err := launchlog.New(launchlog.Options{Path: os.Getenv(envLog), Timeout: 30 * time.Second})
	if err != nil {
		return err
	}
	next, err := crashkit.NewNext(scheme, log, launch, crashkit.FastClock(base, anchor, speed))
	if err != nil {
		return err
	}
	return crashkit.Issue(next, os.Getenv(envOut))
}

func TestCrashRestart(t *testing.T) {
	for _, scheme := range crashkit.Schemes {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			crashCampaign(t, scheme, restarts(t))
		})
	}
}

func crashCampaign(t *testing.T, scheme string, restarts int) {
	r := rand.New(rand.NewPCG(crashkit.Seed(t), 7))
	dir := t.TempDir()
	logPath := filepath.Join(dir, "launch.db")
	log, err := launchlog.New(launchlog.Options{Path: logPath})
	require.NoError(t, err)
	launch, err := log.Begin(context.Background(), store.Info{Ticket: "faults", By: t.Name()})
	require.NoError(t, err)

	// The child's clock starts far from a TraceId wrap and only moves as the
	// runs take wall time, or backwards when a run steps it back.
	childNow := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	var runs []crashkit.Run
	steps, kills := 0, 0
	for i := range restarts {
		var step time.Duration
		if i > 0 && r.IntN(2) == 0 {
			step = time.Duration(r.Int64N(int64(2 * time.Second)))
			if r.IntN(10) == 0 {
				step = 10 * time.Second
			}
			steps++
		}
		childNow -= int64(step)
		out := filepath.Join(dir, fmt.Sprintf("run-%03d.bin", i))
		anchor := time.Now().UnixNano()
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
		cmd.Env = append(os.Environ(),
			envChild+"="+scheme,
			envLog+"="+logPath,
			envLaunch+"="+strconv.Itoa(launch.ID),
			envOut+"="+out,
			envBase+"="+strconv.FormatInt(childNow, 10),
			envAnchor+"="+strconv.FormatInt(anchor, 10),
		)
		// Every fifth kill lands at a random moment of the start-up (opening
		// the log, taking a generator id, waiting out the mark); the rest at
		// a random moment after the first ID. So four runs in five issue
		// IDs, whatever the machine's speed.
		crashkit.Kill(t, r, crashkit.Child{Cmd: cmd, AtStart: i%5 == 4})
		killedAt := time.Now().UnixNano()
		kills++
		childNow += (killedAt - anchor) * speed
		runs = append(runs, crashkit.Run{IDs: crashkit.ReadIDs(t, out), StepBack: step})
	}
	require.NoError(t, crashkit.Check(scheme, runs))
	t.Logf("%s: %d kills, %d clock steps back, %d IDs, no duplicate", scheme, kills, steps, crashkit.Total(runs))
}
