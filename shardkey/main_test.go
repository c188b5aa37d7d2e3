package shardkey_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/idkit/idkit/internal/testkit/leakcheck"
)

// TestMain fails the package's tests if they leave goroutines running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}
