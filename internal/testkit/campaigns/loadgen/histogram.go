package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// subBits sets a Histogram's precision: each power of two above 2^subBits
// ns is split into 2^(subBits-1) buckets, so a recorded value is known to
// within 1/64 (1.6%).
const subBits = 7

const (
	half    = 1 << (subBits - 1)
	buckets = (64-subBits+2)*half + half
)

// Histogram counts durations in log-linear buckets, as HdrHistogram does:
// exact below 128 ns, then within 1.6%. The zero value is empty and ready;
// it is not safe for concurrent use (give each goroutine its own and Merge
// them).
type Histogram struct {
	counts   [buckets]uint64
	n        uint64
	min, max time.Duration
	sum      float64
}

// index returns the bucket of v.
func index(v uint64) int {
	if v < 1<<subBits {
		return int(v)
	}
	e := bits.Len64(v) - subBits
	return e*half + int(v>>e)
}

// upper returns the largest value in bucket i.
func upper(i int) uint64 {
	if i < 1<<subBits {
		return uint64(i)
	}
	e := i/half - 1
	m := uint64(i - e*half)
	return (m+1)<<e - 1
}

// Record adds one duration; a negative one counts as 0.
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[index(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	h.max = max(h.max, d)
	h.n++
	h.sum += float64(d)
}

// Merge adds the counts of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count returns the number of durations recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Max returns the largest duration recorded.
func (h *Histogram) Max() time.Duration { return h.max }

// Mean returns the mean duration.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Quantile returns the duration that a fraction q (0 to 1) of the recorded
// ones do not exceed, rounded up to its bucket's top (at most Max): the
// p99 is Quantile(0.99). It returns 0 for an empty histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(upper(i)), h.max)
		}
	}
	return h.max
}
