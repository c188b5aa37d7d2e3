package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/snowflake"
	idstore "github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

// start is a moment well inside a second, for fake clocks.
var start = time.Date(2026, 11, 23, 12, 0, 0, 500_000_000, time.UTC)

// newLog returns a launch log in a temporary file, with one launch.
func newLog(t *testing.T) *launchlog.Log {
	t.Helper()
	l, err := launchlog.New(launchlog.Options{Path: filepath.Join(t.TempDir(), "idkit.db")})
	require.NoError(t, err)
	_, err = l.Begin(context.Background(), idstore.Info{Ticket: "REL-1", By: "test"})
	require.NoError(t, err)
	return l
}

// allSchemes returns Options serving every scheme on the system clock
// with a launch log, which also reserves the segment blocks and reads
// launches.
func allSchemes(t *testing.T) Options {
	t.Helper()
	l := newLog(t)
	return Options{
		Store:     l,
		Blocks:    l,
		Launches:  l,
		TraceID:   &traceid.Options{Node: 7},
		Snowflake: &snowflake.Options{Node: map[string]int64{"datacenter": 1, "worker": 3}},
		DecimalID: &decimalid.Options{Launch: 1},
		ObjectID:  &objectid.Options{},
		Segments:  []segment.Options{{Tag: "order"}, {Tag: "invoice", Step: 10}},
	}
}

func newServer(t *testing.T, c Options) *Server {
	t.Helper()
	s, err := New(context.Background(), c)
	require.NoError(t, err)
	// Closes the segment allocators, whose fetches write to the launch
	// log, before the log and its directory go.
	t.Cleanup(func() { s.Shutdown(context.Background()) })
	return s
}

