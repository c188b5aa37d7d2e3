package stepclock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A stepped clock's wall time moves by the step, while durations between
// its readings, measured on the monotonic clock, do not.
func TestStep(t *testing.T) {
	var c Clock
	before := c.Now()
	c.Step(-2 * time.Second)
	after := c.Now()
	wall := time.Duration(after.UnixNano() - before.UnixNano())
	assert.Less(t, wall, -time.Second, "the wall time moved back")
	assert.GreaterOrEqual(t, after.Sub(before), time.Duration(0), "the monotonic clock ran on")
	assert.True(t, before.Before(after), "before is before after, on the monotonic clock")
	assert.Contains(t, after.String(), " m=", "a stepped reading keeps its monotonic reading")
	require.NoError(t, checkLayout())
}
