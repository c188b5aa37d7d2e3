package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
)

// TestInspectStdin reads a column of IDs, with blank lines, spaces and bad
// lines, in text and JSON form, with "-" and with no ID.
func TestInspectStdin(t *testing.T) {
	t.Parallel()
	in := " 4649612847423160321\n\n4649612847423160322  \nabc\n-5\n4649612847423160323\n"
	for _, args := range [][]string{
		{"inspect", "traceid", "-", "--at", "2026-11-22T00:00:00Z"},
		{"inspect", "traceid", "--at", "2026-11-22T00:00:00Z"},
		{"inspect", "traceid", "--at", "2026-11-22T00:00:00Z", "--", "-"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := clitest.RunIn(in, args...)
			assert.Equal(t, 2, code, "an ID did not parse")
			assert.Equal(t, "id=4649612847423160321 time=2026-11-21T22:28:09Z second=16915193 node=7 thread=0 counter=1\n"+
				"id=4649612847423160322 time=2026-11-21T22:28:09Z second=16915193 node=7 thread=0 counter=2\n"+
				"id=4649612847423160323 time=2026-11-21T22:28:09Z second=16915193 node=7 thread=0 counter=3\n", stdout)
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			require.Len(t, lines, 3, stderr)
			assert.Contains(t, lines[0], `idkit inspect: line 4: traceid: invalid syntax: "abc"`)
			assert.Contains(t, lines[1], `idkit inspect: line 5: traceid: not an ID: "-5"`)
			assert.Contains(t, lines[2], "idkit inspect: 2 of 5 IDs on standard input are not traceid IDs (line 4, 5)")
		})
	}

	code, stdout, stderr := clitest.RunIn("2124268655113023489\n2124268655113023490\n", "inspect", "snowflake", "-", "--json")
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.Len(t, lines, 2)
	for i, line := range lines {
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		assert.Equal(t, []string{"2124268655113023489", "2124268655113023490"}[i], got["id"])
		assert.Equal(t, float64(i+1), got["sequence"])
	}

	code, stdout, stderr = clitest.RunIn("", "inspect", "uuid4", "-")
	assert.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout)
}

// TestInspectLineQuotes checks the one-line form of values with spaces and
// empty values.
func TestInspectLineQuotes(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	r := newReport("decimalid", "10000000001").add("note", "").add("ticket", `REL 4"2`).add("by", "a=b").add("launch", 1)
	require.NoError(t, r.writeLine(&b))
	assert.Equal(t, `id=10000000001 note="" ticket="REL 4\"2" by="a=b" launch=1`+"\n", b.String())
}

// TestInspectNegativeAndDashes checks that a negative number is an ID that
// does not parse (exit status 2), not a flag, and that "--" ends flags.
func TestInspectNegativeAndDashes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"inspect", "snowflake", "-1"}, 2, `snowflake: not an ID: "-1"`},
		{[]string{"inspect", "snowflake", "--json", "-1"}, 2, `snowflake: not an ID: "-1"`},
		{[]string{"inspect", "traceid", "--", "-7"}, 2, `traceid: not an ID: "-7"`},
		{[]string{"inspect", "traceid", "--thread-bits", "-1", "1"}, 2, "--thread-bits -1 out of range, want 0 to 16"},
		{[]string{"inspect", "snowflake", "--", "--json"}, 2, `snowflake: invalid syntax: "--json"`},
		{[]string{"inspect", "snowflake", "-x"}, 2, "unknown flag -x"},
		{[]string{"inspect", "snowflake", "1", "-"}, 2, `unexpected argument "-"`},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := clitest.RunIn("", tt.args...)
			assert.Equal(t, tt.code, code, stderr)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, tt.msg)
			clitest.AssertOneLine(t, stderr, tt.args)
		})
	}
	code, stdout, stderr := clitest.RunIn("", "inspect", "snowflake", "--", "2124268655113023489")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "\nsequence    1\n")
}

// TestInspectStdinLogMissing checks that a launch log that cannot be read
// stops a run over standard input with exit status 1.
func TestInspectStdinLogMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, stderr := clitest.RunIn("10000000001\n", "inspect", "decimalid", "--log", dir)
	assert.Equal(t, 1, code, stderr)
	assert.Contains(t, stderr, "idkit inspect: line 1:")
}
