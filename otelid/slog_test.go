package otelid

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/slogtest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/traceid"
)

func newHandler(t testing.TB, next slog.Handler, o HandlerOptions) (*Handler, *clock.Fake) {
	t.Helper()
	g, fake := newTraceID(t, traceid.Options{Node: 5})
	h, err := NewHandler(context.Background(), next, g, o)
	require.NoError(t, err)
	return h, fake
}

// decodeLines parses JSON Lines.
func decodeLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

// TestHandlerConcurrentJSON logs from 16 goroutines through a JSON handler
// and parses the output back: every ID is distinct, a TraceId of the node,
// and, in the order each goroutine logged, of the same second or a later
// one (the per-core path orders a goroutine's IDs by second, and within a
// second only while it stays on one processor).
func TestHandlerConcurrentJSON(t *testing.T) {
	t.Parallel()
	const goroutines, perGoroutine = 16, 5000
	var out bytes.Buffer // the JSON handler serialises its writes
	h, _ := newHandler(t, slog.NewJSONHandler(&out, nil), HandlerOptions{})
	log := slog.New(h)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			l := log.With("g", g)
			for i := range perGoroutine {
				l.Info("work", "i", i)
			}
		})
	}
	wg.Wait()

	now := time.Now()
	records := decodeLines(t, out.Bytes())
	require.Len(t, records, goroutines*perGoroutine)
	seen := make(map[traceid.ID]bool, len(records))
	last := make([]traceid.ID, goroutines)
	next := make([]int, goroutines)
	for _, r := range records {
		s, ok := r["id"].(string)
		require.True(t, ok, "id is a JSON string: %v", r)
		id, err := traceid.Parse(s)
		require.NoError(t, err)
		require.Equal(t, 5, id.Node())
		require.False(t, seen[id], "ID %d repeated", id)
		seen[id] = true
		g, i := int(r["g"].(float64)), int(r["i"].(float64))
		require.Equal(t, next[g], i, "goroutine %d's records in order", g)
		next[g]++
		if last[g] != 0 {
			require.False(t, id.Time(now).Before(last[g].Time(now)), "goroutine %d record %d: second %d after %d", g, i, id.Second(), last[g].Second())
		}
		last[g] = id
	}
	assert.Zero(t, h.Stats().Fallbacks)
}

// TestHandlerStampAtTopLevel compares the output of the wrapped handler
// with that of the bare one for chains of WithAttrs and WithGroup: they are
// the same but for the stamp, which is at the top level.
func TestHandlerStampAtTopLevel(t *testing.T) {
	t.Parallel()
	noTime := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
		if len(groups) == 0 && a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	for _, tt := range []struct {
		name  string
		chain func(*slog.Logger) *slog.Logger
	}{
		{"bare", func(l *slog.Logger) *slog.Logger { return l }},
		{"attrs", func(l *slog.Logger) *slog.Logger { return l.With("a", 1, "b", "x") }},
		{"group", func(l *slog.Logger) *slog.Logger { return l.WithGroup("g") }},
		{"attrs group attrs", func(l *slog.Logger) *slog.Logger {
			return l.With("a", 1).WithGroup("g").With("b", 2)
		}},
		{"nested groups", func(l *slog.Logger) *slog.Logger {
			return l.WithGroup("g").With("b", 2).WithGroup("h").With("c", 3).WithGroup("k")
		}},
		{"empty group name", func(l *slog.Logger) *slog.Logger { return l.WithGroup("").With("a", 1) }},
		{"group without attrs", func(l *slog.Logger) *slog.Logger { return l.With("a", 1).WithGroup("empty") }},
		{"same key as the stamp", func(l *slog.Logger) *slog.Logger { return l.WithGroup("g").With("id", "mine") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var bare, wrapped bytes.Buffer
			h, _ := newHandler(t, slog.NewJSONHandler(&wrapped, noTime), HandlerOptions{})
			lb := tt.chain(slog.New(slog.NewJSONHandler(&bare, noTime)))
			lw := tt.chain(slog.New(h))
			for _, l := range []*slog.Logger{lb, lw} {
				l.Info("one", "x", 1, slog.Group("sub", "y", 2))
				l.Warn("two")
				l.Info("three", "id", "own")
			}
			want, got := decodeLines(t, bare.Bytes()), decodeLines(t, wrapped.Bytes())
			require.Len(t, got, len(want))
			for i := range got {
				s, ok := got[i]["id"].(string)
				require.True(t, ok, "a top-level string id in %v", got[i])
				if i == 2 {
					// A record's own "id" is kept: encoding/json keeps the
					// last of the duplicate keys, the stamp.
					assert.Contains(t, wrapped.String(), `"id":"own"`)
				}
				_, err := traceid.Parse(s)
				require.NoError(t, err)
				delete(got[i], "id")
				delete(want[i], "id")
				assert.Equal(t, want[i], got[i])
			}
		})
	}
}

