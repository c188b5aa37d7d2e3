package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
)

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"; run 'idkit help'`},
		{[]string{"nwe"}, `unknown command "nwe"; did you mean "new"?`},
		{[]string{"inspct", "traceid", "1"}, `unknown command "inspct"; did you mean "inspect"?`},
		{[]string{"new", "traceid", "--nod", "3"}, "unknown flag --nod; did you mean --node?"},
		{[]string{"new", "traceid", "-thread-bit", "3"}, "unknown flag --thread-bit; did you mean --thread-bits?"},
		{[]string{"compare", "--shemes", "counter"}, "unknown flag --shemes; did you mean --schemes?"},
		{[]string{"help", "nope"}, `unknown command "nope"`},
		{[]string{"help", "new", "extra"}, "too many arguments"},

		{[]string{"new"}, "missing SCHEME (one of traceid, decimalid, snowflake, objectid, flake128, ulid, uuidv4, uuidv7, xid, ksuid)"},
		{[]string{"new", "--node", "1"}, "missing SCHEME"},
		{[]string{"new", "nope"}, `unknown scheme "nope" (want one of traceid, decimalid,`},
		{[]string{"new", "TraceId"}, `unknown scheme "TraceId"`},
		{[]string{"new", "ulid", "-n", "-1"}, "-n -1 out of range, want 0 to 100000000"},
		{[]string{"new", "ulid", "-n", "100000001"}, "-n 100000001 out of range"},
		{[]string{"new", "ulid", "--node", "1"}, "unknown flag --node (want one of -n)"},
		{[]string{"new", "uuid4", "extra"}, `unexpected argument "extra"`},

		{[]string{"new", "traceid"}, "traceid needs --node (0 to 65535)"},
		{[]string{"new", "traceid", "--node", "65536"}, "--node 65536 out of range, want 0 to 65535"},
		{[]string{"new", "traceid", "--node", "-1"}, "--node -1 out of range, want 0 to 65535"},
		{[]string{"new", "traceid", "--node", "x"}, `invalid value "x" for flag --node`},
		{[]string{"new", "traceid", "--node", "1", "--thread-bits", "17"}, "--thread-bits 17 out of range, want 0 to 16"},
		{[]string{"new", "traceid", "--node", "1", "--log", ""}, "--log is empty, want a file path"},

		{[]string{"new", "decimalid", "--launch", "0"}, "--launch 0 out of range, want 1 to 99999"},
		{[]string{"new", "decimalid", "--launch", "100000"}, "--launch 100000 out of range, want 1 to 99999"},
		{[]string{"new", "decimalid", "--log", ""}, "--log is empty"},

		{[]string{"new", "snowflake"}, "snowflake needs --node (0 to 1023) or the preset's fields: --datacenter (0 to 31) --worker (0 to 31)"},
		{[]string{"new", "snowflake", "--node", "1024"}, "--node 1024 out of range for preset twitter, want 0 to 1023"},
		{[]string{"new", "snowflake", "--node", "-1"}, "--node -1 out of range for preset twitter, want 0 to 1023"},
		{[]string{"new", "snowflake", "--worker", "32"}, "--worker 32 out of range for preset twitter, want 0 to 31"},
		{[]string{"new", "snowflake", "--machine", "1"}, "--machine: preset twitter has no field machine (--datacenter (0 to 31) --worker (0 to 31))"},
		{[]string{"new", "snowflake", "--node", "1", "--worker", "1"}, "give either --node or --worker, not both"},
		{[]string{"new", "snowflake", "--preset", "nope", "--node", "1"}, `unknown --preset "nope" (want one of twitter, discord,`},
		{[]string{"new", "snowflake", "--preset", "simpleflake", "--node", "1"}, "--node: preset simpleflake has no node fields"},
		{[]string{"new", "snowflake", "--preset", "sonyflake"}, "snowflake needs --node (0 to 65535) or the preset's fields: --machine (0 to 65535)"},

		{[]string{"inspect"}, "missing SCHEME"},
		{[]string{"inspect", "nope", "1"}, `unknown scheme "nope"`},
		{[]string{"inspect", "traceid"}, "missing the traceid ID to inspect"},
		{[]string{"inspect", "traceid", "1", "2"}, `unexpected argument "2"`},
		{[]string{"inspect", "traceid", "1", "--at", "yesterday"}, `--at "yesterday" is not an RFC 3339 time`},
		{[]string{"inspect", "traceid", "1", "--thread-bits", "17"}, "--thread-bits 17 out of range, want 0 to 16"},
		{[]string{"inspect", "snowflake", "1", "--hex"}, "unknown flag --hex (want one of --at, --json, --preset)"},
		{[]string{"inspect", "snowflake", "1", "--preset", "nope"}, `unknown --preset "nope"`},
		{[]string{"inspect", "decimalid", "10000000001", "--log", ""}, "--log is empty"},

		{[]string{"launch"}, "missing begin, current, list, advance or adopt"},
		{[]string{"launch", "end"}, `unknown launch subcommand "end" (want begin, current, list, advance or adopt)`},
		{[]string{"launch", "adopt", "--log", filepath.Join(dir, "a.db")}, "say what happened to the file: --moved"},
		{[]string{"launch", "adopt", "--log", filepath.Join(dir, "a.db"), "--moved", "--restored"}, "say what happened to the file: --moved"},
		{[]string{"launch", "adopt", "--log", filepath.Join(dir, "a.db"), "--moved", "--launch", "3"}, "--launch, --generator and --block go with --restored"},
		{[]string{"launch", "begin", "--log", filepath.Join(dir, "a.db"), "now"}, `unexpected argument "now"`},
		{[]string{"launch", "begin", "--log", ""}, "--log is empty"},
		{[]string{"launch", "current", "--log", filepath.Join(dir, "a.db"), "x"}, `unexpected argument "x"`},
		{[]string{"launch", "list", "--ticket", "x"}, "unknown flag --ticket"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := clitest.Run(tt.args...)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.msg)
			clitest.AssertOneLine(t, stderr, tt.args)
			if cli.Lookup(tt.args[0]) != nil {
				assert.Contains(t, stderr, "usage: idkit "+tt.args[0], "names the usage")
			}
		})
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	code, stdout, _ := clitest.Run("help")
	assert.Equal(t, 0, code)
	for _, c := range cli.Commands() {
		assert.Contains(t, stdout, "\n  "+c.Name+" ")
	}
	for _, c := range cli.Commands() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := clitest.Run("help", c.Name)
			assert.Equal(t, 0, code, stderr)
			assert.True(t, strings.HasPrefix(stdout, "usage: idkit "+c.Usage+"\n"), stdout)
			assert.Contains(t, stdout, "Examples:")
		})
	}
	for _, args := range [][]string{
		{"new", "-h"},
		{"new", "--help"},
		{"new", "traceid", "-h"},
		{"new", "snowflake", "--preset", "discord", "-help"},
		{"inspect", "-h"},
		{"inspect", "traceid", "1", "-h"},
		{"launch", "-h"},
		{"launch", "begin", "-h"},
		{"launch", "list", "--help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := clitest.Run(args...)
			assert.Equal(t, 0, code, stderr)
			assert.Empty(t, stderr)
			assert.True(t, strings.HasPrefix(stdout, "usage: idkit "+args[0]+" "), stdout)
			assert.Contains(t, stdout, "Examples:")
		})
	}
}

