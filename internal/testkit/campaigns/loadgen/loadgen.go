// Package loadgen is a small HTTP/1.1 load generator for measuring the ID
// service on loopback: an open-loop mode at a constant request rate, which
// measures latency from when each request was due (so that a stalled
// server cannot hide its stall by slowing the generator down, the error
// known as coordinated omission), and a saturation mode of back-to-back
// requests on each connection. Latency goes into a log-linear Histogram.
//
// Its client speaks just enough HTTP/1.1 (keep-alive GETs, responses with
// Content-Length) to cost far less CPU than net/http's client, since the
// generator shares the machine with the server it measures. It is bounded:
// a fixed number of connections, and a run that ends at its duration even
// when the server falls behind (requests still due then are counted as
// Missed, not sent).
package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// Config describes one run.
type Config struct {
	// Addr is the server's host:port.
	Addr string
	// Path is the request target, such as "/v1/traceid?n=1".
	Path string
	// Accept, when set, is sent as the Accept header.
	Accept string
	// Token, when set, is sent as a bearer token (Authorization: Bearer).
	Token string
	// TLS, when set, makes every connection a TLS one with this
	// configuration; the handshake happens before the run starts. An
	// empty ServerName means Addr's host.
	TLS *tls.Config
	// Rate is the requests per second to send, spread evenly over the
	// connections (open loop). Zero means saturation: each connection sends
	// its next request as soon as the last one is answered.
	Rate float64
	// Conns is the number of connections, 1 to 10,000. Zero means 32 for
	// an open-loop run and 4 for saturation.
	Conns int
	// Duration is how long requests are recorded, after Warmup; required.
	Duration time.Duration
	// Warmup is how long requests are sent but not recorded first.
	Warmup time.Duration
	// WantIDs, when positive, is the number of IDs each response must
	// hold; a response with another number counts as an error.
	WantIDs int
	// Call, when set, is made instead of an HTTP request, by each of Conns
	// callers in turn, and returns the number of IDs it got: a load over
	// another protocol, scheduled and counted as the HTTP one is. Addr,
	// Path, Accept, Token and TLS are then unused.
	Call func(ctx context.Context) (ids int, err error)
}

// Result is what a run measured, over Duration (warm-up left out).
type Result struct {
	Requests int64         // answered with status 200 and the IDs wanted
	Errors   int64         // other answers, and failed connections
	Missed   int64         // open loop: requests due that were never sent
	IDs      int64         // IDs in the answered requests
	Bytes    int64         // response bodies' bytes
	Sent     int64         // all requests sent, the warm-up's included
	Elapsed  time.Duration // from the end of the warm-up to the last answer
	// Latency is from when each request was due (open loop) or sent
	// (saturation) to the end of its response.
	Latency Histogram
	// Service is from when each request was sent to the end of its
	// response; in an open-loop run it leaves out the time a request
	// waited for its connection, or for the generator's own timer.
	Service  Histogram
	FirstErr error // the first error, if any
}

// RequestsPerSecond returns the rate of answered requests.
// Add adds o's counts, time and latencies to r, as for the runs of one
// benchmark; r keeps its first error.
func (r *Result) Add(o *Result) {
	r.Requests += o.Requests
	r.Errors += o.Errors
	r.Missed += o.Missed
	r.IDs += o.IDs
	r.Bytes += o.Bytes
	r.Sent += o.Sent
	r.Elapsed += o.Elapsed
	r.Latency.Merge(&o.Latency)
	r.Service.Merge(&o.Service)
	if r.FirstErr == nil {
		r.FirstErr = o.FirstErr
	}
}

func (r *Result) RequestsPerSecond() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// IDsPerSecond returns the rate of IDs received.
func (r *Result) IDsPerSecond() float64 { return float64(r.IDs) / r.Elapsed.Seconds() }

