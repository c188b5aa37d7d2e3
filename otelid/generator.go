package otelid

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/idkit/idkit/traceid"
)

// Options configure an IDGenerator.
type Options struct {
	// Logger, when set, receives one record when the traceid.Generator
	// starts failing and the IDGenerator falls back to random IDs, and one
	// when TraceIds resume. Nil means no records; Stats counts fallbacks
	// either way.
	Logger *slog.Logger
}

// IDGenerator is an sdktrace.IDGenerator whose span IDs are TraceIds and
// whose trace IDs are a TraceId followed by 8 random bytes (see the package
// documentation). It is safe for concurrent use.
type IDGenerator struct {
	src *source
}

var _ sdktrace.IDGenerator = (*IDGenerator)(nil)

// NewIDGenerator returns an IDGenerator that takes TraceIds from g, which
// may run on a fixed node or a claimed one. g must not be nil. It waits,
// under ctx, for g's first TraceId (a new generator's first second), so
// that the first span gets one.
func NewIDGenerator(ctx context.Context, g *traceid.Generator, o Options) (*IDGenerator, error) {
	if g == nil {
		return nil, fmt.Errorf("%w: NewIDGenerator needs a *traceid.Generator, got nil", ErrNil)
	}
	src, err := newSource(ctx, g, o.Logger)
	if err != nil {
		return nil, err
	}
	return &IDGenerator{src: src}, nil
}

// NewIDs returns the IDs of a new root span: a trace ID whose high 8 bytes
// are a new TraceId and whose low 8 bytes are random, and a span ID equal to
// that TraceId. A wait for the next second ends with ctx, the span's
// context, and the span then gets a fallback.
func (x *IDGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	v := x.src.value(x.src.ids.NextContext(ctx))
	var tid trace.TraceID
	var sid trace.SpanID
	binary.BigEndian.PutUint64(tid[:8], v)
	binary.BigEndian.PutUint64(tid[8:], rand.Uint64())
	binary.BigEndian.PutUint64(sid[:], v)
	return tid, sid
}

// NewSpanID returns a new TraceId as a span ID, whatever the trace; a
// wait ends with ctx, as in NewIDs.
func (x *IDGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	v := x.src.value(x.src.ids.NextContext(ctx))
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], v)
	return sid
}

// Stats returns the counts of events since x was created.
func (x *IDGenerator) Stats() Stats { return x.src.stats() }

// FromSpanID returns the TraceId in span ID sid, and false for an ID that
// holds none: zero, or a fallback.
func FromSpanID(sid trace.SpanID) (traceid.ID, bool) {
	v := binary.BigEndian.Uint64(sid[:])
	if v == 0 || v&fallbackBit != 0 {
		return 0, false
	}
	return traceid.ID(v), true
}

// FromTraceID returns the TraceId in the high half of trace ID tid, and
// false for an ID whose high half holds none.
func FromTraceID(tid trace.TraceID) (traceid.ID, bool) {
	return FromSpanID(trace.SpanID(tid[:8]))
}
