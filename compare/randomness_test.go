package compare

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReportRandomnessSeparatesSchemes runs the schemes and checks that the
// randomness columns tell them apart: random UUIDs and public IDs pass
// every test, counters and time-based IDs (flakes, snowflakes, TraceIds,
// ObjectIDs) fail, for one writer and for interleaved writers alike.
func TestReportRandomnessSeparatesSchemes(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	want := map[string]bool{
		"uuidv4": true, "publicid-63": true, "publicid-53": true,
		"counter": false, "flake128": false, "snowflake": false, "bwmarrin-snowflake": false, "sonyflake": false,
		"traceid": false, "decimalid": false, "objectid": false, "uuidv7": false, "ulid": false, "xid": false,
	}
	seen := 0
	for _, s := range r.Schemes {
		random, ok := want[s.Name]
		if !ok {
			continue
		}
		seen++
		for _, run := range s.Runs {
			got := run.Randomness
			require.True(t, got.Tested, "%s, %d writers: %+v", s.Name, run.Writers, got)
			assert.Equal(t, random, got.Random, "%s, %d writers: %+v", s.Name, run.Writers, got)
		}
	}
	assert.Equal(t, len(want), seen, "every scheme of the list ran")

	var table, page bytes.Buffer
	require.NoError(t, r.WriteTable(&table))
	require.NoError(t, r.WriteHTML(&page))
	for _, out := range []string{table.String(), page.String()} {
		assert.Contains(t, out, "RANDOMNESS OF THE ID BITS")
		assert.Contains(t, out, "guessable")
	}
	rows := tableRows(t, table.String(), "RANDOMNESS OF THE ID BITS")
	for name, random := range want {
		guess := "yes"
		if random {
			guess = "no"
		}
		assert.Equal(t, guess, rows[name+"/1"], "%s's guessable cell, one writer", name)
	}
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"randomness":{"ids":`)
}

// TestVerdictUnguessable rejects, under need=unguessable, exactly the
// schemes whose keys failed a randomness test.
func TestVerdictUnguessable(t *testing.T) {
	t.Parallel()
	r := smallReport(t)
	v, err := r.Decide(report.Need{Unguessable: true}, engine.Bbolt)
	require.NoError(t, err)
	assert.Equal(t, "unguessable", v.Need)
	reasons := map[string]string{}
	for _, x := range v.Rejected {
		reasons[x.Scheme] = x.Reason
	}
	for _, name := range []string{"flake128", "snowflake", "traceid", "uuidv7"} {
		assert.Contains(t, reasons[name], "IDs can be guessed: ", name)
		assert.Contains(t, reasons[name], "package publicid", name)
	}
	for _, name := range []string{"uuidv4", "publicid-63", "publicid-53"} {
		assert.NotContains(t, reasons[name], "guessed", "%s passed the tests", name)
	}
}

// tableRows returns the last cell of each row of the text table whose
// title starts with title, by scheme/writers.
func tableRows(t *testing.T, text, title string) map[string]string {
	t.Helper()
	_, rest, ok := strings.Cut(text, "\n"+title)
	require.True(t, ok, "table %q", title)
	rows := map[string]string{}
	lines := strings.Split(rest, "\n")
	for _, line := range lines[2:] {
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(line, "  ") && !strings.HasPrefix(strings.TrimSpace(line), f[0]) {
			break
		}
		if _, err := strconv.Atoi(f[1]); err != nil {
			break
		}
		rows[f[0]+"/"+f[1]] = f[len(f)-1]
	}
	return rows
}
