package testenv

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMissingFailsUnderCI runs the package's test binary again with a
// server variable unset, with and without CI=true, and checks that the
// probe test fails in the one and skips in the other.
func TestMissingFailsUnderCI(t *testing.T) {
	if os.Getenv("TESTENV_PROBE") == "1" {
		Server(t, "TESTENV_UNSET_ADDR", "probe server", "127.0.0.1:1")
		t.Error("Server returned although the variable is unset")
		return
	}
	for _, tt := range []struct {
		ci       string
		wantFail bool
		want     string
	}{
		{"true", true, "--- FAIL: TestMissingFailsUnderCI"},
		{"", false, "--- SKIP: TestMissingFailsUnderCI"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMissingFailsUnderCI$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_PROBE=1", "TESTENV_UNSET_ADDR=", "CI="+tt.ci)
		out, err := cmd.CombinedOutput()
		if tt.wantFail {
			require.Error(t, err, "CI=%q: %s", tt.ci, out)
		} else {
			require.NoError(t, err, "CI=%q: %s", tt.ci, out)
		}
		assert.Contains(t, string(out), tt.want, "CI=%q", tt.ci)
		assert.Contains(t, string(out), "set TESTENV_UNSET_ADDR=127.0.0.1:1 to run", "CI=%q: the message says how to set it", tt.ci)
	}
}
