package scheme

import (
	"context"
	"fmt"
	"time"

	"github.com/idkit/idkit/flake128"
)

func init() { register(flake128Scheme) }

// flake128Scheme is Boundary's 128-bit Flake, one worker per writer (a
// host's MAC address in production; 1, 2, ... here, so that writers on
// one host differ).
var flake128Scheme = Scheme{
	Name:    "flake128",
	Kind:    Ours,
	Module:  "github.com/idkit/idkit/flake128",
	Summary: "Boundary's 128-bit Flake: ms (64) | worker (48) | sequence (16), one worker per writer",
	KeyLen:  len(flake128.ID{}),
	New: func(writers int) ([]Generator, error) {
		return Each(writers, func(k int) (Generator, error) {
			g, err := flake128.New(context.Background(), flake128.Options{Worker: uint64(k) + 1})
			if err != nil {
				return nil, fmt.Errorf("compare: flake128 writer %d: %w", k, err)
			}
			return ours[flake128.ID]{g, func(dst []byte, id flake128.ID) []byte { return append(dst, id[:]...) }}, nil
		})
	},
	Design: func() Design {
		n := len(flake128.ID{}) * 8
		return FromMaxBits(Design{
			Bits:      n,
			MaxBits:   n,
			Ordered:   true,
			TimeUnit:  time.Millisecond,
			TimeBits:  flake128.TimeLen * 8,
			Epoch:     time.Unix(0, 0).UTC(),
			NodeBits:  flake128.WorkerLen * 8,
			PerSecond: (flake128.MaxSequence + 1) * 1000,
			Note:      "64-bit milliseconds last 584 million years; a millisecond's 65,536 sequence values run out into the next, at most MaxLead ahead of the clock",
		})
	},
}
