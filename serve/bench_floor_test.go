package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/idkit/idkit/internal/testkit/campaigns/loadgen"
	"github.com/idkit/idkit/internal/testkit/testcert"
	idkitv1 "github.com/idkit/idkit/proto/idkit/v1"
	"github.com/idkit/idkit/proto/idkit/v1/idkitv1connect"
	"github.com/idkit/idkit/traceid"
)

// benchToken is the bearer token of BenchmarkFloor's load.
const benchToken = "bench-0123456789abcdef"

// floorConns is the concurrency of BenchmarkFloor's loads: connections
// over HTTP/1.1, streams on one connection over HTTP/2 and gRPC.
const floorConns = 8

// floorRate is the requests a second of BenchmarkFloor's loads at a fixed
// rate, below what either protocol reaches at saturation on two cores:
// there the server does the same work a second over HTTP/2 and gRPC, so
// that its CPU a request does not depend on how much of the host the
// load's own client takes.
const floorRate = 4000

// BenchmarkFloor puts the server beside a floor, each in a process of its
// own (this test binary started again, see benchServerMain), under the
// same load from this process: single-TraceId requests at saturation from
// floorConns connections or streams, over TLS with a bearer token, with
// the same certificate. The floor is the least a Go TLS server can do: a
// net/http handler that answers every request with the same one-ID JSON
// body (a gRPC call with the same one-ID message) and checks no token.
// Each sub-benchmark reports requests a second, the CPU time its server
// process spent a request (server-cpu-µs/req), which the load does not
// share, and the write system calls it made a request
// (server-writes/req, on Linux):
//
//   - h1/floor, h1/serve: HTTP/1.1 (package loadgen's client);
//   - h1/floor-timeouts: the floor with serve's default timeouts, which
//     set a connection's deadlines at each request;
//   - h2/floor, h2/serve: HTTP/2, GET /v1/traceid (net/http's client);
//   - grpc/floor, grpc/serve: gRPC Next(traceid) in its default form
//     (grpc-go); the floor reads the request and sends one fixed message
//     and the status trailer through net/http, as connect does;
//   - h2/floor/rate=4000, h2/serve/rate=4000, grpc/floor/rate=4000,
//     grpc/serve/rate=4000: the same at floorRate requests a second, for
//     the server CPU of a call; the floors' ratio is the least a gRPC call
//     costs over HTTP/2 JSON in net/http, whatever the handler.
//
// Every sub-benchmark's loop is one run of 2 s after a 0.5 s warm-up; run
// it with -benchtime 1x, several times in turn, for rounds that interleave
// the floor and the server. IDKIT_BENCH_CPUPROFILE=DIR has each server
// process write its CPU profile to DIR/NAME.pprof.
func BenchmarkFloor(b *testing.B) {
	dir := b.TempDir()
	ca := testcert.NewCA(b)
	certFile, keyFile := ca.Issue(b, dir, "server", 2, true)
	token := benchToken
	tokenFile := filepath.Join(dir, "tokens")
	testcert.WriteFile(b, tokenFile, []byte("bench "+token+"\n"))
	clientTLS := &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1"}

	for _, tc := range []struct {
		proto, server string
		rate          float64
	}{
		{"h1", "floor", 0}, {"h1", "floor-timeouts", 0}, {"h1", "serve", 0},
		{"h2", "floor", 0}, {"h2", "serve", 0},
		{"grpc", "floor", 0}, {"grpc", "serve", 0},
		{"h2", "floor", floorRate}, {"h2", "serve", floorRate},
		{"grpc", "floor", floorRate}, {"grpc", "serve", floorRate},
	} {
		name := tc.proto + "/" + tc.server
		if tc.rate > 0 {
			name += fmt.Sprintf("/rate=%.0f", tc.rate)
		}
		b.Run(name, func(b *testing.B) {
			p := startBenchServer(b, tc.server, certFile, keyFile, tokenFile, strings.ReplaceAll(name, "/", "-"))
			cfg := loadgen.Config{Addr: p.addr, Path: "/v1/traceid?n=1", Token: token, TLS: clientTLS,
				Conns: floorConns, Rate: tc.rate, Duration: 2 * time.Second, Warmup: 500 * time.Millisecond, WantIDs: 1}
			switch tc.proto {
			case "h2":
				cfg.Call = h2Call(b, "https://"+p.addr+cfg.Path, token, clientTLS)
			case "grpc":
				cfg.Call = grpcCall(b, p.addr, token, clientTLS)
			}
			var total loadgen.Result
			var cpu time.Duration
			var writes int64
			for b.Loop() {
				c0, w0 := p.usage(b)
				r, err := loadgen.Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				c1, w1 := p.usage(b)
				cpu, writes = cpu+c1-c0, writes+w1-w0
				if r.Errors > 0 {
					b.Fatal(r.FirstErr)
				}
				total.Add(r)
			}
			sent := float64(max(total.Sent, 1))
			b.ReportMetric(total.RequestsPerSecond(), "req/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/sent, "server-cpu-µs/req")
			b.ReportMetric(float64(writes)/sent, "server-writes/req")
			b.ReportMetric(float64(total.Latency.Quantile(0.99).Microseconds()), "p99-µs")
		})
	}
}

// h2Call returns a call of url over HTTP/2 with TLS, with token.
func h2Call(b *testing.B, url, token string, cfg *tls.Config) func(context.Context) (int, error) {
	tr := &http.Transport{TLSClientConfig: cfg, Protocols: new(http.Protocols)}
	tr.Protocols.SetHTTP2(true)
	b.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr}
	auth := "Bearer " + token
	return func(ctx context.Context) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", auth)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
			return 0, fmt.Errorf("%s %s: %s", resp.Proto, resp.Status, body)
		}
		return (bytes.Count(body, []byte{'"'}) - 2) / 2, nil
	}
}

