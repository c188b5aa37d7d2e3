package otelid

import (
	"bytes"
	"context"
	"encoding/binary"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/claimtest"
	"github.com/idkit/idkit/traceid"
)

// t0 is half a second into a second.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 500_000_000, time.UTC)

// newTraceID returns a generator of node on a fake clock already moved to
// the generator's first fresh second, so that Next does not wait.
func newTraceID(t testing.TB, o traceid.Options) (*traceid.Generator, *clock.Fake) {
	t.Helper()
	fake := clock.NewFake(t0)
	o.Clock = fake
	g, err := traceid.New(context.Background(), o)
	require.NoError(t, err)
	fake.Advance(time.Second)
	return g, fake
}

func newIDGenerator(t testing.TB, o traceid.Options) (*IDGenerator, *clock.Fake) {
	t.Helper()
	g, fake := newTraceID(t, o)
	x, err := NewIDGenerator(context.Background(), g, Options{})
	require.NoError(t, err)
	return x, fake
}

func spanUint(sid trace.SpanID) uint64 { return binary.BigEndian.Uint64(sid[:]) }

// TestProviderConcurrentSpans runs a real TracerProvider with an in-memory
// span recorder: 64 goroutines each start 10,000 spans, as traces of a root,
// two children and a grandchild. Every span ID and every trace ID must be
// distinct, every parent link must point at the recorded parent, and every
// span ID must decode to the generator's node and second.
func TestProviderConcurrentSpans(t *testing.T) {
	const node, goroutines = 4242, 64
	perGoroutine := 10_000
	if raceEnabled {
		perGoroutine = 1_000 // the race detector makes 640,000 spans too slow and too large
	}
	x, fake := newIDGenerator(t, traceid.Options{Node: node})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithIDGenerator(x),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSpanProcessor(rec),
	)
	t.Cleanup(func() { assert.NoError(t, tp.Shutdown(context.Background())) })
	tracer := tp.Tracer("otelid-test")

	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range perGoroutine / 4 {
				ctx, root := tracer.Start(context.Background(), "root")
				cctx, child := tracer.Start(ctx, "child")
				_, grandchild := tracer.Start(cctx, "grandchild")
				grandchild.End()
				child.End()
				_, child = tracer.Start(ctx, "child")
				child.End()
				root.End()
			}
		})
	}
	wg.Wait()

	ended := rec.Ended()
	require.Len(t, ended, goroutines*perGoroutine)
	spans := make(map[trace.SpanID]sdktrace.ReadOnlySpan, len(ended))
	traces := make(map[trace.TraceID]int)
	second := fake.Now().Unix() % (1 << traceid.SecondBits)
	for _, s := range ended {
		sc := s.SpanContext()
		sid := sc.SpanID()
		require.True(t, sc.IsValid(), "span %s is valid", sid)
		_, dup := spans[sid]
		require.False(t, dup, "span ID %s issued twice", sid)
		spans[sid] = s

		id, ok := FromSpanID(sid)
		require.True(t, ok, "span ID %s holds a TraceId", sid)
		p, err := traceid.Decode(id, 0)
		require.NoError(t, err)
		require.Equal(t, node, p.Node, "span ID %s", sid)
		require.Equal(t, int(second), p.Second, "span ID %s", sid)

		if !s.Parent().IsValid() {
			traces[sc.TraceID()]++
		}
	}
	assert.Len(t, traces, goroutines*perGoroutine/4, "one distinct trace ID per root span")
	for tid, n := range traces {
		require.Equal(t, 1, n, "trace ID %s has %d roots", tid, n)
	}
	kinds := map[string]int{}
	for _, s := range ended {
		kinds[s.Name()]++
		if s.Name() == "root" {
			require.False(t, s.Parent().IsValid())
			continue
		}
		parent, ok := spans[s.Parent().SpanID()]
		require.True(t, ok, "the parent of %s %s was recorded", s.Name(), s.SpanContext().SpanID())
		require.Equal(t, s.SpanContext().TraceID(), parent.SpanContext().TraceID(), "a child is in its parent's trace")
		want := map[string]string{"child": "root", "grandchild": "child"}[s.Name()]
		require.Equal(t, want, parent.Name())
	}
	q := goroutines * perGoroutine / 4
	assert.Equal(t, map[string]int{"root": q, "child": 2 * q, "grandchild": q}, kinds)
	assert.Zero(t, x.Stats().Fallbacks)
}

