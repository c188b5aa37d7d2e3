package otelid

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"
	"unsafe"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/idkit/idkit/internal/testkit/cores"
	"github.com/idkit/idkit/traceid"
)

// The benchmarks use the real clock. Run them with a fixed count below the
// per-second cap of 4,194,303 TraceIds a node, e.g. -benchtime=1000000x,
// so that they measure the cost of an ID rather than the wait for the next
// second.
//
// Three ID generators run side by side:
//   - otelid: an IDGenerator on a traceid.Generator;
//   - sdk: the SDK's own default generator, taken from a TracerProvider
//     made without WithIDGenerator (math/rand/v2's lock-free top-level
//     functions in SDK v1.47);
//   - mutex: a sync.Mutex around one random source, the design of the
//     SDK's default until 2025 that opentelemetry-go PR 3134 reported as
//     the top contention point, rebuilt here for comparison.

func newBenchIDGenerator(b *testing.B) *IDGenerator {
	b.Helper()
	g, err := traceid.New(context.Background(), traceid.Options{Node: 1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := g.Next(); err != nil { // wait out the first, fresh second
		b.Fatal(err)
	}
	x, err := NewIDGenerator(context.Background(), g, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return x
}

// sdkDefault returns the IDGenerator of a TracerProvider made without
// WithIDGenerator: the SDK's default, which it does not export.
func sdkDefault(b *testing.B) sdktrace.IDGenerator {
	b.Helper()
	tp := sdktrace.NewTracerProvider()
	f := reflect.ValueOf(tp).Elem().FieldByName("idGenerator")
	if !f.IsValid() {
		b.Fatal("sdktrace.TracerProvider has no field idGenerator")
	}
	g, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(sdktrace.IDGenerator)
	if !ok || g == nil {
		b.Fatalf("sdktrace.TracerProvider.idGenerator is %v, not an IDGenerator", f.Type())
	}
	return g
}

// mutexIDGenerator draws random IDs from one source behind a mutex.
type mutexIDGenerator struct {
	mu  sync.Mutex
	src *rand.ChaCha8
}

func newMutexIDGenerator() *mutexIDGenerator {
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], rand.Uint64())
	return &mutexIDGenerator{src: rand.NewChaCha8(seed)}
}

func (m *mutexIDGenerator) NewIDs(context.Context) (trace.TraceID, trace.SpanID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var tid trace.TraceID
	var sid trace.SpanID
	for !tid.IsValid() {
		_, _ = m.src.Read(tid[:])
	}
	for !sid.IsValid() {
		_, _ = m.src.Read(sid[:])
	}
	return tid, sid
}

func (m *mutexIDGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID {
	m.mu.Lock()
	defer m.mu.Unlock()
	var sid trace.SpanID
	for !sid.IsValid() {
		_, _ = m.src.Read(sid[:])
	}
	return sid
}

var (
	sinkSpan  trace.SpanID
	sinkTrace trace.TraceID
)

func generators(b *testing.B) []struct {
	name string
	new  func(*testing.B) sdktrace.IDGenerator
} {
	return []struct {
		name string
		new  func(*testing.B) sdktrace.IDGenerator
	}{
		{"otelid", func(b *testing.B) sdktrace.IDGenerator { return newBenchIDGenerator(b) }},
		{"sdk", sdkDefault},
		{"mutex", func(*testing.B) sdktrace.IDGenerator { return newMutexIDGenerator() }},
	}
}

// BenchmarkCores runs GOMAXPROCS goroutines that take b.N span IDs (and
// root IDs) between them, each its share, with no shared counter of the
// benchmark's own: b.RunParallel's pb.Next adds to one on every call under
// a fixed -benchtime count, which measures the framework as much as the
// generators. ns/op is the wall time per ID. Run it at -cpu 1,2,8 with a
// fixed count below the per-second cap, e.g. -benchtime=2000000x.
func BenchmarkCores(b *testing.B) {
	ctx := context.Background()
	for _, gen := range generators(b) {
		for _, call := range []string{"NewSpanID", "NewIDs"} {
			b.Run("call="+call+"/gen="+gen.name, func(b *testing.B) {
				g := gen.new(b)
				b.ReportAllocs()
				b.ResetTimer()
				cores.Split(b, func(n int) {
					var sid trace.SpanID
					var tid trace.TraceID
					for range n {
						if call == "NewSpanID" {
							sid = g.NewSpanID(ctx, sinkTrace)
						} else {
							tid, sid = g.NewIDs(ctx)
						}
					}
					sinkSpan, sinkTrace = sid, tid
				})
			})
		}
	}
}

func BenchmarkNewSpanID(b *testing.B) {
	ctx := context.Background()
	for _, gen := range generators(b) {
		b.Run("gen="+gen.name+"/mode=serial", func(b *testing.B) {
			g := gen.new(b)
			b.ReportAllocs()
			for b.Loop() {
				sinkSpan = g.NewSpanID(ctx, sinkTrace)
			}
		})
		b.Run("gen="+gen.name+"/mode=parallel", func(b *testing.B) {
			g := gen.new(b)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var sid trace.SpanID
				for pb.Next() {
					sid = g.NewSpanID(ctx, sinkTrace)
				}
				sinkSpan = sid
			})
		})
	}
}