// grpcCall returns a call of Next(traceid) over gRPC with TLS, with token.
func grpcCall(b *testing.B, addr, token string, cfg *tls.Config) func(context.Context) (int, error) {
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	req := &idkitv1.NextRequest{Scheme: "traceid"}
	return func(ctx context.Context) (int, error) {
		resp := new(idkitv1.NextResponse)
		err := conn.Invoke(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), idkitv1connect.IDServiceNextProcedure, req, resp)
		return len(resp.Values), err
	}
}

// benchProcess is a server process of BenchmarkFloor.
type benchProcess struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	addr string
}

// The environment of a server process: which server, and its files.
const (
	benchServerEnv  = "IDKIT_BENCH_SERVER" // "serve", "floor" or "floor-timeouts"
	benchFilesEnv   = "IDKIT_BENCH_FILES"  // certificate, key and token file, separated by newlines
	benchProfileEnv = "IDKIT_BENCH_CPUPROFILE"
	benchNameEnv    = "IDKIT_BENCH_NAME"
)

// startBenchServer starts this test binary as a server process and waits
// until it listens; the benchmark's cleanup stops it.
func startBenchServer(b *testing.B, server, certFile, keyFile, tokenFile, name string) *benchProcess {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run", "^$")
	cmd.Env = append(os.Environ(), benchServerEnv+"="+server, benchFilesEnv+"="+certFile+"\n"+keyFile+"\n"+tokenFile, benchNameEnv+"="+name)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p := &benchProcess{cmd: cmd, in: in, out: bufio.NewReader(out)}
	b.Cleanup(func() {
		in.Close() // the process stops at the end of its input
		if err := cmd.Wait(); err != nil {
			b.Errorf("server process: %v", err)
		}
	})
	p.addr = p.line(b)
	return p
}

// line reads the process's next line of output.
func (p *benchProcess) line(b *testing.B) string {
	s, err := p.out.ReadString('\n')
	if err != nil {
		b.Fatalf("server process: %v", err)
	}
	return strings.TrimSpace(s)
}

// usage returns the CPU time the process has spent and the write system
// calls it has made (0 where the system does not say).
func (p *benchProcess) usage(b *testing.B) (time.Duration, int64) {
	if _, err := io.WriteString(p.in, "cpu\n"); err != nil {
		b.Fatal(err)
	}
	var ns, writes int64
	if _, err := fmt.Sscan(p.line(b), &ns, &writes); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ns), writes
}