// get serves one request and returns the response.
func get(t *testing.T, h http.Handler, target string, header ...string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// parsers check that text is an ID of each scheme.
var parsers = map[string]func(string) error{
	"traceid":         func(s string) error { _, err := traceid.Parse(s); return err },
	"snowflake":       func(s string) error { _, err := snowflake.Parse(s); return err },
	"decimalid":       func(s string) error { _, err := decimalid.Parse(s); return err },
	"objectid":        func(s string) error { _, err := objectid.Parse(s); return err },
	"segment/order":   func(s string) error { _, err := segment.Parse(s); return err },
	"segment/invoice": func(s string) error { _, err := segment.Parse(s); return err },
}

func TestIDs(t *testing.T) {
	t.Parallel()
	s := newServer(t, allSchemes(t))
	require.Equal(t, []string{"traceid", "snowflake", "decimalid", "objectid", "segment/order", "segment/invoice"}, s.Schemes())
	for _, name := range s.Schemes() {
		t.Run(name, func(t *testing.T) {
			seen := make(map[string]bool)
			for _, n := range []int{1, 2, 1000, 10_000} {
				// JSON, the default.
				resp := get(t, s, "/v1/"+name+"?n="+itoa(n))
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				assert.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
				var got struct{ IDs []string }
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
				require.Len(t, got.IDs, n)
				// Text, one a line.
				resp = get(t, s, "/v1/"+name+"?n="+itoa(n), "Accept", "text/plain")
				require.Equal(t, http.StatusOK, resp.StatusCode)
				assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
				text := body(t, resp)
				require.True(t, strings.HasSuffix(text, "\n"))
				lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
				require.Len(t, lines, n)
				for _, id := range append(got.IDs, lines...) {
					require.NoError(t, parsers[name](id))
					require.False(t, seen[id], "%s repeated", id)
					seen[id] = true
				}
			}
		})
	}
	// Without n, one ID; the counter of issued IDs counts all of them.
	resp := get(t, s, "/v1/traceid")
	var got struct{ IDs []string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Len(t, got.IDs, 1)
	metrics := body(t, get(t, s, "/metrics"))
	assertMetric(t, metrics, `idkit_ids_issued_total{scheme="traceid"} 22007`)
	assertMetric(t, metrics, `idkit_http_requests_total{code="200",route="ids",scheme="objectid"} 8`)
	assertMetric(t, metrics, `idkit_http_request_duration_seconds_count{route="ids",scheme="decimalid"} 8`)
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestErrors(t *testing.T) {
	t.Parallel()
	s := newServer(t, allSchemes(t))
	tests := []struct {
		method, target, accept string
		body                   string
		status                 int
		want                   string // in the error message
	}{
		{"GET", "/v1/traceid?n=0", "", "", 400, `n "0" out of range, want 1 to 10000`},
		{"GET", "/v1/traceid?n=10001", "", "", 400, `n "10001" out of range, want 1 to 10000`},
		{"GET", "/v1/traceid?n=-1", "", "", 400, `n "-1" out of range`},
		{"GET", "/v1/traceid?n=%2B5", "", "", 400, `n "+5" out of range`},
		{"GET", "/v1/traceid?n=abc", "", "", 400, `n "abc" out of range`},
		{"GET", "/v1/traceid?n=", "", "", 400, `n "" out of range`},
		{"GET", "/v1/traceid?n=1&n=2", "", "", 400, "n given 2 times, want once"},
		{"GET", "/v1/traceid?count=5", "", "", 400, `unknown parameter "count", want [n]`},
		{"GET", "/v1/traceid?n=%zz", "", "", 400, `query "n=%zz" does not parse`},
		{"GET", "/v1/uuid", "", "", 404, `unknown scheme "uuid"`},
		{"GET", "/v1/segment", "", "", 404, `segment IDs are at /v1/segment/{tag}`},
		{"GET", "/v1/segment/user", "", "", 404, `unknown segment tag "user"`},
		{"GET", "/v1/segment/user/5", "", "", 404, `unknown segment tag "user"`},
		{"GET", "/v1/segment/order/x", "", "", 400, `segment`},
		{"POST", "/v1/segment/order", "", "", 405, "method POST not allowed"},
		{"POST", "/v1/segment/order/5", "", "", 405, "method POST not allowed"},
		{"GET", "/v1/segment/order?n=10001", "", "", 400, `n "10001" out of range`},
		{"GET", "/v1/uuid/123", "", "", 404, `unknown scheme "uuid"`},
		{"GET", "/v2/traceid", "", "", 404, `no such path "/v2/traceid"`},
		{"GET", "/", "", "", 404, `no such path "/"`},
		{"POST", "/v1/traceid", "", "", 405, "method POST not allowed on /v1/traceid, want GET"},
		{"DELETE", "/v1/traceid/1", "", "", 405, "method DELETE not allowed"},
		{"PUT", "/healthz", "", "", 405, "method PUT not allowed"},
		{"GET", "/v1/traceid", "image/png", "", 406, `Accept "image/png" allows neither application/json nor text/plain`},
		{"GET", "/v1/traceid", "text/plain;q=0, application/json;q=0", "", 406, "allows neither"},
		{"GET", "/v1/traceid", "", "x", 413, "a request takes no body"},
		{"GET", "/v1/traceid/abc", "", "", 400, `traceid: invalid syntax: "abc"`},
		{"GET", "/v1/traceid/0", "", "", 400, "traceid"},
		{"GET", "/v1/traceid/4649612847423160321?at=yesterday", "", "", 400, `at "yesterday" is not an RFC 3339 time`},
		{"GET", "/v1/traceid/4649612847423160321?x=1", "", "", 400, `unknown parameter "x", want [at]`},
		{"GET", "/v1/snowflake/-5", "", "", 400, "snowflake"},
		{"GET", "/v1/snowflake/1?at=2026-01-01T00:00:00Z", "", "", 400, `unknown parameter "at", want none`},
		{"GET", "/v1/decimalid/5", "", "", 400, "decimalid"},
		{"GET", "/v1/decimalid/10000100099", "", "", 404, "launch 99 of 10000100099 is not in the launch log"},
		{"GET", "/v1/objectid/000000000000000000000000", "", "", 400, "objectid"},
		{"GET", "/v1/objectid/xyz", "", "", 400, "objectid"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			var rd io.Reader
			if tt.body != "" {
				rd = strings.NewReader(tt.body)
			}
			r := httptest.NewRequest(tt.method, tt.target, rd)
			if tt.accept != "" {
				r.Header.Set("Accept", tt.accept)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			resp := w.Result()
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var e struct{ Error string }
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			assert.Contains(t, e.Error, tt.want)
		})
	}
	metrics := body(t, get(t, s, "/metrics"))
	assertMetric(t, metrics, `idkit_http_requests_total{code="400",route="ids",scheme="traceid"} 9`)
	assertMetric(t, metrics, `idkit_http_requests_total{code="404",route="ids",scheme=""} 3`)
}

func TestWantsText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		accept     string
		text, isOK bool
	}{
		{"", false, true},
		{"*/*", false, true},
		{"application/json", false, true},
		{"text/plain", true, true},
		{"TEXT/PLAIN; charset=utf-8", true, true},
		{"text/*", true, true},
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", false, true},
		{"text/plain;q=0.5, application/json;q=0.4", true, true},
		{"text/plain;q=0.5, application/json", false, true},
		{"application/json;q=0, */*", true, true},
		{"text/plain;q=0, */*;q=0.1", false, true},
		{"text/plain, application/json", false, true}, // equal: JSON
		{"image/png", false, false},
		{"*/*;q=0", false, false},
	}
	for _, tt := range tests {
		var h []string
		if tt.accept != "" {
			h = []string{tt.accept}
		}
		text, ok := wantsText(h)
		assert.Equal(t, tt.isOK, ok, "%q acceptable", tt.accept)
		if ok {
			assert.Equal(t, tt.text, text, "%q text", tt.accept)
		}
	}
}

// inspect returns the fields of the JSON object at target, in order.
func inspect(t *testing.T, h http.Handler, target string) (names []string, values map[string]any) {
	t.Helper()
	resp := get(t, h, target)
	b := body(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, b)
	dec := json.NewDecoder(strings.NewReader(b))
	dec.UseNumber()
	_, err := dec.Token()
	require.NoError(t, err)
	values = make(map[string]any)
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		var v any
		require.NoError(t, dec.Decode(&v))
		names = append(names, k.(string))
		values[k.(string)] = v
	}
	return names, values
}