// TestIDsLayout checks the two halves of each ID: span IDs and the high
// half of trace IDs are TraceIds that sort by time as bytes; the low half of
// trace IDs is random.
func TestIDsLayout(t *testing.T) {
	t.Parallel()
	x, fake := newIDGenerator(t, traceid.Options{Node: 7})
	ctx := context.Background()

	tid, sid := x.NewIDs(ctx)
	require.True(t, tid.IsValid())
	require.True(t, sid.IsValid())
	assert.Equal(t, sid[:], tid[:8], "a root span's ID is the high half of its trace ID")
	id, ok := FromSpanID(sid)
	require.True(t, ok)
	assert.Equal(t, 7, id.Node())
	assert.Equal(t, fake.Now().Truncate(time.Second), id.Time(fake.Now()))
	got, ok := FromTraceID(tid)
	require.True(t, ok)
	assert.Equal(t, id, got)

	// Later IDs sort after earlier ones, as bytes, across seconds.
	prevT, prevS := tid, sid
	for i := range 1000 {
		if i%100 == 0 {
			fake.Advance(time.Second)
		}
		var tid trace.TraceID
		var sid trace.SpanID
		if i%2 == 0 {
			tid, sid = x.NewIDs(ctx)
		} else {
			tid = prevT
			sid = x.NewSpanID(ctx, tid)
		}
		require.Positive(t, bytes.Compare(sid[:], prevS[:]), "span ID %s after %s", sid, prevS)
		if i%2 == 0 {
			require.Positive(t, bytes.Compare(tid[:8], prevT[:8]), "trace ID %s after %s", tid, prevT)
		}
		prevT, prevS = tid, sid
	}

	// The low halves: distinct, and each bit set about half the time.
	const n = 4096
	seen := make(map[uint64]bool, n)
	var ones [64]int
	for range n {
		tid, _ := x.NewIDs(ctx)
		low := binary.BigEndian.Uint64(tid[8:])
		require.False(t, seen[low], "low half %x repeated", low)
		seen[low] = true
		for b := range 64 {
			ones[b] += int(low >> b & 1)
		}
	}
	for b, c := range ones {
		// 5 standard deviations around n/2: fails by chance about once in
		// 3.5 million runs per bit.
		assert.InDelta(t, n/2, c, 5*32, "bit %d of the random half set %d times of %d", b, c, n)
	}
	assert.Zero(t, x.Stats().Fallbacks)
}