func BenchmarkNewIDs(b *testing.B) {
	ctx := context.Background()
	for _, gen := range generators(b) {
		b.Run("gen="+gen.name+"/mode=serial", func(b *testing.B) {
			g := gen.new(b)
			b.ReportAllocs()
			for b.Loop() {
				sinkTrace, sinkSpan = g.NewIDs(ctx)
			}
		})
		b.Run("gen="+gen.name+"/mode=parallel", func(b *testing.B) {
			g := gen.new(b)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				var tid trace.TraceID
				for pb.Next() {
					tid, _ = g.NewIDs(ctx)
				}
				sinkTrace = tid
			})
		})
	}
}

// BenchmarkStartSpan measures the whole of starting and ending a child span
// (one span ID) through a TracerProvider with no span processor.
func BenchmarkStartSpan(b *testing.B) {
	for _, gen := range generators(b) {
		provider := func(b *testing.B) (context.Context, trace.Tracer) {
			tp := sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(gen.new(b)))
			b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			tracer := tp.Tracer("bench")
			ctx, root := tracer.Start(context.Background(), "root")
			root.End()
			return ctx, tracer
		}
		b.Run("gen="+gen.name+"/mode=serial", func(b *testing.B) {
			ctx, tracer := provider(b)
			b.ReportAllocs()
			for b.Loop() {
				_, s := tracer.Start(ctx, "child")
				s.End()
			}
		})
		b.Run("gen="+gen.name+"/mode=parallel", func(b *testing.B) {
			ctx, tracer := provider(b)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, s := tracer.Start(ctx, "child")
					s.End()
				}
			})
		})
	}
}

// nopHandler handles every record by doing nothing, so that a Handler
// around it shows the wrapper's own cost.
type nopHandler struct{}

func (nopHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (nopHandler) Handle(context.Context, slog.Record) error { return nil }
func (h nopHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h nopHandler) WithGroup(string) slog.Handler           { return h }

// floorHandler wraps a handler and adds one fixed integer attribute to
// every record: what any wrapper that stamps records costs before it makes
// an ID (the record copied on the way in and out, and the attribute added).
type floorHandler struct{ next slog.Handler }

func (h floorHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }
func (h floorHandler) Handle(ctx context.Context, r slog.Record) error {
	r.AddAttrs(slog.Uint64("id", 1<<62))
	return h.next.Handle(ctx, r)
}
func (h floorHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h floorHandler) WithGroup(string) slog.Handler      { return h }

// BenchmarkHandler measures Handle for one record of two attributes, on a
// handler that does nothing (nop) and on a JSON handler writing to
// io.Discard (json), each bare and wrapped in a Handler. It calls Handle
// directly: a slog.Logger adds the same cost to both (the caller's PC and
// the time).
func BenchmarkHandler(b *testing.B) {
	wrap := func(next slog.Handler, o HandlerOptions) func(*testing.B) slog.Handler {
		return func(b *testing.B) slog.Handler {
			x := newBenchIDGenerator(b)
			h, err := NewHandler(context.Background(), next, x.src.g, o)
			if err != nil {
				b.Fatal(err)
			}
			return h
		}
	}
	bare := func(h slog.Handler) func(*testing.B) slog.Handler {
		return func(*testing.B) slog.Handler { return h }
	}
	ctx := context.Background()
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "order placed", 0)
	r.AddAttrs(slog.Int("order", 1415), slog.String("user", "ada"))
	for _, v := range []struct {
		name string
		new  func(*testing.B) slog.Handler
	}{
		{"next=nop/stamp=none", bare(nopHandler{})},
		{"next=nop/stamp=floor", bare(floorHandler{nopHandler{}})},
		{"next=nop/stamp=string", wrap(nopHandler{}, HandlerOptions{})},
		{"next=nop/stamp=number", wrap(nopHandler{}, HandlerOptions{Number: true})},
		{"next=json/stamp=none", bare(slog.NewJSONHandler(io.Discard, nil))},
		{"next=json/stamp=floor", bare(floorHandler{slog.NewJSONHandler(io.Discard, nil)})},
		{"next=json/stamp=string", wrap(slog.NewJSONHandler(io.Discard, nil), HandlerOptions{})},
		{"next=json/stamp=number", wrap(slog.NewJSONHandler(io.Discard, nil), HandlerOptions{Number: true})},
	} {
		b.Run(v.name+"/mode=serial", func(b *testing.B) {
			h := v.new(b)
			b.ReportAllocs()
			for b.Loop() {
				if err := h.Handle(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
		// In parallel GOMAXPROCS goroutines share b.N records, with no
		// shared counter of the benchmark's own (see BenchmarkCores).
		b.Run(v.name+"/mode=parallel", func(b *testing.B) {
			h := v.new(b)
			b.ReportAllocs()
			b.ResetTimer()
			cores.Split(b, func(n int) {
				for range n {
					if err := h.Handle(ctx, r); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