func TestInspect(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	c := allSchemes(t)
	c.Clock = clk
	c.TraceID.ThreadBits = 4
	s := newServer(t, c)

	tid, err := traceid.Compose(traceid.Parts{Second: int(start.Unix() % (1 << 25)), Node: 9, Thread: 3, Counter: 17}, 4)
	require.NoError(t, err)
	names, v := inspect(t, s, "/v1/traceid/"+tid.String())
	assert.Equal(t, []string{"scheme", "id", "time", "second", "node", "thread", "counter"}, names)
	assert.Equal(t, "traceid", v["scheme"])
	assert.Equal(t, tid.String(), v["id"])
	assert.Equal(t, "2026-11-23T12:00:00Z", v["time"])
	assert.Equal(t, json.Number("9"), v["node"])
	assert.Equal(t, json.Number("3"), v["thread"])
	assert.Equal(t, json.Number("17"), v["counter"])
	// The second wraps: at a reference one period later it reads as then.
	later := start.Add(traceid.Period).Format(time.RFC3339)
	_, v = inspect(t, s, "/v1/traceid/"+tid.String()+"?at="+later)
	assert.Equal(t, start.Add(traceid.Period).Truncate(time.Second).Format(time.RFC3339), v["time"])

	sid, err := snowflake.Twitter().Compose(snowflake.Parts{Time: start, Node: map[string]int64{"datacenter": 2, "worker": 5}, Sequence: 42})
	require.NoError(t, err)
	names, v = inspect(t, s, "/v1/snowflake/"+sid.String())
	assert.Equal(t, []string{"scheme", "id", "preset", "time", "tick", "datacenter", "worker", "sequence"}, names)
	assert.Equal(t, "twitter", v["preset"])
	assert.Equal(t, "2026-11-23T12:00:00.5Z", v["time"])
	assert.Equal(t, json.Number("2"), v["datacenter"])
	assert.Equal(t, json.Number("5"), v["worker"])
	assert.Equal(t, json.Number("42"), v["sequence"])

	did, err := decimalid.Compose(1415, 92, 1)
	require.NoError(t, err)
	names, v = inspect(t, s, "/v1/decimalid/"+did.SplitString())
	assert.Equal(t, []string{"scheme", "id", "split", "counter", "generator", "launch", "launch_started", "ticket", "by", "note"}, names)
	assert.Equal(t, did.String(), v["id"])
	assert.Equal(t, "1415-00092-00001", v["split"])
	assert.Equal(t, "REL-1", v["ticket"])
	assert.Equal(t, "test", v["by"])

	names, v = inspect(t, s, "/v1/segment/order/1415")
	assert.Equal(t, []string{"scheme", "id", "tag"}, names)
	assert.Equal(t, "1415", v["id"])
	assert.Equal(t, "order", v["tag"])

	oid, err := objectid.Compose(start, [5]byte{1, 2, 3, 4, 5}, 77)
	require.NoError(t, err)
	names, v = inspect(t, s, "/v1/objectid/"+oid.String())
	assert.Equal(t, []string{"scheme", "id", "time", "process", "counter"}, names)
	assert.Equal(t, "2026-11-23T12:00:00Z", v["time"])
	assert.Equal(t, "0102030405", v["process"])
	assert.Equal(t, json.Number("77"), v["counter"])
}

func TestOptionsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		c    Options
		want string
	}{
		{Options{}, "names no scheme"},
		{Options{ObjectID: &objectid.Options{}, MaxN: -1}, "Options.MaxN -1 out of range, want 1 to 1000000"},
		{Options{ObjectID: &objectid.Options{}, MaxN: 2_000_000}, "Options.MaxN 2000000 out of range"},
		{Options{ObjectID: &objectid.Options{}, WriteTimeout: -time.Second}, "Options.WriteTimeout -1s is negative"},
		{Options{ObjectID: &objectid.Options{}, MaxHeaderBytes: -1}, "Options.MaxHeaderBytes -1 is negative"},
		{Options{DecimalID: &decimalid.Options{Launch: 1}}, "DecimalID needs a Source"},
		{Options{Segments: []segment.Options{{Tag: "order"}}}, `segment tag "order" needs a Store of blocks`},
		{Options{Store: newLog(t), Segments: []segment.Options{{Tag: "a"}}}, `segment tag "a" needs a Store of blocks, or Options.Blocks`},
		{Options{Blocks: newLog(t), Segments: []segment.Options{{Tag: "bad tag"}}}, "segment"},
		{Options{Blocks: newLog(t), Segments: []segment.Options{{Tag: "a"}, {Tag: "a"}}}, "segment/a is served twice"},
		{Options{TraceID: &traceid.Options{Node: 70_000}}, "traceid"},
		{Options{Snowflake: &snowflake.Options{Node: map[string]int64{"worker": 99}}}, "snowflake"},
	}
	for _, tt := range tests {
		_, err := New(context.Background(), tt.c)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
	}
}

// claim is a node claim that is lost while the test says so; it keeps the
// node's marks in memory.
type claim struct {
	memstore.Store
	node int
	lost atomic.Bool
}

func (c *claim) Node() int { return c.node }

func (c *claim) Check(time.Time) error {
	if c.lost.Load() {
		return errors.New("claim of node " + itoa(c.node) + " lost")
	}
	return nil
}

