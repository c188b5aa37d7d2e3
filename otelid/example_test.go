package otelid_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/otelid"
	"github.com/idkit/idkit/traceid"
)

func ExampleIDGenerator() {
	// One processor, so that the spans take their IDs from one
	// processor's run (see traceid.PerCore) and print the same on every
	// run.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// In production leave Clock nil for the system clock.
	fake := clock.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	g, err := traceid.New(context.Background(), traceid.Options{Node: 7, Clock: fake})
	if err != nil {
		panic(err)
	}
	fake.Advance(time.Second) // a new generator issues from the next second on
	// NewIDGenerator takes the generator's first ID, waiting for that
	// second, so that the first span gets a TraceId.

	ids, err := otelid.NewIDGenerator(context.Background(), g, otelid.Options{Logger: slog.Default()})
	if err != nil {
		panic(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithIDGenerator(ids))
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer("example")

	ctx, root := tracer.Start(context.Background(), "request")
	_, child := tracer.Start(ctx, "query")
	child.End()
	root.End()

	sc := child.SpanContext()
	fmt.Println("trace:", sc.TraceID().String()[:16], "+ 16 random hex digits")
	fmt.Println("root: ", root.SpanContext().SpanID())
	fmt.Println("child:", sc.SpanID())
	id, _ := otelid.FromSpanID(sc.SpanID())
	fmt.Println("child is TraceId", id, "of node", id.Node(), "made at", id.Time(fake.Now()))
	// Output:
	// trace: 4061f04001c00002 + 16 random hex digits
	// root:  4061f04001c00002
	// child: 4061f04001c00003
	// child is TraceId 4639253248866254851 of node 7 made at 2026-11-21 12:00:01 +0000 UTC
}

func ExampleHandler() {
	// One processor, so that this example's two records take their IDs
	// from one processor's run (see traceid.PerCore) and print the same
	// on every run.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// In production leave Clock nil for the system clock.
	fake := clock.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	g, err := traceid.New(context.Background(), traceid.Options{Node: 7, Clock: fake})
	if err != nil {
		panic(err)
	}
	fake.Advance(time.Second)

	noTime := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{} // keep the output stable for this example
		}
		return a
	}}
	h, err := otelid.NewHandler(context.Background(), slog.NewJSONHandler(os.Stdout, noTime), g, otelid.HandlerOptions{})
	if err != nil {
		panic(err)
	}
	log := slog.New(h)
	log.Info("order placed", "order", 1415)
	log.WithGroup("db").Warn("slow query", "ms", 250)
	// Output:
	// {"level":"INFO","msg":"order placed","order":1415,"id":"4639253248866254850"}
	// {"level":"WARN","msg":"slow query","db":{"ms":250},"id":"4639253248866254851"}
}
