package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLookupKeys: the lookups read distinct keys of the load, spread over
// all of it and over its newest 1%, the same ones on every call.
func TestLookupKeys(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, 99, 100, 1_000, 2_000, 200_000, 10_000_000} {
		spread, newest := LookupKeys(n)
		assert.Len(t, spread, min(n, LookupSample), "n=%d", n)
		assert.Len(t, newest, min(max(1, n/100), LookupSample), "n=%d", n)
		for name, idx := range map[string][]int{"spread": spread, "newest": newest} {
			lo := 0
			if name == "newest" {
				lo = NewestStart(n)
			}
			seen := map[int]bool{}
			for _, i := range idx {
				assert.True(t, i >= lo && i < n, "n=%d %s: key %d outside %d..%d", n, name, i, lo, n-1)
				assert.False(t, seen[i], "n=%d %s: key %d twice", n, name, i)
				seen[i] = true
			}
		}
		if n >= 2*LookupSample {
			assert.Less(t, spread[0], n/LookupSample, "n=%d: the first key in the first stride", n)
			assert.GreaterOrEqual(t, spread[len(spread)-1], n-n/LookupSample, "n=%d: the last key in the last stride", n)
		}
		again, againNewest := LookupKeys(n)
		assert.Equal(t, spread, again, "n=%d: the same keys each time", n)
		assert.Equal(t, newest, againNewest)
	}
}
