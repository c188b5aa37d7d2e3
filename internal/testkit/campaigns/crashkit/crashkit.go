// Package crashkit is what idkit's crash campaigns share: the generators
// under test by scheme name, a child process that issues IDs and records
// each one as it is returned, the kill of that child at a random moment,
// and the check that no ID came back twice. The SIGKILL campaign of
// internal/testkit/campaigns/faults and the power-cut campaign of
// internal/testkit/campaigns/powercut use it.
package crashkit

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

// Schemes are the generators of the SIGKILL campaign and the soak, by
// name: traceid-percore is a traceid.Generator's per-core path
// (traceid.PerCore). NewNext also knows "segment", an allocator of blocks
// reserved in the launch log (launchlog.Log.ReserveBlock).
var Schemes = []string{"traceid", "traceid-percore", "snowflake", "decimalid", "flake128"}

// Monotonic says whether a scheme promises that a node's IDs increase
// across restarts. DecimalId does not: each run takes a new generator id
// and its counter starts again at 1.
func Monotonic(scheme string) bool { return scheme != "decimalid" }

// Ordered says whether one goroutine's IDs strictly increase. The
// per-core path promises less: a goroutine's TraceIds never go back a
// second, and increase within one only while it stays on one processor.
func Ordered(scheme string) bool { return scheme != "traceid-percore" }

// InOrder checks that ids, one goroutine's in the order it got them, keep
// the order that scheme promises.
func InOrder(scheme string, ids []int64) error {
	for i := 1; i < len(ids); i++ {
		if Ordered(scheme) && ids[i] <= ids[i-1] {
			return fmt.Errorf("ID %d after %d: one goroutine's IDs do not increase", ids[i], ids[i-1])
		}
		if !Ordered(scheme) && traceid.ID(ids[i]).Second() < traceid.ID(ids[i-1]).Second() {
			return fmt.Errorf("ID %d after %d: one goroutine's TraceIds go back a second", ids[i], ids[i-1])
		}
	}
	return nil
}

// NewNext returns the Next function of a concurrent-safe generator of
// scheme for node 1, on log (nil for none: the generators keep their
// marks in memory, and segment needs a log) with clock c (nil for the
// system clock). launch is the DecimalId launch.
func NewNext(scheme string, log *launchlog.Log, launch int, c clock.Clock) (func() (int64, error), error) {
	switch scheme {
	case "traceid", "traceid-percore":
		o := traceid.Options{Node: 1, Clock: c}
		if log != nil {
			o.Store = log
		}
		g, err := traceid.New(context.Background(), o)
		if err != nil {
			return nil, err
		}
		next := g.Next
		if scheme == "traceid-percore" {
			next = g.PerCore().Next
		}
		return func() (int64, error) { id, err := next(); return int64(id), err }, nil
	case "snowflake":
		o := snowflake.Options{Node: map[string]int64{"datacenter": 0, "worker": 1}, Clock: c}
		if log != nil {
			o.Store = log
		}
		g, err := snowflake.New(context.Background(), o)
		if err != nil {
			return nil, err
		}
		return func() (int64, error) { id, err := g.Next(); return int64(id), err }, nil
	case "flake128":
		// A 128-bit Flake of one worker is its (millisecond, sequence)
		// pair, which fits an int64 as ms<<16 | sequence and orders alike.
		o := flake128.Options{Worker: 1, Clock: c}
		if log != nil {
			o.Store = log
		}
		g, err := flake128.New(context.Background(), o)
		if err != nil {
			return nil, err
		}
		return func() (int64, error) {
			id, err := g.Next()
			if err != nil {
				return 0, err
			}
			if id.Worker() != 1 || id.Milliseconds() >= 1<<47 {
				return 0, fmt.Errorf("flake128: ID %v of worker %d at %d ms, want worker 1 before 2^47 ms", id, id.Worker(), id.Milliseconds())
			}
			return int64(id.Milliseconds()<<16 | uint64(id.Sequence())), nil
		}, nil
	case "decimalid":
		var source store.Generators = &memSource{}
		if log != nil {
			source = log
		}
		return DecimalNext(source, launch)
	case "segment":
		if log == nil {
			return nil, fmt.Errorf("segment: needs a launch log for its blocks")
		}
		a, err := segment.New(context.Background(), segment.Options{Store: log, Tag: "crash", Step: 100, Clock: c})
		if err != nil {
			return nil, err
		}
		return func() (int64, error) { id, err := a.Next(); return int64(id), err }, nil
	}
	return nil, fmt.Errorf("unknown scheme %q", scheme)
}

// DecimalNext returns the Next function of a DecimalId generator of
// launch whose generator id comes from source.
func DecimalNext(source store.Generators, launch int) (func() (int64, error), error) {
	g, err := decimalid.New(context.Background(), decimalid.Options{Launch: launch, Source: source})
	if err != nil {
		return nil, err
	}
	return func() (int64, error) { id, err := g.Next(); return int64(id), err }, nil
}

// memSource hands out generator ids from memory, for runs without a log.
type memSource struct{ next int }

func (s *memSource) NextGenerator(context.Context, int) (int, error) {
	s.next++
	return s.next - 1, nil
}

// FastClock returns a fake clock that reads base at the wall-clock instant
// anchor and runs speed times faster, moved every 100 µs by a goroutine
// that runs as long as the process: a child's clock.
func FastClock(base, anchor, speed int64) clock.Clock {
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

// Issuing is the line a child prints once it has recorded its first ID.
const Issuing = "issuing"

// Issue is a child's work: it appends every ID that next returns to the
// file out, unbuffered, before it asks for the next one, and prints
// Issuing after the first. It returns next's first error.
func Issue(next func() (int64, error), out string) error {
	file, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
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
		if _, err := file.Write(buf[:]); err != nil {
			return err
		}
		if first {
			fmt.Println(Issuing)
		}
	}
}

