// Package testwait bounds the waits of tests. A test that waits for an
// event (a goroutine that reaches a fake clock's Sleep, a value sent once
// the clock moved, a child process that prints its first line) waits with
// these functions, so that an event that never comes fails the test with
// a message that names it, instead of hanging until go test's -timeout.
//
// It is for tests only; nothing in the library imports it.
package testwait

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Bound is how long a test waits for an event that takes microseconds to
// milliseconds of work. It is far longer than any such event takes on a
// machine loaded many times over, and far shorter than go test's
// -timeout, so that reaching it means the event does not come.
const Bound = time.Minute

// Recv returns the next value sent on ch, or fails t if none comes within
// Bound. what names the value awaited, for the failure's message.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(Bound)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("no %s within %v%s", what, Bound, Load())
		var zero T
		return zero
	}
}

// Sleepers waits until at least n goroutines sleep on c (a *clock.Fake),
// or fails t after Bound.
func Sleepers(t testing.TB, c interface{ WaitForSleepers(n int) }, n int) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		c.WaitForSleepers(n)
		close(done)
	}()
	Recv(t, done, fmt.Sprintf("sign of %d goroutine(s) asleep on the fake clock", n))
}

// Until polls cond every millisecond until it holds, or fails t after
// Bound. what says what cond checks.
func Until(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(Bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %v%s", what, Bound, Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// Load returns the machine's load as a failure message's ending, such as
// "; load average 25.1 on 2 cores (1 min)", or "" where the system does
// not say (outside Linux): a wait that timed out on a machine loaded far
// beyond its cores tells so.
func Load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	return loadText(string(b), runtime.NumCPU())
}

// loadText is Load for the contents of /proc/loadavg.
func loadText(loadavg string, cores int) string {
	f := strings.Fields(loadavg)
	if len(f) == 0 {
		return ""
	}
	return fmt.Sprintf("; load average %s on %d cores (1 min)", f[0], cores)
}

// WaitersPerCore is how many parallel tests per core Parallel lets run at
// once in a package whose tests mostly wait.
const WaitersPerCore = 3

// Parallel lets a package whose tests spend their time waiting (on etcd's
// leases and TTLs, on child processes, on fsyncs) rather than computing
// run WaitersPerCore of its parallel tests per core at once, instead of go
// test's default of one: its tests then wait side by side, and the
// package takes a fraction of the time for the same work. A -parallel on
// the command line wins. TestMain calls it before m.Run.
func Parallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(WaitersPerCore*runtime.GOMAXPROCS(0))); err != nil {
			panic("testwait: " + err.Error()) // only without the testing package's flags
		}
	}
}
