package faults

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
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

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
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
	next, err := newNext(scheme, log, launch, fastClock(base, anchor))
	if err != nil {
		return err
	}
	out, err := os.OpenFile(os.Getenv(envOut), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	var buf [8]byte
	for first := true; ; first = false {
		id, err := next()
		if err != nil {
			return err
		}
		binary.BigEndian.PutUint64(buf[:], uint64(id))
		if _, err := out.Write(buf[:]); err != nil { // unbuffered: on disk before the next ID
			return err
		}
		if first {
			fmt.Println("issuing")
		}
	}
}

// fastClock returns a fake clock that reads base at the wall-clock instant
// anchor and runs speed times faster, moved every 100 µs by a goroutine.
func fastClock(base, anchor int64) clock.Clock {
	now := func() time.Time {
		return time.Unix(0, base+(time.Now().UnixNano()-anchor)*speed)
	}
	fake := clock.NewFake(now())
	go func() {
		for {
			time.Sleep(100 * time.Microsecond)
			fake.Set(now())
		}
	}()
	return fake
}

func TestCrashRestart(t *testing.T) {
	for _, scheme := range schemes {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			crashCampaign(t, scheme, restarts(t))
		})
	}
}

// run is what one child issued before it was killed.
type run struct {
	ids      []int64
	stepBack time.Duration // the child's clock was stepped back by this before the run
}

func crashCampaign(t *testing.T, scheme string, restarts int) {
	seed := rand.Uint64()
	if s := os.Getenv("IDKIT_FAULTS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (IDKIT_FAULTS_SEED=%[1]d replays it)", seed)
	r := rand.New(rand.NewPCG(seed, 7))
	dir := t.TempDir()
	logPath := filepath.Join(dir, "launch.db")
	log, err := launchlog.New(launchlog.Options{Path: logPath})
	require.NoError(t, err)
	launch, err := log.Begin(context.Background(), launchlog.Info{Ticket: "faults", By: t.Name()})
	require.NoError(t, err)

	// The child's clock starts far from a TraceId wrap and only moves as the
	// runs take wall time, or backwards when a run steps it back.
	childNow := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	var runs []run
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
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		issuing, ended := make(chan struct{}), make(chan struct{})
		go func() {
			if line, _ := bufio.NewReader(stdout).ReadString('\n'); line == "issuing\n" {
				close(issuing)
			}
			_, _ = io.Copy(io.Discard, stdout)
			close(ended)
		}()
		// Every fifth kill lands at a random moment of the start-up (opening
		// the log, taking a generator id, waiting out the mark); the rest at
		// a random moment after the first ID, which the test waits for
		// however long a loaded machine takes to start the child. So four
		// runs in five issue IDs, whatever the machine's speed.
		if i%5 != 4 {
			select {
			case <-issuing:
			case <-ended:
				t.Fatalf("run %d: the child ended before it issued an ID", i)
			case <-time.After(testwait.Bound):
				_ = cmd.Process.Kill()
				t.Fatalf("run %d: the child issued nothing within %v", i, testwait.Bound)
			}
		}
		time.Sleep(time.Duration(r.Int64N(int64(150 * time.Millisecond))))
		killedAt := time.Now().UnixNano()
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != -1 {
			t.Fatalf("run %d: the child exited with status %d before it was killed", i, code)
		}
		kills++
		childNow += (killedAt - anchor) * speed
		runs = append(runs, run{ids: readIDs(t, out), stepBack: step})
	}
	checkRuns(t, scheme, runs)
	total := 0
	for _, r := range runs {
		total += len(r.ids)
	}
	t.Logf("%s: %d kills, %d clock steps back, %d IDs, no duplicate", scheme, kills, steps, total)
}

// readIDs reads the IDs a run appended to path; a run killed before its
// first ID left no file.
func readIDs(t *testing.T, path string) []int64 {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	ids := make([]int64, len(b)/8)
	for i := range ids {
		ids[i] = int64(binary.BigEndian.Uint64(b[8*i:]))
	}
	return ids
}

// checkRuns asserts that no ID was issued twice across all runs, that each
// run's IDs keep the order the scheme promises (see inOrder), and, where
// the scheme promises it, that each run's IDs lie above every ID issued
// before.
func checkRuns(t *testing.T, scheme string, runs []run) {
	t.Helper()
	var all []int64
	var highest int64
	issued := 0
	generators := map[int]int{} // DecimalId generator id -> run
	for i, r := range runs {
		if len(r.ids) == 0 {
			continue
		}
		issued++
		require.NoError(t, inOrder(scheme, r.ids), "run %d", i)
		if monotonic(scheme) {
			require.Greater(t, slices.Min(r.ids), highest, "run %d (clock stepped back %v): an ID below one issued before the crash", i, r.stepBack)
		}
		highest = max(highest, slices.Max(r.ids))
		if scheme == "decimalid" {
			g := decimalid.ID(r.ids[0]).Generator()
			prev, dup := generators[g]
			require.False(t, dup, "run %d reused generator id %d of run %d", i, g, prev)
			generators[g] = i
		}
		all = append(all, r.ids...)
	}
	require.GreaterOrEqual(t, issued, len(runs)/2, "too few runs issued IDs for the campaign to mean much")
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			t.Fatalf("ID %d issued twice", all[i])
		}
	}
	assert.NotEmpty(t, all)
}
