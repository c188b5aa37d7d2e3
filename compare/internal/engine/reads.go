package engine

import (
	"bytes"
	"fmt"
	"math/rand/v2"
)

// LookupSample is how many keys the point lookups of a load read, at most:
// spread over the whole table, and taken from its newest 1%.
const LookupSample = 1_000

// NewestShare is the newest part of a table whose reads the reports
// follow: the rows an application reads most, and the index pages that
// must stay in cache for them.
const NewestShare = 100

// LookupKeys returns the indices, in generation order, of the keys the
// point lookups of an n-key load read: at most lookupSample keys spread
// evenly over the load (one at a random place in each of as many equal
// strides), and as many spread over its newest 1%. The generator has a
// fixed seed, so that a run's page counts do not change from run to run.
func LookupKeys(n int) (spread, newest []int) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(lo, hi int) []int {
		m := min(LookupSample, hi-lo)
		out := make([]int, 0, m)
		for j := range m {
			a, b := lo+j*(hi-lo)/m, lo+(j+1)*(hi-lo)/m
			out = append(out, a+rng.IntN(b-a))
		}
		return out
	}
	return pick(0, n), pick(NewestStart(n), n)
}

// NewestStart is the index of the first key of an n-key load's newest 1%.
func NewestStart(n int) int { return n - max(1, n/NewestShare) }

func FmtTwo(v float64) string { return fmt.Sprintf("%.2f", v) }

// LowestNewest returns the index of the least key among the newest 1% of
// l's keys: a range scan through the key that reads the newest rows
// starts there.
func LowestNewest(l Load) int {
	lo := NewestStart(l.Keys.N())
	for i := lo + 1; i < l.Keys.N(); i++ {
		if bytes.Compare(l.Keys.At(i), l.Keys.At(lo)) < 0 {
			lo = i
		}
	}
	return lo
}
