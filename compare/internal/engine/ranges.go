package engine

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// RangeModel is a range-partitioned store, as Spanner, CockroachDB and
// TiDB keep a table: ranges of the key, each split at its median row once
// it holds more than RangeRows rows, the new upper half placed on the next
// of Nodes nodes in turn (a balancer that evens the ranges per node). It
// starts with PreSplit equal ranges of the key's space (1: one range),
// placed in turn. It models where inserts go without a store to run.
type RangeModel struct {
	Nodes     int
	RangeRows int // 0: ranges never split
	PreSplit  int
}

// RangeShares is where a key set's inserts went in a RangeModel.
type RangeShares struct {
	// Busiest is the busiest node's share of all the inserts; PerNode
	// each node's count.
	Busiest float64 `json:"busiest"`
	PerNode []int64 `json:"per_node"`
	// BusiestNow is the busiest node's share of the inserts in a window of
	// an eighth of a range's rows, averaged over the windows of the load's
	// second half: where the writes go at any one time, once the table has
	// grown. Near 1 when they go to one node at a time (a key that grows
	// with time: the last range), near 1/Nodes when they spread, and above
	// it by chance in windows of few rows.
	BusiestNow float64 `json:"busiest_now"`
	// Ranges is how many ranges the table ends with.
	Ranges int `json:"ranges"`
}

// span is one range: its lower bound, node, and its keys (kept only
// while it may split).
type span struct {
	lo   []byte
	node int
	keys [][]byte
	rows int
}

// Run inserts keys in order into the model. bigint says the keys are
// positive int64s (the key space is 0..2^63), else binary keys whose
// space the pre-split divides by their leading 8 bytes.
func (m RangeModel) Run(keys KeySet, bigint bool) RangeShares {
	nodes, pre := max(m.Nodes, 1), max(m.PreSplit, 1)
	space := uint64(1) << 63
	step := space / uint64(pre)
	if !bigint {
		step = ^uint64(0) / uint64(pre)
	}
	spans := make([]*span, pre)
	for i := range spans {
		spans[i] = &span{lo: binary.BigEndian.AppendUint64(nil, uint64(i)*step), node: i % nodes}
	}
	next := pre % nodes
	n := keys.N()
	out := RangeShares{PerNode: make([]int64, nodes)}
	window := max(m.RangeRows/8, 1)
	if m.RangeRows == 0 {
		window = max(n/64, 1)
	}
	cur := make([]int64, nodes)
	var nowSum float64
	var windows int
	for i := range n {
		k := keys.At(i)
		j, _ := slices.BinarySearchFunc(spans, k, func(s *span, k []byte) int {
			if bytes.Compare(s.lo, k) > 0 {
				return 1
			}
			return -1
		})
		s := spans[max(j-1, 0)]
		s.rows++
		out.PerNode[s.node]++
		cur[s.node]++
		if (i+1)%window == 0 {
			if i >= n/2 {
				nowSum += float64(slices.Max(cur)) / float64(window)
				windows++
			}
			clear(cur)
		}
		if m.RangeRows > 0 {
			s.keys = append(s.keys, k)
			if s.rows > m.RangeRows {
				slices.SortFunc(s.keys, bytes.Compare)
				mid := len(s.keys) / 2
				if bytes.Compare(s.keys[mid], s.keys[0]) > 0 {
					upper := &span{lo: s.keys[mid], node: next, keys: slices.Clone(s.keys[mid:])}
					upper.rows = len(upper.keys)
					next = (next + 1) % nodes
					s.keys = s.keys[:mid:mid]
					s.rows = mid
					spans = slices.Insert(spans, max(j-1, 0)+1, upper)
				}
			}
		}
	}
	if n > 0 {
		out.Busiest = float64(slices.Max(out.PerNode)) / float64(n)
	}
	if windows > 0 {
		out.BusiestNow = nowSum / float64(windows)
	} else {
		out.BusiestNow = out.Busiest
	}
	out.Ranges = len(spans)
	return out
}
