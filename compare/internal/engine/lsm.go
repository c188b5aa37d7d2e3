package engine

import (
	"bytes"
	"slices"
)

// SortedKeys returns l's keys in key order.
func SortedKeys(l Load) [][]byte {
	sorted := make([][]byte, l.Keys.N())
	for i := range sorted {
		sorted[i] = l.Keys.At(i)
	}
	slices.SortFunc(sorted, bytes.Compare)
	return sorted
}

// ExpireShare is the share of a table's oldest rows the expiry deletes.
const ExpireShare = 10

// ReclaimedShare is how much of the expired rows' share of the tables
// must be gone before the expiry counts as reclaimed.
const ReclaimedShare = 0.9
