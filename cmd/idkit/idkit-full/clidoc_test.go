package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
)

// docExample is one "$ idkit ..." line of docs/cli.md and the output the
// page shows after it.
type docExample struct {
	line    int
	block   int // the console block, counted from 1
	command string
	output  []string
}

// cliDocExamples returns the commands of the console blocks of
// docs/cli.md, in order.
func cliDocExamples(t *testing.T) []docExample {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "cli.md"))
	require.NoError(t, err)
	var out []docExample
	in, block := false, 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```console"):
			in = true
			block++
		case strings.HasPrefix(line, "```"):
			in = false
		case in && strings.HasPrefix(line, "$ "):
			cmd, _, _ := strings.Cut(strings.TrimPrefix(line, "$ "), "    #") // a comment after the command
			out = append(out, docExample{line: n, block: block, command: strings.TrimSpace(cmd)})
		case in && len(out) > 0:
			out[len(out)-1].output = append(out[len(out)-1].output, line)
		}
	}
	return out
}

// TestCLIDocExamplesRun runs the examples of docs/cli.md with the idkit
// binary, in order, in one directory (keys.txt and idkit.db carry from one
// to the next): each that shows an error fails with it, and each other
// succeeds and prints as many lines as the page shows, or the same lines
// where they depend neither on the time nor on a key (see stable). A pipe into head or tail is followed; an example that needs a
// server or another program (serve, curl, psql, a shell) is named and
// left out.
func TestCLIDocExamplesRun(t *testing.T) {
	t.Parallel()
	bin := clitest.Build(t, "github.com/idkit/idkit/cmd/idkit/idkit-full")
	dir := t.TempDir()
	ran, serverIn := 0, 0
	for _, ex := range cliDocExamples(t) {
		words, pipe, ok := exampleCommand(ex.command)
		if strings.HasSuffix(ex.command, "&") {
			serverIn = ex.block // what follows in the block talks to that server
		}
		if !ok || serverIn == ex.block {
			t.Logf("docs/cli.md:%d left out: %s", ex.line, ex.command)
			continue
		}
		ran++
		cmd := exec.Command(bin, words[1:]...)
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		lines := nonEmpty(stdout.String() + stderr.String())
		if pipe != "" {
			lines = applyPipe(t, pipe, lines)
		}
		want := ex.output
		if len(want) > 0 && strings.HasPrefix(want[len(want)-1], "exit ") {
			want = want[:len(want)-1]
		}
		showsError := len(want) > 0 && strings.HasPrefix(want[len(want)-1], "idkit ") && strings.Contains(want[len(want)-1], ": ")
		if showsError {
			assert.Error(t, err, "docs/cli.md:%d %s shows an error", ex.line, ex.command)
		} else if !assert.NoError(t, err, "docs/cli.md:%d %s: %s", ex.line, ex.command, stderr.String()) {
			continue
		}
		want = withoutWaits(nonEmpty(strings.Join(want, "\n")))
		lines = withoutWaits(lines)
		assert.Len(t, lines, len(want), "docs/cli.md:%d %s prints %d lines:\n%s", ex.line, ex.command, len(want), strings.Join(lines, "\n"))
		if stable(ex.command) {
			assert.Equal(t, want, lines, "docs/cli.md:%d %s", ex.line, ex.command)
		}
	}
	assert.GreaterOrEqual(t, ran, 15, "examples run")
}

// exampleCommand splits an example into the words of its idkit command and
// a pipe into head or tail, if any; ok is false for an example this test
// cannot run alone.
func exampleCommand(command string) (words []string, pipe string, ok bool) {
	cmd, pipe, _ := strings.Cut(command, "|")
	pipe = strings.TrimSpace(pipe)
	if strings.ContainsAny(cmd, "&;><'\"$") || (pipe != "" && !strings.HasPrefix(pipe, "head ") && !strings.HasPrefix(pipe, "tail ")) {
		return nil, "", false
	}
	words = strings.Fields(cmd)
	if len(words) < 2 || words[0] != "idkit" || words[1] == "serve" || words[1] == "nodes" || slices.Contains(words, "--etcd") {
		return nil, "", false
	}
	return words, pipe, true
}

// applyPipe keeps the lines that "head -N" or "tail -N" would.
func applyPipe(t *testing.T, pipe string, lines []string) []string {
	t.Helper()
	f := strings.Fields(pipe)
	require.Len(t, f, 2, "pipe %q", pipe)
	n, err := strconv.Atoi(strings.TrimPrefix(f[1], "-"))
	require.NoError(t, err, "pipe %q", pipe)
	if f[0] == "head" {
		return lines[:min(n, len(lines))]
	}
	return lines[max(0, len(lines)-n):]
}

// stable reports whether an example prints the same lines every run.
func stable(command string) bool {
	for _, prefix := range []string{"idkit sql", "idkit version", "idkit inspect snowflake --preset", "idkit inspect uuidv", "idkit inspect objectid"} {
		if strings.HasPrefix(command, prefix) {
			return true
		}
	}
	return false
}

// withoutWaits drops the line in which new says how long it waited for a
// fresh second, which it prints only when the wait is long enough.
func withoutWaits(lines []string) []string {
	return slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, "idkit new: waiting ") })
}

func nonEmpty(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