// The entry points every CLI has: -h, --help and help list the commands,
// "COMMAND -h" prints the command's usage for every command, and
// --version and version print the build's version.
func TestEntryPoints(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-h"}, {"--help"}, {"-help"}, {"help"}} {
		code, stdout, stderr := clitest.Run(args...)
		assert.Equal(t, 0, code, "%v", args)
		assert.Empty(t, stderr, "%v", args)
		for _, c := range cli.Commands() {
			assert.Contains(t, stdout, "\n  "+c.Name+" ", "%v lists %s", args, c.Name)
		}
	}
	for _, c := range cli.Commands() {
		for _, h := range []string{"-h", "--help"} {
			code, stdout, stderr := clitest.Run(c.Name, h)
			assert.Equal(t, 0, code, "%s %s: %s", c.Name, h, stderr)
			assert.True(t, strings.HasPrefix(stdout, "usage: idkit "+c.Usage+"\n"), "%s %s: %q", c.Name, h, stdout)
		}
	}
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, stdout, stderr := clitest.Run(args...)
		assert.Equal(t, 0, code, "%v: %s", args, stderr)
		assert.Regexp(t, `^idkit \S+ \(.*`+regexp.QuoteMeta(runtime.Version())+`\)\n$`, stdout, "%v", args)
	}
	code, _, stderr := clitest.Run("version", "extra")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `unexpected argument "extra"`)
}

// TestErrorsSayTheCommandOnce: an error whose message starts with the
// name of the command's package is printed without saying it twice.
func TestErrorsSayTheCommandOnce(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"publicid", "keygen", "--id", "99999", "--out", filepath.Join(t.TempDir(), "keys.txt")},
		{"compare", "--schemes", "nope"},
	} {
		code, _, stderr := clitest.Run(args...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assert.True(t, strings.HasPrefix(stderr, "idkit "+args[0]+": "), stderr)
		assert.NotContains(t, stderr, args[0]+": "+args[0]+": ", "%v", args)
	}
}

// TestTypoSuggestions: a mistyped command name, and a mistyped flag of
// every command that takes flags, get the name that was meant.
func TestTypoSuggestions(t *testing.T) {
	t.Parallel()
	for _, c := range cli.Commands() {
		b := []byte(c.Name)
		b[len(b)-1], b[len(b)-2] = b[len(b)-2], b[len(b)-1]
		code, _, stderr := clitest.Run(string(b))
		assert.Equal(t, 2, code, "%s: %s", b, stderr)
		assert.Contains(t, stderr, fmt.Sprintf("; did you mean %q?", c.Name), "%s", b)
	}
	flagTypos := map[string][]string{
		"new":      {"new", "traceid", "--nod", "3"},
		"inspect":  {"inspect", "traceid", "1", "--jsn"},
		"launch":   {"launch", "begin", "--tiket", "REL-1"},
		"nodes":    {"nodes", "--jsno"},
		"serve":    {"serve", "--nod", "3"},
		"sql":      {"sql", "instagram", "--shrad", "1"},
		"publicid": {"publicid", "decode", "--key-fil", "keys.txt", "1"},
		"compare":  {"compare", "--shemes", "counter"},
	}
	meant := map[string]string{"new": "--node", "inspect": "--json", "launch": "--ticket", "nodes": "--json", "serve": "--node", "sql": "--shard", "publicid": "--key-file", "compare": "--schemes"}
	for _, c := range cli.Commands() {
		args, ok := flagTypos[c.Name]
		if !ok {
			assert.Contains(t, []string{"help", "version"}, c.Name, "a typo of a flag of %s is tried", c.Name)
			continue
		}
		code, stdout, stderr := clitest.Run(args...)
		assert.Equal(t, 2, code, "%q: %s", args, stderr)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "; did you mean "+meant[c.Name]+"?", "%q", args)
		clitest.AssertOneLine(t, stderr, args)
	}
}
