package serve

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/idkit/idkit/internal/testkit/leakcheck"
)

// TestMain fails the package's tests if they leave goroutines running.
// Started as a server process of BenchmarkFloor, it runs that server
// instead.
func TestMain(m *testing.M) {
	if ran, code := benchServerMain(); ran {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}
