package clitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The helpers below run idkit as real processes: the test binary (built
// with the race detector under -race) run again with OffsetEnv, which
// makes it idkit (see Main).

// OffsetEnv returns the environment entry that makes the test binary run
// as idkit on the system clock offset by offset: OffsetEnv(0) is the
// system clock.
func OffsetEnv(offset time.Duration) string { return offsetVar + "=" + offset.String() }

// Command returns the command that runs idkit with args, on the system
// clock.
func Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), OffsetEnv(0))
	return cmd
}

// Call is one finished idkit process.
type Call struct {
	Args           []string
	Code           int
	Stdout, Stderr string
	Took           time.Duration
}

// Exec runs idkit with args to the end, within testwait.Bound.
func Exec(t *testing.T, args ...string) Call {
	t.Helper()
	return ExecCmd(t, func(ctx context.Context) *exec.Cmd { return Command(ctx, args...) }, args)
}

// ExecCmd runs the command that command makes, idkit with args, to the
// end, within testwait.Bound.
func ExecCmd(t *testing.T, command func(context.Context) *exec.Cmd, args []string) Call {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := command(ctx)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err := cmd.Run()
	c := Call{Args: args, Stdout: stdout.String(), Stderr: stderr.String(), Took: time.Since(began)}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && ctx.Err() == nil:
		c.Code = exit.ExitCode()
	default:
		t.Fatalf("idkit %v: %v (stderr: %s)", args, err, c.Stderr)
	}
	return c
}

// OK requires that c succeeded, and returns what it printed.
func OK(t *testing.T, c Call) string {
	t.Helper()
	require.Equal(t, 0, c.Code, "%v: %s", c.Args, c.Stderr)
	return c.Stdout
}

// AssertDisplaced checks that c was refused in one line because path is
// not where its log was last written, saying what to run, and printed no
// ID.
func AssertDisplaced(t *testing.T, c Call, path, what string) {
	t.Helper()
	assert.Equal(t, 1, c.Code, "%s: exit status; stderr: %s", what, c.Stderr)
	assert.Empty(t, c.Stdout, "%s: no ID", what)
	assert.Regexp(t, regexp.QuoteMeta(path)+` (is not the file this log was last written through|was written back in place from an older copy)`, c.Stderr, what)
	assert.Contains(t, c.Stderr, "idkit launch adopt --log "+path, "%s: says what to run", what)
	assert.Equal(t, 1, strings.Count(c.Stderr, "\n"), "%s: one line: %s", what, c.Stderr)
}

// IDSet keeps the IDs that processes printed and the repeats among them.
type IDSet struct {
	By      map[string]string // ID → who printed it first
	Repeats []string          // the first five repeats, each saying who printed it
}

// NewIDSet returns an empty IDSet.
func NewIDSet() *IDSet { return &IDSet{By: make(map[string]string)} }

// Add adds the IDs of out, one per field, that who printed, and returns
// how many there were.
func (s *IDSet) Add(who, out string) int {
	n := 0
	for id := range strings.FieldsSeq(out) {
		n++
		if first, ok := s.By[id]; ok {
			if len(s.Repeats) < 5 {
				s.Repeats = append(s.Repeats, fmt.Sprintf("%s from %s, first from %s", id, who, first))
			}
			continue
		}
		s.By[id] = who
	}
	return n
}

// Build builds the command pkg (an import path, or a path that go build
// takes) into a temporary directory as idkit, and returns the binary's
// path.
func Build(t *testing.T, pkg string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "idkit")
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the test builds %s with the go command", pkg)
	out, err := exec.Command(goTool, "build", "-o", bin, pkg).CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}
