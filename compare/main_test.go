package compare

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/idkit/idkit/internal/testkit/leakcheck"
)

// TestMain fails the package's tests if they leave goroutines running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// skipUnderRace skips a test that checks the figures of one writer's
// loads when the race detector is on: it finds nothing in one goroutine's
// load, and slows these tests so much that the package outlasts go test's
// timeout on a busy machine, and that the server's own work in the
// meantime moves one run's figures against another's (TestLikeAcceptance's
// three identical runs once ranked traceid and uuidv7 apart under it).
// .ci/run and .ci/stress run them without it; the tests with
// several writers (TestPebbleEveryScheme and the like) run under it, on
// fewer schemes (everySchemeUnlessRace).
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("one writer's figures, slow under the race detector: go test without -race runs this test")
	}
}

// everySchemeUnlessRace returns "all" (every scheme), or under the race
// detector three: a test that loads every scheme through an engine with
// several writers races the same code whatever the keys are, and under
// the detector every scheme took MyRocks over a minute. go test without
// -race loads them all.
func everySchemeUnlessRace() string {
	if raceEnabled {
		return "counter,traceid,uuidv4"
	}
	return "all"
}
