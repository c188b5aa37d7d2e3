// Package otelid puts TraceIds where traces and logs are made: an
// OpenTelemetry ID generator ([IDGenerator]) and a [log/slog] handler
// ([Handler]) that stamps every record with a TraceId.
//
// It lives apart from package traceid so that a program that only mints
// IDs does not build the OpenTelemetry SDK.
//
// # Span and trace IDs
//
// An [IDGenerator] plugs into a TracerProvider with
// sdktrace.WithIDGenerator. Every ID it makes starts with a TraceId taken
// from a [traceid.Generator] with one atomic add and no lock:
//
//	span ID   8 bytes   TraceId, big-endian
//	trace ID 16 bytes   TraceId, big-endian | 8 random bytes
//
// Each part gives one property:
//
//   - The TraceId gives uniqueness and order: span IDs are never zero, are
//     distinct on one node and across nodes with distinct node numbers (the
//     node is in the ID), and sort by the second they were made in, as bytes
//     and as numbers, within a [traceid.Period] (about 388 days, after which
//     the second field wraps); trace IDs sort the same way by their high
//     half.
//   - The random low half of a trace ID gives what W3C Trace Context Level 2
//     asks of a trace ID whose random flag is set: its rightmost 7 bytes are
//     random. Samplers that read those bytes, such as the SDK's
//     TraceIDRatioBased, see uniformly random values. The bytes come from
//     math/rand/v2's top-level functions (per-thread ChaCha8 state seeded by
//     the runtime from the operating system), as the SDK's default does. SDK
//     v1.47 does not set the random flag on root spans itself; the IDs meet
//     the requirement whether or not a propagator sets it.
//
// A root span's ID is the high half of its trace ID, so a root span costs
// one TraceId like any other span.
//
// # Cost
//
// IDs come from the generator's per-core path ([traceid.PerCore]): each
// processor issues TraceIds from a run of up to 4,096 that it claimed with
// one atomic add, so cores do not pass the generator's word between them
// for every span, and nothing is allocated. A span ID costs what the SDK's
// default costs (math/rand/v2, per-thread state, no lock), on one core and
// on every core at once (BENCHMARKS.md), both far below the cost of a
// span. The price is order within a goroutine: a goroutine's span IDs
// increase while it stays on one processor, and never go back a second.
// What a TraceId buys is order by time, a node and second to read back
// (idkit inspect traceid), and uniqueness by construction rather than by
// probability. BENCHMARKS.md has the figures, beside the mutex-guarded
// generator the SDK had before.
//
// A [Handler] with [HandlerOptions.Number] costs what any handler that
// adds an attribute costs (the record is copied on the way through),
// plus one TraceId, and no allocation; the default string stamp also
// formats the ID into a new 24-byte string.
//
// # When the TraceId generator fails
//
// sdktrace.IDGenerator cannot return an error, and a span must get an ID.
// When [traceid.Generator.Next] fails (ErrExhausted with Options.NoWait, a
// failing high-water store, a lost node claim), the IDGenerator falls back
// to a random 64-bit value with the top bit set in place of the TraceId.
// A TraceId never has the top bit set, so a fallback ID never equals a
// TraceId of any node, and is never zero; fallbacks are as unlikely to
// repeat one another as the SDK's default random IDs, but carry no time
// and no order. [IDGenerator.Stats] counts them, and [Options.Logger]
// gets one record when fallbacks start and one when TraceIds resume. A
// generator without NoWait waits for the next second instead when a
// second's IDs run out, which holds up the span being started.
//
// # Log records
//
// A [Handler] wraps any slog.Handler and adds one attribute, key "id" by
// default, holding a TraceId as a decimal string (JSON readers that parse
// numbers as doubles lose integers above 2^53), or as an integer with
// [HandlerOptions.Number]. Each record takes its ID from the Generator's
// per-core path in Handle, so records logged by one goroutine get
// increasing IDs while it stays on one processor. The stamp
// stays at the top level of the record whatever groups WithGroup opened.
// When the Generator fails, the record is still logged, stamped with a
// fallback value as above (a number of 2^63 or more, which no TraceId is,
// and which breaks the increasing order) and a second attribute, key
// "id_error", saying why; [Handler.Stats] counts them.
package otelid