// flakyStore is a launch log that fails, or blocks, while a test says so.
type flakyStore struct {
	*launchlog.Log
	fail       atomic.Bool
	failWrites atomic.Bool   // writes fail, reads go on: a full disk
	block      chan struct{} // when not nil, HighWater waits for it to close
	reads      atomic.Int64
	probeReads atomic.Int64 // reads of the health probe's key
}

var errDown = errors.New("store down")

func (f *flakyStore) HighWater(ctx context.Context, key string) (time.Time, error) {
	return f.read(f.Log, key)
}

func (f *flakyStore) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	return f.write(f.Log, key, t)
}

// Hold holds key in the log, and fails the hold's reads and writes as the
// store's: a generator keeps its marks through its hold.
func (f *flakyStore) Hold(ctx context.Context, key string) (idstore.Held, error) {
	h, err := f.Log.Hold(ctx, key)
	if err != nil {
		return nil, err
	}
	return flakyHeld{Held: h, f: f}, nil
}

type flakyHeld struct {
	idstore.Held
	f *flakyStore
}

func (h flakyHeld) HighWater(ctx context.Context, key string) (time.Time, error) {
	return h.f.read(h.Held, key)
}

func (h flakyHeld) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	return h.f.write(h.Held, key, t)
}

func (f *flakyStore) read(marks idstore.HighWater, key string) (time.Time, error) {
	f.reads.Add(1)
	if key == probeKey {
		f.probeReads.Add(1)
	}
	if f.block != nil {
		<-f.block
	}
	if f.fail.Load() {
		return time.Time{}, errDown
	}
	return marks.HighWater(context.Background(), key)
}

func (f *flakyStore) write(marks idstore.HighWater, key string, t time.Time) (time.Time, error) {
	if f.fail.Load() || f.failWrites.Load() {
		return time.Time{}, errDown
	}
	return marks.AdvanceHighWater(context.Background(), key, t)
}

func getHealth(t *testing.T, h http.Handler) (int, healthReport) {
	t.Helper()
	resp := get(t, h, "/healthz")
	var rep healthReport
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&rep))
	return resp.StatusCode, rep
}

func TestHealth(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	store := &flakyStore{Log: newLog(t)}
	tc, sc := &claim{node: 7}, &claim{node: 35}
	s := newServer(t, Options{
		Store:     store,
		Clock:     clk,
		TraceID:   &traceid.Options{Claim: tc},
		Snowflake: &snowflake.Options{Claim: sc},
		// The probes read a real file; the default 2 s could run out on a
		// loaded machine. TestHealthStoreHangs checks the timeout.
		ProbeTimeout: testwait.Bound,
	})
	status, rep := getHealth(t, s)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, healthReport{Status: "ok", Checks: map[string]string{
		"traceid node claim": "ok", "snowflake node claim": "ok", "store": "ok",
	}}, rep)
	metrics := body(t, get(t, s, "/metrics"))
	assertMetric(t, metrics, `idkit_node_claim_held{scheme="snowflake"} 1`)
	assertMetric(t, metrics, `idkit_node_claim_node{scheme="snowflake"} 35`)
	assert.NotContains(t, metrics, "idkit_node_claims_lost_total{", "claims the caller gives are never taken again")

	// A lost claim fails the check at once.
	sc.lost.Store(true)
	status, rep = getHealth(t, s)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "fail", rep.Status)
	assert.Equal(t, "snowflake node claim: lost", rep.Error)
	assert.Equal(t, "ok", rep.Checks["traceid node claim"])
	assertMetric(t, body(t, get(t, s, "/metrics")), `idkit_node_claim_held{scheme="snowflake"} 0`)
	sc.lost.Store(false)

	// A failing store: the probe's answer is trusted for ProbeInterval.
	reads := store.reads.Load()
	store.fail.Store(true)
	status, _ = getHealth(t, s)
	assert.Equal(t, http.StatusOK, status, "probed less than a second ago")
	assert.Equal(t, reads, store.reads.Load())
	clk.Advance(time.Second)
	status, rep = getHealth(t, s)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "store: failing", rep.Error)
	assertMetric(t, body(t, get(t, s, "/metrics")), `idkit_store_errors_total{op="probe"} 1`)
	store.fail.Store(false)
	clk.Advance(time.Second)
	status, _ = getHealth(t, s)
	assert.Equal(t, http.StatusOK, status)
}

