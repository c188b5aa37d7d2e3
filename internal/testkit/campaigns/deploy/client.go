//go:build linux

package deploy

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"connectrpc.com/connect"

	idkitv1 "github.com/idkit/idkit/proto/idkit/v1"
	"github.com/idkit/idkit/proto/idkit/v1/idkitv1connect"
)

// A Request is one call a client made: when it started, how long it took,
// and whether it was answered with IDs.
type Request struct {
	Start    time.Time
	Latency  time.Duration
	Answered bool
}

// A Recorder keeps every ID the clients were given, by scheme, and every
// request. An ID seen twice is a duplicate: the one failure the harness
// exists to find.
type Recorder struct {
	mu         sync.Mutex
	seen       map[string]map[uint64]string // scheme → ID → the client and time it came back
	duplicates []string
	requests   []Request
	ids        int
}

// NewRecorder returns an empty recorder.
func NewRecorder() *Recorder {
	return &Recorder{seen: make(map[string]map[uint64]string)}
}

// record keeps the IDs of one answer.
func (r *Recorder) record(client, scheme string, ids []uint64, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.seen[scheme]
	if m == nil {
		m = make(map[uint64]string)
		r.seen[scheme] = m
	}
	where := client + " at " + at.UTC().Format("15:04:05.000")
	for _, id := range ids {
		if first, ok := m[id]; ok {
			r.duplicates = append(r.duplicates, fmt.Sprintf("%s %d: %s and %s", scheme, id, first, where))
			continue
		}
		m[id] = where
	}
	r.ids += len(ids)
}

func (r *Recorder) request(req Request) {
	r.mu.Lock()
	r.requests = append(r.requests, req)
	r.mu.Unlock()
}

// Duplicates lists every ID given out twice, with both clients and times.
func (r *Recorder) Duplicates() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.duplicates)
}

// IDs is how many IDs the clients were given.
func (r *Recorder) IDs() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids
}

// Requests returns the requests that started in [from, to).
func (r *Recorder) Requests(from, to time.Time) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Request
	for _, q := range r.requests {
		if !q.Start.Before(from) && q.Start.Before(to) {
			out = append(out, q)
		}
	}
	return out
}

// Availability is the share of reqs answered, and their 99th percentile
// latency (of all, answered or not).
func Availability(reqs []Request) (share float64, p99 time.Duration) {
	if len(reqs) == 0 {
		return 0, 0
	}
	lat := make([]time.Duration, len(reqs))
	answered := 0
	for i, q := range reqs {
		lat[i] = q.Latency
		if q.Answered {
			answered++
		}
	}
	slices.Sort(lat)
	return float64(answered) / float64(len(reqs)), lat[(len(lat)*99)/100]
}

// Client asks the fleet for IDs over one protocol until its context ends,
// through the load balancers at Bases. It sends each request to its
// preferred one; when that fails to connect or answer within Timeout, it
// asks the next one, and prefers that from then on: as a client of two
// load balancers should.
type Client struct {
	Name     string
	Bases    []string // https://HOST:PORT of each load balancer
	First    int      // the index in Bases preferred at the start
	GRPC     bool     // gRPC (HTTP/2) instead of HTTP/1.1 JSON
	Token    string
	TLS      *tls.Config
	N        int           // IDs a request
	Pause    time.Duration // between requests
	Timeout  time.Duration // of one try; a connection gets half of it
	Recorder *Recorder
}

// Run asks for N IDs of traceid and of snowflake in turn.
func (c *Client) Run(ctx context.Context) {
	dialer := &net.Dialer{Timeout: c.Timeout / 2}
	transport := &http.Transport{TLSClientConfig: c.TLS.Clone(), ForceAttemptHTTP2: c.GRPC, MaxIdleConnsPerHost: 4,
		DialContext: dialer.DialContext, TLSHandshakeTimeout: c.Timeout / 2}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport, Timeout: c.Timeout}
	rpcs := make([]idkitv1connect.IDServiceClient, len(c.Bases))
	for i, base := range c.Bases {
		rpcs[i] = idkitv1connect.NewIDServiceClient(hc, base, connect.WithGRPC())
	}
	schemes := []string{"traceid", "snowflake"}
	prefer := c.First % len(c.Bases)
	for i := 0; ctx.Err() == nil; i++ {
		scheme := schemes[i%len(schemes)]
		start := time.Now()
		var ids []uint64
		var err error
		for try := range len(c.Bases) {
			at := (prefer + try) % len(c.Bases)
			if c.GRPC {
				ids, err = c.next(ctx, rpcs[at], scheme)
			} else {
				ids, err = c.get(ctx, hc, c.Bases[at], scheme)
			}
			if !unreached(err) || ctx.Err() != nil {
				break
			}
			prefer = (at + 1) % len(c.Bases)
		}
		if ctx.Err() != nil {
			return // a request cut short by the end of the run is not counted
		}
		c.Recorder.request(Request{Start: start, Latency: time.Since(start), Answered: err == nil})
		if err == nil {
			c.Recorder.record(c.Name, scheme, ids, time.Now())
		}
		select {
		case <-ctx.Done():
		case <-time.After(c.Pause):
		}
	}
}

// unreached reports whether err says the load balancer was not reached,
// or did not answer in time: worth asking the other one. An answer, even
// an error such as 503, came from a server behind it, and is final.
func unreached(err error) bool {
	if err == nil {
		return false
	}
	var status *httpStatus
	if errors.As(err, &status) {
		return false
	}
	var ce *connect.Error
	if errors.As(err, &ce) && ce.Meta().Get("Content-Type") != "" { // a server's answer
		return false
	}
	return true
}

// httpStatus is the error of an answer other than 200.
type httpStatus struct {
	status string
	body   []byte
}

func (e *httpStatus) Error() string { return fmt.Sprintf("%s: %s", e.status, e.body) }

func (c *Client) get(ctx context.Context, hc *http.Client, base, scheme string) ([]uint64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/"+scheme+"?n="+strconv.Itoa(c.N), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &httpStatus{resp.Status, body}
	}
	var answer struct{ IDs []string }
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, err
	}
	return parseIDs(answer.IDs, c.N)
}

func (c *Client) next(ctx context.Context, rpc idkitv1connect.IDServiceClient, scheme string) ([]uint64, error) {
	n := int64(c.N)
	req := connect.NewRequest(&idkitv1.NextRequest{Scheme: scheme, N: &n})
	req.Header().Set("Authorization", "Bearer "+c.Token)
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	resp, err := rpc.Next(ctx, req)
	if err != nil {
		return nil, err
	}
	if ids := resp.Msg.Values; len(ids) != c.N { // the binary form, the default
		return nil, fmt.Errorf("%d IDs, want %d", len(ids), c.N)
	}
	return resp.Msg.Values, nil
}

func parseIDs(texts []string, n int) ([]uint64, error) {
	if len(texts) != n {
		return nil, fmt.Errorf("%d IDs, want %d", len(texts), n)
	}
	ids := make([]uint64, len(texts))
	for i, s := range texts {
		id, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}