// TestHandlerConformance runs the standard library's handler tests on a
// wrapped JSON handler.
func TestHandlerConformance(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h, _ := newHandler(t, slog.NewJSONHandler(&buf, nil), HandlerOptions{Key: "trace_key"})
	results := func() []map[string]any {
		var ms []map[string]any
		for _, line := range bytes.Split(buf.Bytes(), []byte{'\n'}) {
			if len(line) == 0 {
				continue
			}
			var m map[string]any
			require.NoError(t, json.Unmarshal(line, &m))
			_, ok := m["trace_key"].(string)
			require.True(t, ok, "stamped: %s", line)
			delete(m, "trace_key")
			ms = append(ms, m)
		}
		return ms
	}
	require.NoError(t, slogtest.TestHandler(h, results))
}

// TestHandlerFallback makes the generator fail: the record is still
// logged, with a fallback value no TraceId can take and the reason.
func TestHandlerFallback(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	g, err := traceid.New(context.Background(), traceid.Options{Node: 5, NoWait: true, Clock: fake})
	require.NoError(t, err)
	var out bytes.Buffer
	h, err := NewHandler(context.Background(), slog.NewJSONHandler(&out, nil), g, HandlerOptions{Key: "log_id"})
	require.NoError(t, err)
	log := slog.New(h).WithGroup("g")

	log.Info("during", "n", 1)
	fake.Advance(time.Second)
	log.Info("after", "n", 2)

	records := decodeLines(t, out.Bytes())
	require.Len(t, records, 2)
	during, after := records[0], records[1]
	v, err := strconv.ParseUint(during["log_id"].(string), 10, 64)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, uint64(1<<63), "a fallback is no TraceId")
	_, err = traceid.Parse(during["log_id"].(string))
	assert.ErrorIs(t, err, traceid.ErrRange)
	assert.Contains(t, during["log_id_error"], "counter exhausted")
	assert.Equal(t, map[string]any{"n": 1.0}, during["g"])

	_, err = traceid.Parse(after["log_id"].(string))
	require.NoError(t, err)
	assert.NotContains(t, after, "log_id_error")
	assert.Equal(t, Stats{Fallbacks: 1}, h.Stats())
}

// gatedAfterStart is a Gated store whose gate is open while open is set:
// the generator starts on a store that answers, then the store turns slow.
type gatedAfterStart struct {
	*memstore.Gated
	open atomic.Bool
}

func (s *gatedAfterStart) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	if s.open.Load() {
		return s.Gated.Store.AdvanceHighWater(ctx, key, t)
	}
	return s.Gated.AdvanceHighWater(ctx, key, t)
}

// started runs start, which waits for a new generator's first second on
// fake, moves the clock a second on once it sleeps, and returns its error.
func started(t *testing.T, fake *clock.Fake, start func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- start() }()
	testwait.Until(t, func() bool { return fake.Sleepers() > 0 }, "the wait for the generator's first second")
	fake.Advance(time.Second)
	return testwait.Recv(t, done, "the constructor's return once the second began")
}

// TestHandlerNeverWaits: NewHandler waits out a new generator's first
// second, so the first record gets a TraceId; after that a generator that
// waits for its store makes a log call fall back at once, never wait; the
// record after the store answered gets a TraceId.
func TestHandlerNeverWaits(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	store := &gatedAfterStart{Gated: memstore.NewGated(4)}
	store.open.Store(true)
	g, err := traceid.New(context.Background(), traceid.Options{Node: 5, Clock: fake, Store: store})
	require.NoError(t, err)
	var out bytes.Buffer
	var h *Handler
	require.NoError(t, started(t, fake, func() (err error) {
		h, err = NewHandler(context.Background(), slog.NewJSONHandler(&out, nil), g, HandlerOptions{Key: "log_id"})
		return err
	}))
	log := slog.New(h)

	log.Info("first") // the generator's first second, waited out by NewHandler
	store.open.Store(false)
	fake.Advance(2 * time.Second)
	log.Info("store") // past the seconds leased at the start
	testwait.Recv(t, store.Entered, "the lease's renewal in the background")
	records := decodeLines(t, out.Bytes())
	require.Len(t, records, 2, "both records logged without waiting")
	_, err = traceid.Parse(records[0]["log_id"].(string))
	assert.NoError(t, err, "the first record gets a TraceId")
	_, err = traceid.Parse(records[1]["log_id"].(string))
	assert.ErrorIs(t, err, traceid.ErrRange, "a fallback while the store is slow")
	assert.Contains(t, records[1]["log_id_error"], "renewing in the background")
	assert.Zero(t, fake.Sleepers(), "nothing sleeps on the clock")

	close(store.Release)
	p := g.PerCore()
	testwait.Until(t, func() bool { _, err := p.TryNext(); return err == nil }, "the renewal to land")
	log.Info("leased")
	records = decodeLines(t, out.Bytes())
	require.Len(t, records, 3)
	_, err = traceid.Parse(records[2]["log_id"].(string))
	assert.NoError(t, err, "a TraceId once the second is leased")
	assert.Equal(t, Stats{Fallbacks: 1}, h.Stats())
}