// TestHealthStoreCannotWrite: a store that reads but cannot write, as on
// a full disk, fails /healthz as soon as a generator's write fails, though
// the store answers the read probe; the probe then writes, and the server
// is ready again once the store writes again, with no request needed. A
// generator's renewal in the background may write, or fail, between the
// test's steps, and the checks its outcome would change are made only
// where the store's counts show it did not.
func TestHealthStoreCannotWrite(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	store := &flakyStore{Log: newLog(t)}
	s := newServer(t, Options{
		Store:        store,
		Clock:        clk,
		TraceID:      &traceid.Options{Node: 1},
		ProbeTimeout: testwait.Bound,
	})
	issue := func() *http.Response { // moves the clock while the request waits on it
		t.Helper()
		got := make(chan *http.Response, 1)
		go func() { got <- get(t, s, "/v1/traceid") }()
		for {
			select {
			case resp := <-got:
				return resp
			case <-time.After(time.Millisecond):
				if wake, ok := clk.NextWake(); ok {
					clk.Set(wake)
				}
			}
		}
	}
	first := issue()
	require.Equal(t, http.StatusOK, first.StatusCode)
	before := body(t, first)
	status, _ := getHealth(t, s)
	require.Equal(t, http.StatusOK, status)

	store.failWrites.Store(true)
	var resp *http.Response
	for range 10 { // the next renewal of the mark fails
		clk.Advance(time.Second)
		if resp = issue(); resp.StatusCode != http.StatusOK {
			break
		}
	}
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "issuing once writes fail")
	reads := store.reads.Load()
	status, rep := getHealth(t, s)
	assert.Equal(t, http.StatusServiceUnavailable, status, "within the probe interval, since a write failed after the last probe")
	assert.Equal(t, "store: failing", rep.Error)
	assert.Equal(t, reads, store.reads.Load(), "the probe wrote rather than read")
	mark, err := store.Log.HighWater(context.Background(), probeKey)
	require.NoError(t, err)
	assert.True(t, mark.IsZero(), "the failed probe wrote nothing")

	// The failed probe is trusted for ProbeInterval, unless a write of a
	// generator's renewal in the background failed after it: the probe
	// then runs again, and finds the store writing.
	store.failWrites.Store(false)
	s.health.mu.Lock()
	seen := s.health.seen
	s.health.mu.Unlock()
	failed, _ := s.store.lastWrite()
	status, _ = getHealth(t, s)
	if after, _ := s.store.lastWrite(); failed == seen && after == seen {
		assert.Equal(t, http.StatusServiceUnavailable, status, "the failed probe is trusted for ProbeInterval")
	}
	clk.Advance(time.Second)
	probeReads := store.probeReads.Load()
	status, rep = getHealth(t, s)
	assert.Equal(t, http.StatusOK, status, "ready again once the probe's write succeeds: %v", rep)
	mark, err = store.Log.HighWater(context.Background(), probeKey)
	require.NoError(t, err)
	// The probe writes its key unless a renewal in the background wrote
	// first, when it reads.
	if store.probeReads.Load() == probeReads {
		assert.False(t, mark.IsZero(), "the probe wrote its key")
	}
	resp = issue()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Greater(t, body(t, resp), before)

	// A read probe while writes succeed writes nothing.
	clk.Advance(time.Second)
	status, _ = getHealth(t, s)
	assert.Equal(t, http.StatusOK, status)
	again, err := store.Log.HighWater(context.Background(), probeKey)
	require.NoError(t, err)
	assert.Equal(t, mark, again)
}

func TestHealthStoreHangs(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	store := &flakyStore{Log: newLog(t)}
	s := newServer(t, Options{Store: store, Clock: clk, ObjectID: &objectid.Options{}, ProbeTimeout: 50 * time.Millisecond})
	store.block = make(chan struct{})
	status, rep := getHealth(t, s)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "store: no answer within 50ms", rep.Error)
	// The probe in flight is shared: a second check starts no other.
	status, _ = getHealth(t, s)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, int64(1), store.reads.Load())
	close(store.block)
	testwait.Until(t, func() bool { st, _ := getHealth(t, s); return st == http.StatusOK }, "healthy once the store answers")
}

func TestGeneratorFailure(t *testing.T) {
	t.Parallel()
	tc := &claim{node: 3}
	s := newServer(t, Options{TraceID: &traceid.Options{Claim: tc, NoWait: true}, Clock: clock.NewFake(start)})
	// A new generator without a store issues nothing in its first second.
	resp := get(t, s, "/v1/traceid")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, body(t, resp), "traceid: IDs used up for now")
}

func TestNodeLost(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	tc := &claim{node: 3}
	s := newServer(t, Options{TraceID: &traceid.Options{Claim: tc}, Clock: clk})
	clk.Advance(time.Second)
	require.Equal(t, http.StatusOK, get(t, s, "/v1/traceid").StatusCode)
	tc.lost.Store(true)
	clk.Advance(time.Second) // the claim is checked when a new second starts
	resp := get(t, s, "/v1/traceid?n=5")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, body(t, resp), "traceid: node claim lost")
}

func TestClockBackwardMetric(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	s := newServer(t, Options{TraceID: &traceid.Options{Node: 1}, Clock: clk})
	clk.Advance(2 * time.Second)
	require.Equal(t, http.StatusOK, get(t, s, "/v1/traceid").StatusCode)
	clk.Advance(-1500 * time.Millisecond)
	require.Equal(t, http.StatusOK, get(t, s, "/v1/traceid").StatusCode)
	metrics := body(t, get(t, s, "/metrics"))
	assertMetric(t, metrics, `idkit_clock_backward_total{scheme="traceid"} 1`)
	assertMetric(t, metrics, `idkit_waits_total{scheme="traceid"} 0`)
}