// String summarises r on one line.
func (r *Result) String() string {
	return fmt.Sprintf("sent=%d requests=%d errors=%d missed=%d req/s=%.0f ids/s=%.0f p50=%v p99=%v p999=%v max=%v service_p50=%v service_p99=%v service_p999=%v",
		r.Sent, r.Requests, r.Errors, r.Missed, r.RequestsPerSecond(), r.IDsPerSecond(),
		r.Latency.Quantile(0.50), r.Latency.Quantile(0.99), r.Latency.Quantile(0.999), r.Latency.Max(),
		r.Service.Quantile(0.50), r.Service.Quantile(0.99), r.Service.Quantile(0.999))
}

// Run runs the load that c describes and returns what it measured. It
// stops early if ctx ends.
func Run(ctx context.Context, c Config) (*Result, error) {
	if c.Call == nil && (c.Addr == "" || c.Path == "") {
		return nil, errors.New("loadgen: Config.Addr and Config.Path are required, or Config.Call")
	}
	if c.Duration <= 0 || c.Warmup < 0 {
		return nil, fmt.Errorf("loadgen: Duration %v must be positive and Warmup %v not negative", c.Duration, c.Warmup)
	}
	if c.Rate < 0 {
		return nil, fmt.Errorf("loadgen: Rate %v is negative, want 0 (saturation) or more", c.Rate)
	}
	if c.Conns == 0 {
		c.Conns = 4
		if c.Rate > 0 {
			c.Conns = 32
		}
	}
	if c.Conns < 1 || c.Conns > 10_000 {
		return nil, fmt.Errorf("loadgen: Conns %d out of range, want 1 to 10000", c.Conns)
	}
	req := []byte("GET " + c.Path + " HTTP/1.1\r\nHost: " + c.Addr + "\r\n")
	if c.Accept != "" {
		req = append(req, "Accept: "+c.Accept+"\r\n"...)
	}
	if c.Token != "" {
		req = append(req, "Authorization: Bearer "+c.Token+"\r\n"...)
	}
	req = append(req, "\r\n"...)

	workers := make([]*worker, c.Conns)
	for i := range workers {
		w := &worker{c: &c, req: req, id: i}
		if err := w.dial(); err != nil {
			for _, w := range workers[:i] {
				w.close()
			}
			return nil, fmt.Errorf("loadgen: %w", err)
		}
		workers[i] = w
	}
	start := time.Now()
	measure := start.Add(c.Warmup)
	end := measure.Add(c.Duration)
	ctx, cancel := context.WithDeadline(ctx, end.Add(max(c.Duration/2, time.Second)))
	defer cancel()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() { w.run(ctx, start, measure, end) })
	}
	wg.Wait()

	r := &Result{}
	last := measure
	for _, w := range workers {
		w.close()
		r.Add(&w.res)
		if w.last.After(last) {
			last = w.last
		}
	}
	r.Elapsed = max(last.Sub(measure), c.Duration)
	if c.Rate == 0 {
		r.Elapsed = last.Sub(measure)
	}
	return r, nil
}

// worker is one connection and its share of the load.
type worker struct {
	c    *Config
	req  []byte
	id   int
	conn net.Conn
	br   *bufio.Reader
	body []byte
	res  Result
	last time.Time // when the last recorded response ended
	// closing is set when the server said it closes the connection.
	closing bool
}

// dial connects an HTTP worker; a worker of Config.Call has no connection.
func (w *worker) dial() error {
	if w.c.Call != nil {
		return nil
	}
	conn, err := net.Dial("tcp", w.c.Addr)
	if err != nil {
		return err
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	if w.c.TLS != nil {
		cfg := w.c.TLS
		if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(w.c.Addr)
		}
		tc := tls.Client(conn, cfg)
		if err := tc.Handshake(); err != nil {
			conn.Close()
			return err
		}
		conn = tc
	}
	w.conn = conn
	if w.br == nil {
		w.br = bufio.NewReaderSize(conn, 64<<10)
	} else {
		w.br.Reset(conn)
	}
	return nil
}