// TestConstructorsWaitUnderTheirContext: NewHandler and NewIDGenerator on
// a new generator wait for its first second under their context, and fail
// with its error once it ends.
func TestConstructorsWaitUnderTheirContext(t *testing.T) {
	t.Parallel()
	for name, build := range map[string]func(ctx context.Context, g *traceid.Generator) error{
		"NewHandler": func(ctx context.Context, g *traceid.Generator) error {
			_, err := NewHandler(ctx, slog.NewJSONHandler(&bytes.Buffer{}, nil), g, HandlerOptions{})
			return err
		},
		"NewIDGenerator": func(ctx context.Context, g *traceid.Generator) error {
			_, err := NewIDGenerator(ctx, g, Options{})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fake := clock.NewFake(t0)
			g, err := traceid.New(context.Background(), traceid.Options{Node: 5, Clock: fake})
			require.NoError(t, err)
			defer g.Close()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- build(ctx, g) }()
			testwait.Until(t, func() bool { return fake.Sleepers() > 0 }, "the wait for the generator's first second")
			cancel()
			err = testwait.Recv(t, done, name+" returning once its context ended")
			assert.ErrorIs(t, err, context.Canceled)
			assert.ErrorContains(t, err, "otelid: waiting for node 5's first TraceId")
		})
	}
}

// TestHandlerDisabledTakesNoID: a record below the level takes no ID, so
// the records around it have consecutive IDs. The IDs come from the
// processor's run (PerCore), and a goroutine moved to another processor
// between two records takes its next ID from another run: the test passes
// if one of ten tries keeps its processor.
func TestHandlerDisabledTakesNoID(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	h, _ := newHandler(t, slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}), HandlerOptions{})
	log := slog.New(h)
	var gaps []int64
	for range 10 {
		out.Reset()
		log.Warn("a")
		log.Info("skipped")
		log.Warn("b")
		records := decodeLines(t, out.Bytes())
		require.Len(t, records, 2)
		a, err := traceid.Parse(records[0]["id"].(string))
		require.NoError(t, err)
		b, err := traceid.Parse(records[1]["id"].(string))
		require.NoError(t, err)
		if b == a+1 {
			break
		}
		gaps = append(gaps, int64(b-a))
	}
	assert.Less(t, len(gaps), 10, "the disabled record took no ID: the records' IDs are %v apart, never 1", gaps)
	assert.False(t, h.Enabled(context.Background(), slog.LevelInfo))
}

func TestNewHandlerNil(t *testing.T) {
	t.Parallel()
	g, _ := newTraceID(t, traceid.Options{})
	_, err := NewHandler(context.Background(), nil, g, HandlerOptions{})
	require.ErrorIs(t, err, ErrNil)
	assert.Contains(t, err.Error(), "needs a slog.Handler to wrap, got nil")
	_, err = NewHandler(context.Background(), slog.DiscardHandler, nil, HandlerOptions{})
	require.ErrorIs(t, err, ErrNil)
	assert.True(t, strings.HasPrefix(err.Error(), "otelid: "))
}

// TestHandlerNumber stamps integers: a JSON number holding the TraceId
// exactly, when decoded as an integer.
func TestHandlerNumber(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	h, _ := newHandler(t, slog.NewJSONHandler(&out, nil), HandlerOptions{Number: true})
	slog.New(h).Info("a")
	slog.New(h).WithGroup("g").Info("b", "x", 1)
	dec := json.NewDecoder(&out)
	dec.UseNumber()
	var prev traceid.ID
	for range 2 {
		var m map[string]any
		require.NoError(t, dec.Decode(&m))
		n, ok := m["id"].(json.Number)
		require.True(t, ok, "id is a JSON number: %v", m)
		id, err := traceid.Parse(n.String())
		require.NoError(t, err)
		assert.Equal(t, 5, id.Node())
		assert.NotEqual(t, id, prev)
		prev = id
	}
}

// TestHandlerManyAttrs stamps records with more attributes than a Record
// keeps inline, fanned out to two Handlers by slog.MultiHandler: each
// output has every attribute once, its own stamp, and no sign of a record
// modified through a shared copy.
func TestHandlerManyAttrs(t *testing.T) {
	t.Parallel()
	var a, b bytes.Buffer
	ha, _ := newHandler(t, slog.NewJSONHandler(&a, nil), HandlerOptions{Key: "a_id"})
	hb, _ := newHandler(t, slog.NewJSONHandler(&b, nil), HandlerOptions{Key: "b_id"})
	log := slog.New(slog.NewMultiHandler(ha, hb))
	args := []any{}
	for i := range 8 {
		args = append(args, "k"+strconv.Itoa(i), i)
	}
	log.Info("many", args...)
	log.WithGroup("g").Info("many", args...)
	for _, out := range []*bytes.Buffer{&a, &b} {
		assert.NotContains(t, out.String(), "!BUG")
		for i, r := range decodeLines(t, out.Bytes()) {
			attrs := r
			if i == 1 {
				attrs = r["g"].(map[string]any)
			}
			for k := range 8 {
				assert.Equal(t, float64(k), attrs["k"+strconv.Itoa(k)], "record %d", i)
			}
			_, hasA := r["a_id"]
			_, hasB := r["b_id"]
			assert.NotEqual(t, hasA, hasB, "one stamp per output: %v", r)
		}
	}
}
