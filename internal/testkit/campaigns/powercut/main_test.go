package powercut

import (
	"os"
	"testing"

	"github.com/idkit/idkit/internal/testkit/campaigns/powercut/faultfs"
)

// TestMain lets the test binary serve the faulty file systems (faultfs).
func TestMain(m *testing.M) {
	faultfs.Main()
	os.Exit(m.Run())
}