// TestShutdown checks that Shutdown lets a request in flight finish: the
// request waits on the fake clock for the generator's first second.
func TestShutdown(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	s := newServer(t, Options{TraceID: &traceid.Options{Node: 1}, Clock: clk})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	url := "http://" + ln.Addr().String()

	type result struct {
		status int
		body   string
		err    error
	}
	inFlight := make(chan result, 1)
	go func() {
		resp, err := http.Get(url + "/v1/traceid?n=3")
		if err != nil {
			inFlight <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		inFlight <- result{resp.StatusCode, string(b), err}
	}()
	testwait.Sleepers(t, clk, 1) // the request waits for the next second

	stopped := make(chan error, 1)
	go func() { stopped <- s.Shutdown(context.Background()) }()
	testwait.Until(t, func() bool {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		return err != nil
	}, "refusing connections once Shutdown began")
	st, rep := getHealth(t, s)
	assert.Equal(t, http.StatusServiceUnavailable, st)
	assert.Equal(t, "server: shutting down", rep.Error)
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	default:
	}

	clk.Advance(time.Second)
	r := testwait.Recv(t, inFlight, "answer to the request in flight")
	require.NoError(t, r.err)
	assert.Equal(t, http.StatusOK, r.status)
	var got struct{ IDs []string }
	require.NoError(t, json.Unmarshal([]byte(r.body), &got))
	assert.Len(t, got.IDs, 3)
	require.NoError(t, testwait.Recv(t, stopped, "return from Shutdown"))
	assert.ErrorIs(t, testwait.Recv(t, served, "return from Serve"), http.ErrServerClosed)
	assert.ErrorIs(t, s.Serve(ln), http.ErrServerClosed, "Serve after Shutdown")
}

// TestCloseStopsAtOnce: Close ends a request in flight without waiting
// for it, refuses connections, and closes the generators, so that the
// request's wait for the clock ends too and a later request is told the
// server is shutting down.
func TestCloseStopsAtOnce(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	s := newServer(t, Options{TraceID: &traceid.Options{Node: 1}, Clock: clk})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	inFlight := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/v1/traceid?n=3")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		inFlight <- err
	}()
	testwait.Sleepers(t, clk, 1) // the request waits for the next second

	require.NoError(t, s.Close())
	testwait.Recv(t, inFlight, "the end of the request in flight, the clock standing still")
	assert.ErrorIs(t, testwait.Recv(t, served, "return from Serve"), http.ErrServerClosed)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err == nil {
		c.Close()
	}
	assert.Error(t, err, "a connection after Close")
	testwait.Until(t, func() bool { return clk.Sleepers() == 0 }, "the handler's wait for the clock ended")
	st, rep := getHealth(t, s)
	assert.Equal(t, http.StatusServiceUnavailable, st)
	assert.Equal(t, "server: shutting down", rep.Error)
	resp := get(t, s, "/v1/traceid")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the generator is closed")
	assert.Contains(t, body(t, resp), "traceid: server shutting down")
	assert.NoError(t, s.Close(), "a second Close")
}

// TestShutdownPastItsDeadline: a Shutdown whose context ends with a
// request still in flight returns the context's error, and closes the
// generators and allocators all the same.
func TestShutdownPastItsDeadline(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	l := newLog(t)
	s, err := New(context.Background(), Options{TraceID: &traceid.Options{Node: 1}, Store: l, Blocks: l, Clock: clk,
		Segments: []segment.Options{{Tag: "t"}}})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go s.Serve(ln)
	inFlight := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/v1/traceid?n=3")
		if err == nil {
			resp.Body.Close()
		}
		inFlight <- err
	}()
	testwait.Sleepers(t, clk, 1) // the request waits for the next second

	expired, cancel := context.WithTimeout(context.Background(), -1)
	defer cancel()
	assert.ErrorIs(t, s.Shutdown(expired), context.DeadlineExceeded)
	resp := get(t, s, "/v1/segment/t")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "the segment allocator is closed")
	body, _ := io.ReadAll(resp.Body)
	assert.Contains(t, string(body), "server shutting down")
	clk.Advance(time.Second)
	testwait.Recv(t, inFlight, "the request in flight to end")
	assert.NoError(t, s.Shutdown(context.Background()), "a second Shutdown has nothing left to close")
}

// TestClientGone: a request whose client has gone takes no IDs; the next
// request gets the first ID of the block.
func TestClientGone(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{Blocks: newLog(t), Segments: []segment.Options{{Tag: "t"}}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/segment/t?n=1000", nil))
	assert.Empty(t, rec.Body.String(), "nothing written for a client that has gone")
	resp := get(t, s, "/v1/segment/t", "Accept", "text/plain")
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "1\n", string(body), "the gone client's request took no IDs")
}