// benchServerMain runs the server process of BenchmarkFloor when the
// environment names one, and reports whether it did: it listens on a
// loopback port, prints the address, answers each line "cpu" with its CPU
// time in nanoseconds, and stops at the end of its input.
func benchServerMain() (ran bool, code int) {
	server := os.Getenv(benchServerEnv)
	if server == "" {
		return false, 0
	}
	if err := runBenchServer(server); err != nil {
		fmt.Fprintln(os.Stderr, "server process:", err)
		return true, 1
	}
	return true, 0
}

func runBenchServer(server string) error {
	files := strings.Split(os.Getenv(benchFilesEnv), "\n")
	if len(files) != 3 {
		return fmt.Errorf("%s names %d files, want 3", benchFilesEnv, len(files))
	}
	if dir := os.Getenv(benchProfileEnv); dir != "" {
		f, err := os.Create(filepath.Join(dir, os.Getenv(benchNameEnv)+".pprof"))
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	var stop func() error
	switch server {
	case "floor":
		stop, err = floorServer(ln, files[0], files[1], false)
	case "floor-timeouts":
		stop, err = floorServer(ln, files[0], files[1], true)
	case "serve":
		stop, err = idkitServer(ln, files[0], files[1], files[2])
	default:
		err = fmt.Errorf("%s=%s, want floor, floor-timeouts or serve", benchServerEnv, server)
	}
	if err != nil {
		return err
	}
	fmt.Println(ln.Addr())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return err
		}
		fmt.Println(ru.Utime.Nano()+ru.Stime.Nano(), writeCalls())
	}
	return stop()
}

// writeCalls returns the write system calls the process has made, from
// Linux's /proc/self/io, or 0 where that is not to be read.
func writeCalls() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// floorServer is the floor: net/http over TLS, one fixed answer; with
// timeouts, serve's default ReadHeaderTimeout, ReadTimeout, WriteTimeout
// and IdleTimeout. A gRPC call (Content-Type application/grpc) gets the
// least a gRPC answer is: its request read, one fixed message and the
// status as a trailer, as the protocol has every server send them.
func floorServer(ln net.Listener, certFile, keyFile string, timeouts bool) (stop func() error, err error) {
	body := []byte(`{"ids":["4693555929138855937"]}` + "\n")
	msg, err := proto.Marshal(&idkitv1.NextResponse{Values: []uint64{4693555929138855937}})
	if err != nil {
		return nil, err
	}
	message := append([]byte{0, 0, 0, 0, byte(len(msg))}, msg...) // uncompressed, its length, the message
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc") {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/grpc")
			w.Header().Set("Trailer", "Grpc-Status")
			w.Write(message)
			w.Header().Set("Grpc-Status", "0")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})}
	if timeouts {
		hs.ReadHeaderTimeout, hs.ReadTimeout, hs.WriteTimeout, hs.IdleTimeout = 5*time.Second, 10*time.Second, 30*time.Second, 120*time.Second
	}
	go hs.ServeTLS(ln, certFile, keyFile)
	return hs.Close, nil
}

// idkitServer is the server as it ships, over TLS with a token file, with
// limits too high to refuse the load but counted for every request.
func idkitServer(ln net.Listener, certFile, keyFile, tokenFile string) (stop func() error, err error) {
	s, err := New(context.Background(), Options{
		TraceID:   &traceid.Options{Node: 7},
		TLS:       &TLSFiles{CertFile: certFile, KeyFile: keyFile},
		TokenFile: tokenFile,
		Limits:    Limits{IDsPerSecond: 1e9, RequestsPerSecond: 1e9},
	})
	if err != nil {
		return nil, err
	}
	// A new generator's first ID waits for a fresh second: taken here,
	// before the load.
	r := httptest.NewRequest(http.MethodGet, "/v1/traceid", nil)
	r.Header.Set("Authorization", "Bearer "+benchToken)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		s.Close()
		return nil, fmt.Errorf("warming up: status %d: %s", rec.Code, rec.Body)
	}
	go s.Serve(ln)
	return func() error { return s.Shutdown(context.Background()) }, nil
}