// run sends requests until end (or ctx ends): worker k of W sends its
// i-th request at start + (i*W + k)/Rate in an open-loop run, at once
// after the last answer under saturation. Requests due before measure are
// not recorded.
func (w *worker) run(ctx context.Context, start, measure, end time.Time) {
	var interval time.Duration
	if w.c.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(w.c.Conns) / w.c.Rate)
	}
	due := start
	if interval > 0 {
		due = start.Add(time.Duration(float64(time.Second) * float64(w.id) / w.c.Rate))
	}
	for ctx.Err() == nil {
		now := time.Now()
		if interval == 0 {
			due = now
		}
		if !due.Before(end) {
			return
		}
		if d := due.Sub(now); d > 0 {
			w.sleep(d)
		}
		sent := time.Now()
		ids, err := w.call(ctx)
		done := time.Now()
		w.res.Sent++
		if !due.Before(measure) {
			w.last = done
			if err != nil {
				w.res.Errors++
				if w.res.FirstErr == nil {
					w.res.FirstErr = err
				}
			} else {
				w.res.Requests++
				w.res.IDs += int64(ids)
				w.res.Latency.Record(done.Sub(due))
				w.res.Service.Record(done.Sub(sent))
			}
		}
		if w.conn != nil && (err != nil || w.closing) && w.redial(ctx) != nil {
			break
		}
		due = due.Add(interval)
	}
	// Requests still due when the run was cut short were never sent.
	if interval > 0 {
		for ; due.Before(end); due = due.Add(interval) {
			if !due.Before(measure) {
				w.res.Missed++
			}
		}
	}
}

// redial replaces a broken connection, retrying until ctx ends.
func (w *worker) redial(ctx context.Context) error {
	w.conn.Close()
	w.closing = false
	for {
		if err := w.dial(); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// errStatus reports an answer other than 200.
type errStatus struct {
	code int
	body string
}

func (e *errStatus) Error() string { return "status " + strconv.Itoa(e.code) + ": " + e.body }

// get sends one request and reads its response, returning the number of
// IDs in it.
func (w *worker) get() (int, error) {
	if _, err := w.conn.Write(w.req); err != nil {
		return 0, err
	}
	line, err := w.br.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	code, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	length, closing := -1, false
	for {
		h, err := w.br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return 0, fmt.Errorf("bad header %q", h)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			closing = true
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return 0, fmt.Errorf("Transfer-Encoding %q not supported, want Content-Length", value)
		}
	}
	if length < 0 {
		return 0, errors.New("response without Content-Length")
	}
	if cap(w.body) < length {
		w.body = make([]byte, length)
	}
	w.body = w.body[:length]
	if _, err := io.ReadFull(w.br, w.body); err != nil {
		return 0, err
	}
	w.closing = closing
	if code != 200 {
		return 0, &errStatus{code, string(w.body)}
	}
	w.res.Bytes += int64(length)
	return countIDs(w.body), nil
}

// call makes one request, over HTTP or through Config.Call, and checks
// that it brought the IDs wanted.
func (w *worker) call(ctx context.Context) (int, error) {
	var ids int
	var err error
	if w.c.Call != nil {
		ids, err = w.c.Call(ctx)
	} else {
		ids, err = w.get()
	}
	if err == nil && w.c.WantIDs > 0 && ids != w.c.WantIDs {
		return 0, fmt.Errorf("response holds %d IDs, want %d", ids, w.c.WantIDs)
	}
	return ids, err
}

// sleep waits d before the next request: on this thread alone for HTTP
// (see sleep), on the runtime's timers for Config.Call, whose client has
// goroutines of its own that 32 threads blocked in nanosleep held back
// (gRPC at 10,000 calls a second: p50 6.8-7.0 ms instead of 0.5-0.8 ms).
func (w *worker) sleep(d time.Duration) {
	if w.c.Call != nil {
		time.Sleep(d)
		return
	}
	sleep(d)
}

// close closes the worker's connection, if it has one.
func (w *worker) close() {
	if w.conn != nil {
		w.conn.Close()
	}
}

// countIDs counts the IDs in a body: {"ids":["a","b"]} or one a line.
func countIDs(b []byte) int {
	if len(b) > 0 && b[0] == '{' {
		return (bytes.Count(b, []byte{'"'}) - 2) / 2
	}
	return bytes.Count(b, []byte{'\n'})
}
