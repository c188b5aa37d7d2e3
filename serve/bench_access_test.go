package serve

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/testkit/campaigns/loadgen"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/traceid"
)

// cpuTime returns the CPU time the process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// warm takes one TraceId from s, which waits for the fresh second a new
// generator starts in, so that the wait is not measured.
func warm(b *testing.B, s *Server, token string) {
	r := httptest.NewRequest(http.MethodGet, "/v1/traceid", nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		b.Fatalf("warming up: status %d: %s", rec.Code, rec.Body)
	}
}

// measure runs load once per benchmark loop and reports the runs' sum
// with the CPU the process spent on them (server and load alike).
func measure(b *testing.B, load func() (*loadgen.Result, error)) *loadgen.Result {
	var total loadgen.Result
	var cpu time.Duration
	for b.Loop() {
		c0 := cpuTime(b)
		r, err := load()
		if err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime(b) - c0
		if r.Errors > 0 {
			b.Fatal(r.FirstErr)
		}
		total.Add(r)
	}
	report(b, &total, cpu)
	return &total
}

// report adds a run's latency percentiles and CPU per request.
func report(b *testing.B, total *loadgen.Result, cpu time.Duration) {
	b.ReportMetric(total.RequestsPerSecond(), "req/s")
	b.ReportMetric(float64(total.Latency.Quantile(0.5).Microseconds()), "p50-µs")
	b.ReportMetric(float64(total.Latency.Quantile(0.99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(total.Latency.Quantile(0.999).Microseconds()), "p999-µs")
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(total.Sent, 1)), "cpu-µs/req")
}

// BenchmarkTLS loads single-TraceId requests at 10,000 a second, open
// loop over 32 connections, against the server over plain HTTP, over TLS,
// and over TLS with a bearer token. Server and load share the process, so
// cpu-µs/req counts both.
func BenchmarkTLS(b *testing.B) {
	dir := b.TempDir()
	ca := testcert.NewCA(b)
	certFile, keyFile := ca.Issue(b, dir, "server", 2, true)
	tokenFile := filepath.Join(dir, "tokens")
	const token = "bench-0123456789abcdef"
	testcert.WriteFile(b, tokenFile, []byte("bench "+token+"\n"))
	for _, tc := range []struct {
		name  string
		o     Options
		tls   bool
		token string
	}{
		{"http", Options{}, false, ""},
		{"tls", Options{TLS: &TLSFiles{CertFile: certFile, KeyFile: keyFile}}, true, ""},
		{"tls+token", Options{TLS: &TLSFiles{CertFile: certFile, KeyFile: keyFile}, TokenFile: tokenFile}, true, token},
	} {
		b.Run(tc.name, func(b *testing.B) {
			o := tc.o
			o.TraceID = &traceid.Options{Node: 7}
			o.Limits = Limits{IDsPerSecond: -1, RequestsPerSecond: -1, NodeIDsPerSecond: -1}
			s, err := New(context.Background(), o)
			if err != nil {
				b.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			go s.Serve(ln)
			defer s.Shutdown(context.Background())
			warm(b, s, tc.token)
			cfg := loadgen.Config{Addr: ln.Addr().String(), Path: "/v1/traceid?n=1", Token: tc.token,
				Rate: 10_000, Conns: 32, Duration: 2 * time.Second, Warmup: 500 * time.Millisecond, WantIDs: 1}
			if tc.tls {
				cfg.TLS = &tls.Config{RootCAs: ca.Pool()}
			}
			measure(b, func() (*loadgen.Result, error) { return loadgen.Run(context.Background(), cfg) })
		})
	}
}

// BenchmarkGreedyClient measures a polite client's single-ID requests (1,000
// a second over 4 connections) alone, then beside a greedy client that
// asks for 10,000 TraceIds a request as fast as 4 connections allow, under
// the default limits. The greedy client gets 429s; the polite one's p99
// should stay within twice its p99 alone.
func BenchmarkGreedyClient(b *testing.B) {
	tokenFile := filepath.Join(b.TempDir(), "tokens")
	const greedy, polite = "greedy-0123456789abcdef", "polite-0123456789abcdef"
	testcert.WriteFile(b, tokenFile, []byte("greedy "+greedy+"\npolite "+polite+"\n"))
	for _, withGreedy := range []bool{false, true} {
		name := "alone"
		if withGreedy {
			name = "beside-greedy"
		}
		b.Run(name, func(b *testing.B) {
			s, err := New(context.Background(), Options{TraceID: &traceid.Options{Node: 7}, TokenFile: tokenFile})
			if err != nil {
				b.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			go s.Serve(ln)
			defer s.Shutdown(context.Background())
			warm(b, s, polite)
			addr := ln.Addr().String()
			var total, greed loadgen.Result
			for b.Loop() {
				var wg sync.WaitGroup
				if withGreedy {
					wg.Go(func() {
						r, err := loadgen.Run(context.Background(), loadgen.Config{Addr: addr, Path: "/v1/traceid?n=10000", Token: greedy,
							Conns: 4, Duration: 2500 * time.Millisecond, Warmup: 0})
						if err == nil {
							greed.Add(r)
						}
					})
				}
				r, err := loadgen.Run(context.Background(), loadgen.Config{Addr: addr, Path: "/v1/traceid?n=1", Token: polite,
					Rate: 1000, Conns: 4, Duration: 2 * time.Second, Warmup: 250 * time.Millisecond, WantIDs: 1})
				wg.Wait()
				if err != nil {
					b.Fatal(err)
				}
				if r.Errors > 0 {
					b.Fatal(r.FirstErr)
				}
				total.Add(r)
			}
			report(b, &total, 0)
			if withGreedy {
				b.ReportMetric(float64(greed.Requests), "greedy-200s")
				b.ReportMetric(float64(greed.Errors), "greedy-refused")
			}
		})
	}
}