// TestFallback makes the TraceId generator fail: with NoWait, a new
// generator has no ID before the clock reaches a fresh second. Every span
// still gets a distinct, non-zero ID with the top bit set, which no TraceId
// has; the failure is counted and logged once, and TraceIds resume when the
// clock moves on.
func TestFallback(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	g, err := traceid.New(context.Background(), traceid.Options{Node: 9, NoWait: true, Clock: fake})
	require.NoError(t, err)
	_, err = g.Next()
	require.ErrorIs(t, err, traceid.ErrExhausted, "the test needs a failing generator")

	var logs bytes.Buffer
	x, err := NewIDGenerator(context.Background(), g, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	ctx := context.Background()

	const n = 1000
	seen := make(map[uint64]bool, 2*n)
	for i := range n {
		var sid trace.SpanID
		if i%2 == 0 {
			var tid trace.TraceID
			tid, sid = x.NewIDs(ctx)
			require.True(t, tid.IsValid())
			_, ok := FromTraceID(tid)
			assert.False(t, ok, "a fallback trace ID holds no TraceId")
		} else {
			sid = x.NewSpanID(ctx, trace.TraceID{1})
		}
		v := spanUint(sid)
		require.True(t, sid.IsValid())
		require.Equal(t, uint64(1), v>>63, "fallback %x has the top bit set", v)
		require.False(t, seen[v], "fallback %x repeated", v)
		seen[v] = true
		_, ok := FromSpanID(sid)
		assert.False(t, ok)
	}
	assert.Equal(t, Stats{Fallbacks: n}, x.Stats())
	assert.Equal(t, 1, bytes.Count(logs.Bytes(), []byte("level=WARN")), logs.String())
	assert.Contains(t, logs.String(), "counter exhausted")
	assert.Contains(t, logs.String(), "node=9")

	fake.Advance(time.Second)
	for range n {
		sid := x.NewSpanID(ctx, trace.TraceID{1})
		id, ok := FromSpanID(sid)
		require.True(t, ok, "TraceIds resume: %s", sid)
		require.Equal(t, 9, id.Node())
		require.False(t, seen[uint64(id)])
		seen[uint64(id)] = true
	}
	assert.Equal(t, Stats{Fallbacks: n}, x.Stats(), "no more fallbacks")
	assert.Equal(t, 1, bytes.Count(logs.Bytes(), []byte("level=INFO")), logs.String())
	assert.Contains(t, logs.String(), "fallbacks="+strconv.Itoa(n))
}

func TestNewIDGeneratorNil(t *testing.T) {
	t.Parallel()
	x, err := NewIDGenerator(context.Background(), nil, Options{})
	assert.Nil(t, x)
	require.ErrorIs(t, err, ErrNil)
	assert.Contains(t, err.Error(), "needs a *traceid.Generator, got nil")
}

func TestFromSpanID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		v    uint64
		want traceid.ID
		ok   bool
	}{
		{0, 0, false},
		{1, 1, true},
		{1<<63 - 1, 1<<63 - 1, true},
		{1 << 63, 0, false},
		{1<<64 - 1, 0, false},
	} {
		var sid trace.SpanID
		binary.BigEndian.PutUint64(sid[:], tt.v)
		got, ok := FromSpanID(sid)
		assert.Equal(t, tt.want, got, "%x", tt.v)
		assert.Equal(t, tt.ok, ok, "%x", tt.v)
		var tid trace.TraceID
		copy(tid[:], sid[:])
		tid[15] = 0xff
		got, ok = FromTraceID(tid)
		assert.Equal(t, tt.want, got, "%x", tt.v)
		assert.Equal(t, tt.ok, ok, "%x", tt.v)
	}
}

// TestClaimedNode runs on a generator whose node comes from a claim: span
// IDs and log stamps carry the claimed node while the claim holds, and once
// it expires the generator fails with ErrNodeLost at the next second, so
// spans get fallback IDs and log records fallback stamps, never a TraceId of
// a node this process no longer holds.
func TestClaimedNode(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	claim := &claimtest.Claim{Number: 31337, Deadline: t0.Add(2 * time.Second)}
	g, err := traceid.New(context.Background(), traceid.Options{Claim: claim, Clock: fake})
	require.NoError(t, err)
	fake.Advance(time.Second)
	x, err := NewIDGenerator(context.Background(), g, Options{})
	require.NoError(t, err)
	var out bytes.Buffer
	h, err := NewHandler(context.Background(), slog.NewJSONHandler(&out, nil), g, HandlerOptions{})
	require.NoError(t, err)
	log := slog.New(h)
	ctx := context.Background()

	tid, sid := x.NewIDs(ctx)
	id, ok := FromTraceID(tid)
	require.True(t, ok)
	assert.Equal(t, 31337, id.Node())
	root, ok := FromSpanID(sid)
	require.True(t, ok)
	assert.Equal(t, id, root)
	id, ok = FromSpanID(x.NewSpanID(ctx, tid))
	require.True(t, ok)
	assert.Equal(t, 31337, id.Node())
	log.Info("held")

	fake.Advance(time.Second) // past the claim's deadline; the generator checks it at the new second
	for range 10 {
		tid, sid = x.NewIDs(ctx)
		require.True(t, tid.IsValid())
		require.True(t, sid.IsValid())
		_, ok = FromSpanID(sid)
		require.False(t, ok, "span ID %s after the claim was lost", sid)
		_, ok = FromSpanID(x.NewSpanID(ctx, tid))
		require.False(t, ok)
	}
	assert.Equal(t, Stats{Fallbacks: 20}, x.Stats())
	log.Info("lost")

	records := decodeLines(t, out.Bytes())
	require.Len(t, records, 2)
	held, err := traceid.Parse(records[0]["id"].(string))
	require.NoError(t, err)
	assert.Equal(t, 31337, held.Node())
	_, err = traceid.Parse(records[1]["id"].(string))
	require.ErrorIs(t, err, traceid.ErrRange, "a fallback stamp")
	assert.Contains(t, records[1]["id_error"], "node claim lost: test claim lost")
	assert.Equal(t, Stats{Fallbacks: 1}, h.Stats())
}