// TestClientGoneDuringAWait: a request waiting for the next second ends
// when its client goes; the generator serves the next request.
func TestClientGoneDuringAWait(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	s := newServer(t, Options{TraceID: &traceid.Options{Node: 1}, Clock: clk})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	rec := httptest.NewRecorder()
	go func() {
		defer close(done)
		s.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/traceid?n=3", nil))
	}()
	testwait.Sleepers(t, clk, 1) // a fresh generator waits for a fresh second
	cancel()
	testwait.Recv(t, done, "the request's end once its client went")
	assert.Empty(t, rec.Body.String(), "nothing written for a client that has gone")
	clk.Advance(time.Second)
	resp := get(t, s, "/v1/traceid?n=3")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// TestTimeouts checks that a client that never finishes its headers is cut
// off after ReadHeaderTimeout, and that oversized headers are refused.
// ReadTimeout is an hour, so that only ReadHeaderTimeout can cut the
// client off within the test's wait.
func TestTimeouts(t *testing.T) {
	t.Parallel()
	const readHeaderTimeout = 100 * time.Millisecond
	s := newServer(t, Options{ObjectID: &objectid.Options{}, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: time.Hour, MaxHeaderBytes: 1024})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go s.Serve(ln)
	t.Cleanup(func() { s.Shutdown(context.Background()) })

	dialed := time.Now()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("GET /v1/objectid HTTP/1.1\r\nHost: x\r\n"))
	require.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(testwait.Bound))
	_, err = io.ReadAll(c)
	assert.NoError(t, err, "the server closes the connection")
	assert.GreaterOrEqual(t, time.Since(dialed), readHeaderTimeout, "not before ReadHeaderTimeout")

	c2, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer c2.Close()
	// The server reads up to 4096 bytes beyond MaxHeaderBytes.
	_, err = c2.Write([]byte("GET /v1/objectid HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8192) + "\r\n\r\n"))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c2), nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
}

// TestConcurrentRequests issues IDs from many goroutines and finds no
// duplicate.
func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	s := newServer(t, allSchemes(t))
	for _, name := range s.Schemes() {
		var mu sync.Mutex
		seen := make(map[string]bool)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 20 {
					resp := get(t, s, "/v1/"+name+"?n=100", "Accept", "text/plain")
					if !assert.Equal(t, http.StatusOK, resp.StatusCode) {
						return
					}
					ids := strings.Fields(body(t, resp))
					mu.Lock()
					for _, id := range ids {
						assert.False(t, seen[id], "%s %s repeated", name, id)
						seen[id] = true
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		assert.Len(t, seen, 8*20*100, name)
	}
}

// assertMetric checks that the metrics text has the line want, and shows
// the lines of the same metric if not.
func assertMetric(t *testing.T, metrics, want string) {
	t.Helper()
	if strings.Contains(metrics, want+"\n") {
		return
	}
	name, _, _ := strings.Cut(want, "{")
	var lines []string
	for line := range strings.Lines(metrics) {
		if strings.HasPrefix(line, name) {
			lines = append(lines, line)
		}
	}
	t.Errorf("metrics lack %s; they have:\n%s", want, strings.Join(lines, ""))
}

// secretStore is a launch log whose calls fail, while fail is set, with an
// error naming a file and a host, as a real store's errors do.
type secretStore struct {
	*launchlog.Log
	fail atomic.Bool
}

const secret = "/var/lib/idkit/secret-7f3a.db via https://10.9.8.7:2379"

var errSecret = errors.New("open " + secret + ": connection refused")

func (s *secretStore) HighWater(ctx context.Context, key string) (time.Time, error) {
	if s.fail.Load() {
		return time.Time{}, errSecret
	}
	return s.Log.HighWater(ctx, key)
}

func (s *secretStore) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	if s.fail.Load() {
		return time.Time{}, errSecret
	}
	return s.Log.AdvanceHighWater(ctx, key, t)
}

// Hold holds key in the log, and fails the hold's reads and writes as the
// store's.
func (s *secretStore) Hold(ctx context.Context, key string) (idstore.Held, error) {
	h, err := s.Log.Hold(ctx, key)
	if err != nil {
		return nil, err
	}
	return secretHeld{Held: h, s: s}, nil
}

type secretHeld struct {
	idstore.Held
	s *secretStore
}

func (h secretHeld) HighWater(ctx context.Context, key string) (time.Time, error) {
	if h.s.fail.Load() {
		return time.Time{}, errSecret
	}
	return h.Held.HighWater(ctx, key)
}

func (h secretHeld) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	if h.s.fail.Load() {
		return time.Time{}, errSecret
	}
	return h.Held.AdvanceHighWater(ctx, key, t)
}