// A Child is a child process that runs Issue, to be killed.
type Child struct {
	Cmd *exec.Cmd
	// AtStart kills it at a random moment of its start-up (opening the
	// log, taking a generator id, waiting out a mark); otherwise at a
	// random moment up to 150 ms after it has issued its first ID, which
	// Kill waits for however long a loaded machine takes.
	AtStart bool
	// Stopped, if not nil, is an event that Kill waits for instead, such as
	// the child's disk freezing, and kills the child at that moment; or
	// for one second after its first ID if the event does not come.
	Stopped <-chan struct{}
	// Killed, if not nil, is called right after the SIGKILL, before the
	// wait for the child's end: to answer the calls of a file system that
	// a killed child is blocked in.
	Killed func()
}

// Kill starts the child and kills it with SIGKILL, and returns how long
// the child took from its start to its first ID: 0 if it was killed
// before. It fails the test if the child ends by itself.
func Kill(t testing.TB, r *rand.Rand, c Child) (ready time.Duration) {
	t.Helper()
	cmd := c.Cmd
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	started := time.Now()
	require.NoError(t, cmd.Start())
	issuing, ended := make(chan struct{}), make(chan struct{})
	go func() {
		if line, _ := bufio.NewReader(stdout).ReadString('\n'); line == Issuing+"\n" {
			ready = time.Since(started)
			close(issuing)
		}
		_, _ = io.Copy(io.Discard, stdout)
		close(ended)
	}()
	kill := func() {
		_ = cmd.Process.Kill()
		if c.Killed != nil {
			c.Killed()
		}
		_ = cmd.Wait()
		<-ended
	}
	if !c.AtStart || c.Stopped != nil {
		select {
		case <-issuing:
			if c.Stopped == nil {
				time.Sleep(time.Duration(r.Int64N(int64(150 * time.Millisecond))))
				break
			}
			select {
			case <-c.Stopped:
			case <-time.After(time.Second):
			}
		case <-c.Stopped:
		case <-ended:
			kill()
			t.Fatalf("the child ended before it issued an ID")
		case <-time.After(testwait.Bound):
			kill()
			t.Fatalf("the child issued nothing within %v", testwait.Bound)
		}
	} else {
		time.Sleep(time.Duration(r.Int64N(int64(150 * time.Millisecond))))
	}
	kill()
	if code := cmd.ProcessState.ExitCode(); code != -1 {
		t.Fatalf("the child exited with status %d before it was killed", code)
	}
	return ready // written before issuing closed, and read after ended did
}

// ReadIDs reads the IDs a child appended to path; a child killed before
// its first ID left no file.
func ReadIDs(t testing.TB, path string) []int64 {
	t.Helper()
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

// A Run is what one child issued before it was killed.
type Run struct {
	IDs      []int64
	StepBack time.Duration // the child's clock was stepped back by this before the run
}

// Check returns the first broken promise across runs, or nil: an ID issued
// twice, a run whose IDs break the order the scheme promises (InOrder),
// a run with IDs below one issued before where the scheme promises they
// increase, a DecimalId generator id used twice, or fewer than a third of
// the runs issuing anything, which would make the campaign mean little.
// Each campaign has at least two runs in five issue before it kills them
// (Kill waits for their first ID), whatever the machine's speed; the
// others are killed or cut in their start-up, or at a point of the disk's
// writes, where the share that has issued by then is the machine's.
func Check(scheme string, runs []Run) error {
	var all []int64
	var highest int64
	issued := 0
	generators := map[int]int{} // DecimalId generator id -> run
	for i, r := range runs {
		if len(r.IDs) == 0 {
			continue
		}
		issued++
		if err := InOrder(scheme, r.IDs); err != nil {
			return fmt.Errorf("run %d: %w", i, err)
		}
		if Monotonic(scheme) && slices.Min(r.IDs) <= highest {
			return fmt.Errorf("run %d (clock stepped back %v): ID %d is not above %d, issued before the crash", i, r.StepBack, slices.Min(r.IDs), highest)
		}
		highest = max(highest, slices.Max(r.IDs))
		if scheme == "decimalid" {
			g := decimalid.ID(r.IDs[0]).Generator()
			if prev, dup := generators[g]; dup {
				return fmt.Errorf("run %d reused generator id %d of run %d", i, g, prev)
			}
			generators[g] = i
		}
		all = append(all, r.IDs...)
	}
	if issued < len(runs)/3 {
		return fmt.Errorf("only %d of %d runs issued IDs: too few for the campaign to mean much", issued, len(runs))
	}
	slices.Sort(all)
	for i := 1; i < len(all); i++ {
		if all[i] == all[i-1] {
			return fmt.Errorf("ID %d issued twice", all[i])
		}
	}
	return nil
}

// Total returns the number of IDs the runs issued.
func Total(runs []Run) int {
	n := 0
	for _, r := range runs {
		n += len(r.IDs)
	}
	return n
}

// Seed returns IDKIT_FAULTS_SEED, or a new random seed, and logs how to
// replay it.
func Seed(t testing.TB) uint64 {
	seed := rand.Uint64()
	if s := os.Getenv("IDKIT_FAULTS_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "IDKIT_FAULTS_SEED")
	}
	t.Logf("seed %d (IDKIT_FAULTS_SEED=%[1]d replays it)", seed)
	return seed
}
