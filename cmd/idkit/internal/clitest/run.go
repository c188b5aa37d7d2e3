package clitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/idkit/idkit/clock"
)

// bound is testwait.Bound, how long a test waits for a command that takes
// far less (clitest's own test checks that the two agree).
const bound = time.Minute

// offsetVar, when set, makes the test binary run as idkit with its
// arguments, on the system clock offset by the duration it holds (see
// Main and OffsetEnv).
const offsetVar = "IDKIT_TEST_CLI_CLOCK_OFFSET"

// Console runs the idkit command line args with stdin as its standard
// input (nil for os.Stdin), stdout, stderr and the clock clk, and returns
// its exit status: a cli.Console with those fields, run.
type Console func(stdin io.Reader, stdout, stderr io.Writer, clk clock.Clock, args []string) int

// console is the Console that Main was given.
var console Console

// Main is the whole TestMain of a package whose tests run idkit. Started
// with OffsetEnv in its environment (as Exec and Command start it), the
// test binary runs as idkit: it runs its arguments on run, on the system
// clock offset by the duration given, and exits with their status.
// Otherwise Main runs the tests, with run as the console of Run, RunIn
// and RunOn, under goleak.VerifyTestMain with leakOptions.
func Main(m *testing.M, run Console, leakOptions ...goleak.Option) {
	console = run
	if off, ok := os.LookupEnv(offsetVar); ok {
		d, err := time.ParseDuration(off)
		if err != nil {
			os.Stderr.WriteString("idkit test: " + offsetVar + ": " + err.Error() + "\n")
			os.Exit(2)
		}
		os.Exit(run(nil, os.Stdout, os.Stderr, clock.Offset(clock.System(), d), os.Args[1:]))
	}
	goleak.VerifyTestMain(m, leakOptions...)
}

func mustConsole() Console {
	if console == nil {
		panic("clitest: the package's TestMain does not call clitest.Main")
	}
	return console
}

// Run runs the command line args on the system clock and returns its exit
// code and output.
func Run(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = mustConsole()(nil, &out, &errOut, clock.System(), args)
	return code, out.String(), errOut.String()
}

// RunIn runs the command line args with stdin as its standard input.
func RunIn(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = mustConsole()(strings.NewReader(stdin), &out, &errOut, clock.System(), args)
	return code, out.String(), errOut.String()
}

// RunOn runs the command line args on the fake clock f, which it moves
// forward by step whenever the command sleeps on it, until the command
// returns. A command that has not returned after testwait.Bound gives exit
// code -1 and a stderr that says so, which every caller's check of the
// code reports.
func RunOn(f *clock.Fake, step time.Duration, args ...string) (code int, stdout, stderr string) {
	run := mustConsole()
	var out, errOut bytes.Buffer
	done := make(chan int)
	go func() { done <- run(nil, &out, &errOut, f, args) }()
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		// Advance by step, but never past the earliest wake-up: a sleeper
		// that has not woken yet would otherwise see the clock overshoot.
		if wake, ok := f.NextWake(); ok {
			if now := f.Now(); now.Before(wake) {
				f.Advance(min(step, wake.Sub(now)))
			}
		}
		select {
		case code = <-done:
			return code, out.String(), errOut.String()
		case <-time.After(50 * time.Microsecond): // poll for the next sleeper
		}
	}
	return -1, "", fmt.Sprintf("idkit %q did not return within %v (fake clock at %v)", args, bound, f.Now())
}

// AssertOneLine checks that stderr is one line that names the problem: no
// stack trace, no usage dump.
func AssertOneLine(t *testing.T, stderr string, args []string) {
	t.Helper()
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line for %q: %q", args, stderr)
	assert.True(t, strings.HasSuffix(stderr, "\n"), "%q", stderr)
	assert.NotContains(t, stderr, "goroutine", "no stack trace")
	assert.NotContains(t, stderr, "panic", "no panic")
}

// InspectJSON runs "idkit inspect" with args and --json and returns the
// object it printed.
func InspectJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, stdout, stderr := Run(append([]string{"inspect"}, append(args, "--json")...)...)
	require.Equal(t, 0, code, "%v: %s", args, stderr)
	require.Equal(t, 1, strings.Count(stdout, "\n"), "one line: %q", stdout)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
	return got
}

// AssertWaitLine checks that stderr is empty or the one line that says
// why a call without a store waits.
func AssertWaitLine(t *testing.T, stderr string) {
	t.Helper()
	if stderr != "" {
		assert.Regexp(t, `^idkit new: waiting [0-9.]+m?s for a fresh (second|tick), so that no earlier call's IDs repeat; --log FILE makes calls instant\n$`, stderr)
	}
}

// NewIDs runs "idkit new" with args and returns the IDs it printed,
// checking that they are distinct.
func NewIDs(t *testing.T, args ...string) []string {
	t.Helper()
	code, stdout, stderr := Run(append([]string{"new"}, args...)...)
	require.Equal(t, 0, code, "%v: %s", args, stderr)
	AssertWaitLine(t, stderr)
	ids := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	seen := make(map[string]bool)
	for _, id := range ids {
		assert.False(t, seen[id], "%s repeated", id)
		seen[id] = true
	}
	return ids
}
