package clitest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/idkit/idkit/internal/testkit/testwait"
)

// TestBoundIsTestwaits: the helpers wait as long as every other wait of
// the tests.
func TestBoundIsTestwaits(t *testing.T) {
	assert.Equal(t, testwait.Bound, bound)
}

// TestIDSet counts the IDs added and keeps the first five repeats.
func TestIDSet(t *testing.T) {
	s := NewIDSet()
	assert.Equal(t, 3, s.Add("a", "1\n2\n3\n"))
	assert.Equal(t, 2, s.Add("b", " 3 4 "))
	assert.Equal(t, []string{"3 from b, first from a"}, s.Repeats)
	assert.Len(t, s.By, 4)
	for range 3 {
		s.Add("c", "1 2")
	}
	assert.Len(t, s.Repeats, 5)
}

// TestOffsetEnv: the zero offset is the system clock, as the processes
// have always been started with it.
func TestOffsetEnv(t *testing.T) {
	assert.Equal(t, "IDKIT_TEST_CLI_CLOCK_OFFSET=0s", OffsetEnv(0))
	assert.Equal(t, "IDKIT_TEST_CLI_CLOCK_OFFSET=-3s", OffsetEnv(-3*time.Second))
}
