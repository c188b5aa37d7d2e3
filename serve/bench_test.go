package serve

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/internal/testkit/campaigns/loadgen"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// discard is a ResponseWriter that keeps nothing, so that a benchmark
// measures the handler alone.
type discard struct {
	h    http.Header
	n    int
	code int // the last status written
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }
func (d *discard) WriteHeader(code int)        { d.code = code }

// benchOptions serves every scheme, decimalid with generator ids from
// memory.
func benchOptions(b *testing.B) Options {
	b.Helper()
	return Options{
		TraceID:   &traceid.Options{Node: 7},
		Snowflake: &snowflake.Options{Node: map[string]int64{"datacenter": 1, "worker": 3}},
		DecimalID: &decimalid.Options{Launch: 1, Source: &counterSource{}},
		ObjectID:  &objectid.Options{},
	}
}

// counterSource hands out generator ids from memory.
type counterSource struct{ next int }

func (c *counterSource) NextGenerator(context.Context, int) (int, error) {
	c.next++
	return c.next, nil
}

// BenchmarkHandler measures one request through ServeHTTP, without the
// network: ns/op is per request, ns/ID per ID.
func BenchmarkHandler(b *testing.B) {
	s, err := New(context.Background(), benchOptions(b))
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"traceid", "snowflake", "decimalid", "objectid"} {
		for _, n := range []int{1, 1000} {
			b.Run(name+"/n="+strconv.Itoa(n), func(b *testing.B) {
				r, _ := http.NewRequest(http.MethodGet, "/v1/"+name+"?n="+strconv.Itoa(n), nil)
				w := &discard{h: make(http.Header)}
				// Rate-limited schemes wait for the next second or tick
				// once a node's IDs run out; the figures include that.
				b.ReportAllocs()
				for b.Loop() {
					clear(w.h)
					s.ServeHTTP(w, r)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/ID")
			})
		}
	}
}

// BenchmarkHandlerShipped measures one single-TraceId request through
// ServeHTTP as BenchmarkFloor's server answers it, a bearer token checked
// and the limits counted, from b.RunParallel's goroutines under one
// client: what serve's handler adds to net/http's work, without the
// network, and how it shares the cores. Compare two builds with it before
// BenchmarkFloor, whose rounds spread by more than a microsecond.
func BenchmarkHandlerShipped(b *testing.B) {
	tokenFile := filepath.Join(b.TempDir(), "tokens")
	testcert.WriteFile(b, tokenFile, []byte("bench "+benchToken+"\n"))
	s, err := New(context.Background(), Options{
		TraceID:   &traceid.Options{Node: 7},
		TokenFile: tokenFile,
		Limits:    Limits{IDsPerSecond: 1e9, RequestsPerSecond: 1e9},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	// A new generator's first ID waits for a fresh second, and a request
	// refused would measure the refusal: one request first, checked.
	r := httptest.NewRequest(http.MethodGet, "/v1/traceid", nil)
	r.Header.Set("Authorization", "Bearer "+benchToken)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		b.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var refused atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := httptest.NewRequest(http.MethodGet, "/v1/traceid", nil)
		r.Header.Set("Authorization", "Bearer "+benchToken)
		w := &discard{h: make(http.Header)}
		for pb.Next() {
			clear(w.h)
			s.ServeHTTP(w, r)
			if w.code != http.StatusOK {
				refused.Add(1)
			}
		}
	})
	if n := refused.Load(); n > 0 {
		b.Fatalf("%d of %d requests refused: the figures would measure the refusals", n, b.N)
	}
}

// BenchmarkLoopback runs the server on a loopback port and loads it with
// package loadgen at saturation from 4 connections in the same process;
// it reports requests and IDs a second and latency percentiles. For the
// figures in BENCHMARKS the server runs as its own process (idkit serve)
// and loadgen as another.
func BenchmarkLoopback(b *testing.B) {
	for _, tc := range []struct {
		name string
		n    int
	}{{"traceid", 1}, {"decimalid", 1}, {"decimalid", 1000}, {"traceid", 1000}} {
		b.Run(tc.name+"/n="+strconv.Itoa(tc.n), func(b *testing.B) {
			s, err := New(context.Background(), benchOptions(b))
			if err != nil {
				b.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			go s.Serve(ln)
			defer s.Shutdown(context.Background())
			var total loadgen.Result
			for b.Loop() {
				r, err := loadgen.Run(context.Background(), loadgen.Config{
					Addr: ln.Addr().String(), Path: "/v1/" + tc.name + "?" + url.Values{"n": {strconv.Itoa(tc.n)}}.Encode(),
					Conns: 4, Duration: time.Second, Warmup: 200 * time.Millisecond, WantIDs: tc.n,
				})
				if err != nil {
					b.Fatal(err)
				}
				if r.Errors > 0 {
					b.Fatal(r.FirstErr)
				}
				total.Add(r)
			}
			b.ReportMetric(total.RequestsPerSecond(), "req/s")
			b.ReportMetric(total.IDsPerSecond(), "IDs/s")
			b.ReportMetric(float64(total.Latency.Quantile(0.5).Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(total.Latency.Quantile(0.99).Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(total.Latency.Quantile(0.999).Nanoseconds()), "p999-ns")
		})
	}
}