func (s *secretStore) Get(_ context.Context, id int) (idstore.Launch, error) {
	if s.fail.Load() {
		return idstore.Launch{}, errSecret
	}
	return s.Log.Get(context.Background(), id)
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestAnswersTellNoInternals: with the store failing, the 503 answers of
// /v1, /readyz and an inspection name the kind of failure, never the
// store's error (a file, a host), which goes to the server's log; /livez
// stays 200.
func TestAnswersTellNoInternals(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	st := &secretStore{Log: newLog(t)}
	var logs syncBuffer
	s := newServer(t, Options{Store: st, Launches: st, Clock: clk,
		TraceID: &traceid.Options{Node: 1}, DecimalID: &decimalid.Options{Launch: 1},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	clk.Advance(time.Second)
	id := strings.Trim(body(t, get(t, s, "/v1/decimalid", "Accept", "text/plain")), "\n")
	require.Equal(t, http.StatusOK, get(t, s, "/v1/decimalid/"+id).StatusCode)

	st.fail.Store(true)
	clk.Advance(2 * time.Second) // past the lease: the next ID needs the store
	for _, tt := range []struct {
		path, want string
	}{
		{"/v1/traceid", "traceid: store unavailable; retry later"},
		{"/readyz", "store: failing"},
		{"/healthz", "store: failing"},
		{"/v1/decimalid/" + id, "launch log unavailable"},
	} {
		resp := get(t, s, tt.path)
		b := body(t, resp)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, tt.path)
		assert.Contains(t, b, tt.want, tt.path)
		assert.NotContains(t, b, "secret-7f3a", tt.path)
		assert.NotContains(t, b, "10.9.8.7", tt.path)
	}
	live := get(t, s, "/livez")
	assert.Equal(t, http.StatusOK, live.StatusCode, "a store outage is no reason to restart")
	assert.JSONEq(t, `{"status":"ok"}`, body(t, live))
	assert.Contains(t, logs.String(), "secret-7f3a", "the details are in the log")
	assert.Equal(t, 1, strings.Count(logs.String(), "readiness check failed"), "a failure logged once, not per probe")

	st.fail.Store(false)
	clk.Advance(2 * time.Second)
	assert.Equal(t, http.StatusOK, get(t, s, "/readyz").StatusCode)
}

// TestLaunchesOnlyWhenAsked: a DecimalId's inspection shows its launch's
// record (ticket, by) only with Options.Launches.
func TestLaunchesOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	for _, launches := range []Launches{nil, l} {
		s := newServer(t, Options{Store: l, Launches: launches, DecimalID: &decimalid.Options{Launch: 1}})
		id := strings.Trim(body(t, get(t, s, "/v1/decimalid", "Accept", "text/plain")), "\n")
		b := body(t, get(t, s, "/v1/decimalid/"+id))
		if launches == nil {
			assert.NotContains(t, b, "REL-1", "the launch record without Options.Launches")
		} else {
			assert.Contains(t, b, "REL-1")
		}
	}
}

// downBlocks reserves blocks of 10 until it is down.
type downBlocks struct {
	mu   sync.Mutex
	last int64
	down bool
}

func (d *downBlocks) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return segment.Block{}, errSecret
	}
	d.last += 10
	return segment.Block{First: d.last - 9, Last: d.last}, nil
}

// TestBlocksDown: a block store that goes down gives 503 on its tags
// only, once the blocks in hand run out, and other schemes go on; /readyz
// is 503 from the first failed reservation, naming the tag's store but
// not its error, and 200 again once the store answers the tag's retry.
func TestBlocksDown(t *testing.T) {
	t.Parallel()
	blocks := &downBlocks{}
	s := newServer(t, Options{Blocks: blocks, ObjectID: &objectid.Options{},
		Segments: []segment.Options{{Tag: "t", Step: 10, MinStep: 10, MaxStep: 10, Timeout: testwait.Bound}}})
	require.Equal(t, http.StatusOK, get(t, s, "/v1/segment/t?n=5").StatusCode)
	testwait.Until(t, func() bool {
		blocks.mu.Lock()
		defer blocks.mu.Unlock()
		return blocks.last == 20
	}, "the next block reserved ahead")
	blocks.mu.Lock()
	blocks.down = true
	blocks.mu.Unlock()
	require.Equal(t, http.StatusOK, get(t, s, "/v1/segment/t?n=15").StatusCode, "the blocks in hand")
	resp := get(t, s, "/v1/segment/t")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	b := body(t, resp)
	assert.Contains(t, b, "segment/t: store unavailable")
	assert.NotContains(t, b, "secret-7f3a")
	assert.Equal(t, http.StatusOK, get(t, s, "/v1/objectid").StatusCode, "other schemes go on")
	resp = get(t, s, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	b = body(t, resp)
	assert.Contains(t, b, `"segment/t store":"failing"`)
	assert.NotContains(t, b, "secret-7f3a")

	blocks.mu.Lock()
	blocks.down = false
	blocks.mu.Unlock()
	testwait.Until(t, func() bool { return get(t, s, "/readyz").StatusCode == http.StatusOK }, "readyz 200 once the store is back")
	assert.Equal(t, http.StatusOK, get(t, s, "/v1/segment/t").StatusCode)
}

// TestNewRefusesAHeldNode: a server holds its traceid and snowflake nodes
// in the launch log until Shutdown; a second server for the same nodes on
// the log fails to start, with an error of kind idkit.ErrHeld.
func TestNewRefusesAHeldNode(t *testing.T) {
	t.Parallel()
	o := allSchemes(t)
	first, err := New(context.Background(), o)
	require.NoError(t, err)
	for _, only := range []Options{
		{Store: o.Store, TraceID: &traceid.Options{Node: 7}},
		{Store: o.Store, Snowflake: &snowflake.Options{Node: map[string]int64{"datacenter": 1, "worker": 3}}},
	} {
		_, err = New(context.Background(), only)
		assert.ErrorIs(t, err, idkit.ErrHeld)
	}
	other, err := New(context.Background(), Options{Store: o.Store, TraceID: &traceid.Options{Node: 8}})
	require.NoError(t, err, "another node is free")
	require.NoError(t, other.Shutdown(context.Background()))

	require.NoError(t, first.Shutdown(context.Background()))
	again := newServer(t, Options{Store: o.Store, TraceID: &traceid.Options{Node: 7}})
	assert.Equal(t, []string{"traceid"}, again.Schemes(), "the node is free once the first server shut down")
}
