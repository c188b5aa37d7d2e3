package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/traceid"
)

// idkit runs the command line args and returns its exit code and output.
func idkit(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{nil, "Commands:"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"new"}, "missing SCHEME"},
		{[]string{"new", "nope"}, `unknown scheme "nope"`},
		{[]string{"new", "traceid"}, "traceid needs --node (0..=65535)"},
		{[]string{"new", "traceid", "--node", "65536"}, "Options.Node = 65536, want 0..=65535"},
		{[]string{"new", "traceid", "--node", "x"}, `invalid value "x" for flag -node`},
		{[]string{"new", "traceid", "--node", "1", "--thread-bits", "17"}, "Options.ThreadBits = 17, want 0..=16"},
		{[]string{"new", "traceid", "--node", "1", "-n", "-1"}, "-n -1 out of range"},
		{[]string{"new", "traceid", "--node", "1", "extra"}, `unexpected argument "extra"`},
		{[]string{"help", "nope"}, `unknown command "nope"`},
	} {
		code, stdout, stderr := idkit(tt.args...)
		assert.Equal(t, 2, code, "%v", tt.args)
		assert.Empty(t, stdout, "%v", tt.args)
		assert.Contains(t, stderr, tt.msg, "%v", tt.args)
		assert.NotContains(t, stderr, "goroutine", "no stack trace")
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	code, stdout, _ := idkit("help")
	assert.Equal(t, 0, code)
	for _, c := range commands {
		assert.Contains(t, stdout, c.Name)
	}
	code, stdout, _ = idkit("help", "new")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "usage: idkit new SCHEME")
	assert.Contains(t, stdout, "Examples:")

	code, stdout, _ = idkit("new", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, stdout, "usage: idkit new SCHEME")
}

func TestNewTraceID(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := idkit("new", "traceid", "--node", "7", "-n", "3")
	assert.Equal(t, 0, code, stderr)
	lines := strings.Fields(stdout)
	require.Len(t, lines, 3)
	var prev traceid.ID
	for _, line := range lines {
		id, err := traceid.Parse(line)
		require.NoError(t, err)
		assert.Equal(t, 7, id.Node())
		assert.Greater(t, id, prev)
		prev = id
	}
}
