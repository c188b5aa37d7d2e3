package otelid

import (
	"context"
	"fmt"
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
	log       *slog.Logger
	failing   atomic.Bool // the last value was a fallback
	fallbacks atomic.Uint64
}

// value returns id as a uint64 when err is nil, as it is after a call to
// s.ids that succeeded, or else a fallback value. Callers take id and err
// from s.ids themselves, so that a TraceId costs one call: value is small
// enough to inline, leaving failures and recovery to slow.
func (s *source) value(id traceid.ID, err error) uint64 {
	if err != nil || s.failing.Load() {
		return s.slow(id, err)
	}
	return uint64(id)
}

// slow is value after the generator failed, now or on the call before.
func (s *source) slow(id traceid.ID, err error) uint64 {
	if err == nil {
		s.recovered()
		return uint64(id)
	}
	s.fallbacks.Add(1)
	if s.failing.CompareAndSwap(false, true) && s.log != nil {
		s.log.LogAttrs(context.Background(), slog.LevelWarn, "otelid: TraceId generator failed; issuing random fallback IDs",
			slog.Int("node", s.g.Node()), slog.Any("err", err))
	}
	return rand.Uint64() | fallbackBit
}

func (s *source) recovered() {
	if s.failing.CompareAndSwap(true, false) && s.log != nil {
		s.log.LogAttrs(context.Background(), slog.LevelInfo, "otelid: TraceId generator recovered",
			slog.Int("node", s.g.Node()), slog.Uint64("fallbacks", s.fallbacks.Load()))
	}
}

func (s *source) stats() Stats { return Stats{Fallbacks: s.fallbacks.Load()} }

// newSource returns a source of g's IDs, logging to log if not nil. It
// takes one ID first, under ctx: a new generator waits for the first second
// it may issue in, and the first span or record should not pay for that
// with a fallback. It fails only if ctx ends during that wait; another
// failure of g is left to the fallbacks.
func newSource(ctx context.Context, g *traceid.Generator, log *slog.Logger) (*source, error) {
	s := &source{g: g, ids: g.PerCore(), log: log}
	if _, err := s.ids.NextContext(ctx); err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("otelid: waiting for node %d's first TraceId: %w", g.Node(), err)
	}
	return s, nil
}
