package intid

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFillStep(t *testing.T) {
	t.Parallel()
	for n := range 11 {
		out := make([]int64, n+1)
		FillStep(out[:n], 7, 3)
		for i := range n {
			assert.Equal(t, int64(7+3*i), out[i], "out[%d] of %d", i, n)
		}
		assert.Zero(t, out[n], "written past the slice of %d", n)
	}
}
