package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRangeModel: a counter's inserts all go to the last range, wherever
// the splits put it, and random keys spread over the nodes; with no
// splits and pre-split ranges, each key lands in its equal range.
func TestRangeModel(t *testing.T) {
	const n = 50_000
	rnd := rand.New(rand.NewPCG(3, 4))
	counter, random := make([]uint64, n), make([]uint64, n)
	for i := range counter {
		counter[i], random[i] = uint64(i+1), rnd.Uint64()>>1
	}
	m := RangeModel{Nodes: 4, RangeRows: 1000, PreSplit: 1}
	c := m.Run(Uint64Keys(counter...), true)
	assert.Greater(t, c.BusiestNow, 0.9, "a counter writes to one node at a time")
	assert.Less(t, c.Busiest, 0.3, "the counter's ranges are placed on every node in turn")
	assert.GreaterOrEqual(t, c.Ranges, n/1000)
	r := m.Run(Uint64Keys(random...), true)
	assert.Less(t, r.BusiestNow, 0.4, "random keys spread")
	assert.Equal(t, int64(n), r.PerNode[0]+r.PerNode[1]+r.PerNode[2]+r.PerNode[3])

	pre := RangeModel{Nodes: 4, PreSplit: 4}.Run(Uint64Keys(1, 1<<61, 1<<62, 3<<61, 1<<63-1), true)
	assert.Equal(t, []int64{1, 1, 1, 2}, pre.PerNode, "the ranges start at 0, 2^61, 2^62 and 3x2^61")
	assert.Equal(t, 4, pre.Ranges)
}

// BenchmarkRangeModel is the model's cost on a default run's key set.
func BenchmarkRangeModel(b *testing.B) {
	rnd := rand.New(rand.NewPCG(5, 6))
	random := make([]uint64, 200_000)
	for i := range random {
		random[i] = rnd.Uint64() >> 1
	}
	keys := Uint64Keys(random...)
	m := RangeModel{Nodes: 4, RangeRows: 200_000 / 64, PreSplit: 1}
	b.ReportAllocs()
	for b.Loop() {
		m.Run(keys, true)
	}
}
