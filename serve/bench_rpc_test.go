package serve

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/idkit/idkit/internal/testkit/campaigns/loadgen"
	idkitv1 "github.com/idkit/idkit/proto/idkit/v1"
	"github.com/idkit/idkit/proto/idkit/v1/idkitv1connect"
	"github.com/idkit/idkit/traceid"
)

// BenchmarkRPC puts gRPC beside HTTP/JSON in one run, each against a
// server of its own on a loopback port: single-TraceId calls at 10,000 a
// second (open loop, 32 callers; latency counts from when a call was due)
// and 1,000-TraceId calls at saturation (4 callers). It reports latency
// percentiles, calls and IDs a second, and CPU per call; server and load
// share the process, so cpu-µs/req counts both. HTTP/JSON's load is
// package loadgen's own HTTP/1.1 client; gRPC's is grpc-go over h2c, one
// connection, asking for the binary form (fixed64), which is what a gRPC
// client would read.
func BenchmarkRPC(b *testing.B) {
	for _, tc := range []struct {
		n     int
		rate  float64
		conns int
	}{{1, 10_000, 32}, {1000, 0, 4}} {
		for _, proto := range []string{"http", "grpc"} {
			b.Run("n="+strconv.Itoa(tc.n)+"/"+proto, func(b *testing.B) {
				s, err := New(context.Background(), Options{TraceID: &traceid.Options{Node: 7}, Limits: Limits{IDsPerSecond: -1, RequestsPerSecond: -1, NodeIDsPerSecond: -1}})
				if err != nil {
					b.Fatal(err)
				}
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				go s.Serve(ln)
				defer s.Shutdown(context.Background())
				warm(b, s, "")
				addr := ln.Addr().String()
				load := func() (*loadgen.Result, error) {
					return loadgen.Run(context.Background(), loadgen.Config{Addr: addr, Path: "/v1/traceid?n=" + strconv.Itoa(tc.n),
						Rate: tc.rate, Conns: tc.conns, Duration: 2 * time.Second, Warmup: 500 * time.Millisecond, WantIDs: tc.n})
				}
				if proto == "grpc" {
					conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
					if err != nil {
						b.Fatal(err)
					}
					defer conn.Close()
					load = func() (*loadgen.Result, error) {
						return grpcLoad(context.Background(), conn, tc.n, tc.rate, tc.conns, 2*time.Second, 500*time.Millisecond)
					}
				}
				b.ReportMetric(measure(b, load).IDsPerSecond(), "IDs/s")
			})
		}
	}
}

// grpcLoad calls Next(traceid, n) through conn from callers goroutines,
// scheduled and counted by loadgen.Run as it loads the HTTP API: at rate
// calls a second in all (open loop; latency from when a call was due), or
// back to back when rate is 0, for warmup and then duration.
func grpcLoad(ctx context.Context, conn *grpc.ClientConn, n int, rate float64, callers int, duration, warmup time.Duration) (*loadgen.Result, error) {
	count := int64(n)
	req := &idkitv1.NextRequest{Scheme: "traceid", N: &count, Format: idkitv1.Format_FORMAT_BINARY}
	return loadgen.Run(ctx, loadgen.Config{
		Rate: rate, Conns: callers, Duration: duration, Warmup: warmup, WantIDs: n,
		Call: func(ctx context.Context) (int, error) {
			resp := new(idkitv1.NextResponse)
			err := conn.Invoke(ctx, idkitv1connect.IDServiceNextProcedure, req, resp)
			return len(resp.Values), err
		},
	})
}
