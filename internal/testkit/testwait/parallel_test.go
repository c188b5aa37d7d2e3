package testwait

import (
	"flag"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	Parallel()
	os.Exit(m.Run())
}

// envWantParallel, in the child of TestParallel, is the -parallel the
// child was given on its command line.
const envWantParallel = "TESTWAIT_WANT_PARALLEL"

// TestParallel: Parallel raises -parallel to WaitersPerCore per core, and
// leaves a -parallel given on the command line as it is.
func TestParallel(t *testing.T) {
	got := flag.Lookup("test.parallel").Value.String()
	if want := os.Getenv(envWantParallel); want != "" {
		assert.Equal(t, want, got, "the command line's -parallel")
		return
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		assert.Equal(t, strconv.Itoa(WaitersPerCore*runtime.GOMAXPROCS(0)), got)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestParallel$", "-test.parallel=1", "-test.v")
	cmd.Env = append(os.Environ(), envWantParallel+"=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS: TestParallel")
}
