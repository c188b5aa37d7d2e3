package compare

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/engine"
)

// Bounds of a growth run's sizes.
const (
	MinGrowN     = 10_000
	DefaultGrowN = 10_000_000
)

// GrowSizes returns the sizes of a growth run up to maxN: 10,000, 100,000
// and each further power of ten up to maxN, and maxN itself when it is
// not one of them.
func GrowSizes(maxN int) ([]int, error) {
	if maxN < MinGrowN || maxN > MaxN {
		return nil, fmt.Errorf("%w: the largest size of a growth run is %d, want %d..=%d", ErrOptions, maxN, MinGrowN, MaxN)
	}
	var sizes []int
	for n := MinGrowN; n <= maxN; n *= 10 {
		sizes = append(sizes, n)
	}
	if sizes[len(sizes)-1] != maxN {
		sizes = append(sizes, maxN)
	}
	return sizes, nil
}

// GrowContext runs opts at each of sizes (opts.N is not used), the
// smallest first, and returns the runs. Progress, if set, gets a line per
// size with the time the rest needs, estimated from the sizes so far as
// linear in the keys.
func GrowContext(ctx context.Context, opts Options, sizes []int) (*report.Growth, error) {
	if len(sizes) == 0 || !slices.IsSorted(sizes) {
		return nil, fmt.Errorf("%w: growth sizes %v, want one or more in increasing order", ErrOptions, sizes)
	}
	largest := opts
	largest.N = sizes[len(sizes)-1]
	if _, err := largest.withDefaults(); err != nil {
		return nil, err
	}
	if opts.Progress != nil {
		disk, err := EstimateDisk(largest)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(opts.Progress, "grow: %d sizes up to %s keys; the largest run takes %s\n", len(sizes), engine.Thousands(int64(largest.N)), disk)
	}
	g := &report.Growth{Sizes: sizes}
	total := 0
	for _, n := range sizes {
		total += n
	}
	done := 0
	start := time.Now()
	for i, n := range sizes {
		if opts.Progress != nil {
			line := fmt.Sprintf("grow: N = %s (%d of %d)", engine.Thousands(int64(n)), i+1, len(sizes))
			if done > 0 {
				left := time.Duration(float64(time.Since(start)) * float64(total-done) / float64(done))
				line += fmt.Sprintf("; the rest needs about %v at the pace so far", left.Round(time.Second))
			}
			fmt.Fprintln(opts.Progress, line)
		}
		o := opts
		o.N = n
		r, err := RunContext(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("compare: grow: N = %d: %w", n, err)
		}
		g.Reports = append(g.Reports, r)
		done += n
	}
	first := report.RankedNames(g.Reports[0].Verdict)
	for _, r := range g.Reports[1:] {
		g.RankingChanges = g.RankingChanges || !slices.Equal(first, report.RankedNames(r.Verdict))
	}
	return g, nil
}
