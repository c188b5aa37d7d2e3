package otelid

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"

	"github.com/idkit/idkit/traceid"
)

// Stats counts the events of an IDGenerator or a Handler.
type Stats struct {
	// Fallbacks counts the IDs that are random fallbacks rather than
	// TraceIds, because the traceid.Generator failed.
	Fallbacks uint64
}

// fallbackBit is set in every fallback value and in no TraceId.
const fallbackBit = 1 << 63

// source takes TraceIds from a traceid.Generator, on its per-core path,
// and, when it fails, makes fallback values. It is safe for concurrent
// use.
type source struct {
	g         *traceid.Generator
	ids       *traceid.PerCore
	never     bool // never wait: take IDs with TryNext
	log       *slog.Logger
	failing   atomic.Bool // the last value was a fallback
	fallbacks atomic.Uint64
}

// next returns a TraceId as a uint64, or a fallback value and the error that
// forced it.
func (s *source) next() (uint64, error) {
	var id traceid.ID
	var err error
	if s.never {
		id, err = s.ids.TryNext()
	} else {
		id, err = s.ids.Next()
	}
	if err == nil {
		if s.failing.Load() {
			s.recovered()
		}
		return uint64(id), nil
	}
	s.fallbacks.Add(1)
	if s.failing.CompareAndSwap(false, true) && s.log != nil {
		s.log.LogAttrs(context.Background(), slog.LevelWarn, "otelid: TraceId generator failed; issuing random fallback IDs",
			slog.Int("node", s.g.Node()), slog.Any("err", err))
	}
	return rand.Uint64() | fallbackBit, err
}

func (s *source) recovered() {
	if s.failing.CompareAndSwap(true, false) && s.log != nil {
		s.log.LogAttrs(context.Background(), slog.LevelInfo, "otelid: TraceId generator recovered",
			slog.Int("node", s.g.Node()), slog.Uint64("fallbacks", s.fallbacks.Load()))
	}
}

func (s *source) stats() Stats { return Stats{Fallbacks: s.fallbacks.Load()} }

// newSource returns a source of g's IDs, logging to log if not nil. A
// source that must never wait takes a fallback where the generator would
// wait for the clock or its store.
func newSource(g *traceid.Generator, log *slog.Logger, never bool) *source {
	return &source{g: g, ids: g.PerCore(), log: log, never: never}
}
