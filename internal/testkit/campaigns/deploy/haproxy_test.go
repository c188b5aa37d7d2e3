//go:build linux

package deploy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/serve"
)

// TestHAProxyClientAddresses: 64 clients, each from an address of its
// own, each on two connections, ask four servers for IDs through HAProxy
// with deploy/haproxy.cfg, whose connections to the servers begin with a
// PROXY protocol v2 header. The servers allow an address 4 connections
// and 40 requests a second: each client stays within both, and all of
// them together are 128 connections and about 1,280 requests a second.
// Every request is answered, and no server refuses a connection: each
// sees each client's own address. The same load through the same
// configuration without send-proxy-v2 is refused by the shares, as every
// client is then HAProxy's address.
func TestHAProxyClientAddresses(t *testing.T) {
	haproxy := needHAProxy(t)
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 2, true)
	servers, probePort := proxiedServers(t, certFile, keyFile)

	b, err := os.ReadFile(filepath.Join(deployDir, "haproxy.cfg"))
	require.NoError(t, err)
	// The shipped checks allow a check's TLS handshake 500 ms (their
	// interval) and shut a server's sessions when two fail. On a machine
	// whose cores are all busy, under the race detector, handshakes take
	// longer, and this test's clients, which do not retry, would count the
	// sessions shut. It measures client addresses, not checks, so its
	// checks allow 2 s; TestDeployedFleet runs the shipped ones.
	const shippedChecks = "inter 500ms"
	require.Contains(t, string(b), shippedChecks)
	b = []byte(strings.Replace(string(b), shippedChecks, "inter 2s", 1))
	for _, tt := range []struct {
		name    string
		cfg     string
		refused bool
	}{
		{"send-proxy-v2", string(b), false},
		{"without send-proxy-v2", strings.ReplaceAll(string(b), " send-proxy-v2", ""), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := refusals(t, servers)
			lb, _ := startHAProxy(t, haproxy, tt.cfg, servers, probePort)
			// More than one address may ask in a run (its rate for the
			// run's length and a burst of as many as a second's) answered
			// with none refused shows the shares at work: had the servers
			// seen one address, they would have refused every request
			// past that. The clients ask about 1,280 requests a second
			// when the machine keeps up; a busy one, its connections'
			// TLS handshakes under the race detector first, answers far
			// fewer, so the load goes on past 3 s until they have.
			var enough func(answered int, elapsed time.Duration) bool
			if !tt.refused {
				enough = func(answered int, elapsed time.Duration) bool { return answered > oneAddress(elapsed) }
			}
			answered, elapsed, failed := loadThrough(t, lb, ca, 64, 2, 3*time.Second, enough)
			refused := refusals(t, servers).Sub(before)
			t.Logf("%d requests answered in %v, %d failed; %d connections and %d requests refused by the servers' shares",
				answered, elapsed.Round(time.Millisecond), len(failed), refused.conns, refused.requests)
			if tt.refused {
				assert.Positive(t, refused.conns+refused.requests, "one address for every client is refused by its shares")
				return
			}
			assert.Empty(t, failed, "every request answered")
			assert.Zero(t, refused.conns, "connections refused by a client's share")
			assert.Zero(t, refused.requests, "requests refused by a client's limit")
			assert.Greater(t, answered, oneAddress(elapsed), "the clients asked more than one address may in %v%s", elapsed, testwait.Load())
		})
	}
}

// needHAProxy returns the path of haproxy, or skips t without it (fails
// it under CI).
func needHAProxy(t *testing.T) string {
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("haproxy is missing (apt-get install haproxy)")
		}
		t.Skip("haproxy is missing (apt-get install haproxy)")
	}
	return haproxy
}

// TestHAProxyChecksUnderAttack: with deploy/haproxy.cfg's health checks
// as shipped (every 500 ms, 1 s each, a server DOWN after two failures),
// 8 addresses holding 4 connections each to one server's probe port (32
// for its cap of 16), sending nothing and reconnecting as soon as they
// are closed, leave that server UP: it answers the next 8 checks, and
// HAProxy logs no DOWN for it. Without the race detector, which slows
// TLS handshakes past the checks' 1 s on a busy machine.
func TestHAProxyChecksUnderAttack(t *testing.T) {
	if raceEnabled {
		t.Skip("the shipped checks' 1 s bounds a TLS handshake, which the race detector slows past it on a busy machine: go test without -race runs this test")
	}
	haproxy := needHAProxy(t)
	dir := t.TempDir()
	ca := testcert.NewCA(t)
	certFile, keyFile := ca.Issue(t, dir, "server", 2, true)
	servers, probePort := proxiedServers(t, certFile, keyFile)
	b, err := os.ReadFile(filepath.Join(deployDir, "haproxy.cfg"))
	require.NoError(t, err)
	_, haproxyLog := startHAProxy(t, haproxy, string(b), servers, probePort)

	target := servers[0]
	probe := net.JoinHostPort("127.0.1.1", strconv.Itoa(probePort))
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	for a := range 8 {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 3, byte(a+1))}, Timeout: time.Second}
		for range 4 {
			wg.Go(func() { holdSilent(ctx, d, probe) })
		}
	}
	testwait.Until(t, func() bool {
		return metricIn(scrapeMetrics(t, target.metricsURL), `idkit_connections_open{listener="probes"}`) >= 16
	}, "the silent connections filling the probe listener")
	checks := func() float64 {
		return metricIn(scrapeMetrics(t, target.metricsURL), `idkit_http_requests_total{code="200",route="healthz",scheme=""}`)
	}
	const down = "idkit/s1 is DOWN"
	before := checks()
	testwait.Until(t, func() bool {
		return checks() >= before+8 || strings.Contains(haproxyLog(), down)
	}, "8 more health checks answered under the attack, or the server DOWN")
	require.NotContains(t, haproxyLog(), down, "HAProxy took the attacked server out of rotation")
	assert.Positive(t, metricIn(scrapeMetrics(t, target.metricsURL), `idkit_connections_evicted_total{listener="probes"}`),
		"silent connections closed to make room")
}

// holdSilent keeps a connection to addr open that sends nothing, and
// another in its place as soon as the server closes it, until ctx ends.
func holdSilent(ctx context.Context, d *net.Dialer, addr string) {
	for ctx.Err() == nil {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		c.Read(make([]byte, 1)) // returns when either end closes it
		stop()
		c.Close()
	}
}

// perSecond is the requests a second the servers behind HAProxy allow
// one client address.
const perSecond = 40

// oneAddress returns the most requests one client address may have
// answered in elapsed: its rate for that long, and a burst of a second's.
func oneAddress(elapsed time.Duration) int {
	return int(perSecond * (elapsed.Seconds() + 1))
}

// proxiedServer is one of the four servers behind HAProxy.
type proxiedServer struct {
	s          *serve.Server
	addr       string // the main port
	metricsURL string
}

// proxiedServers starts four servers of ObjectIDs on 127.0.1.1 to
// 127.0.1.4, with TLS, trusting a PROXY header from 127.0.0.1 (where
// HAProxy connects from), and their probe listeners on one port of each
// address.
func proxiedServers(t *testing.T, certFile, keyFile string) ([]proxiedServer, int) {
	var probes []net.Listener
	port := 0
	for attempt := 0; len(probes) < 4; attempt++ {
		require.Less(t, attempt, 20, "a probe port free on four addresses")
		ln, err := net.Listen("tcp", net.JoinHostPort(fmt.Sprintf("127.0.1.%d", len(probes)+1), strconv.Itoa(port)))
		if err != nil {
			for _, l := range probes {
				l.Close()
			}
			probes, port = nil, 0
			continue
		}
		port = ln.Addr().(*net.TCPAddr).Port
		probes = append(probes, ln)
	}
	var list []proxiedServer
	for i := range 4 {
		s, err := serve.New(t.Context(), serve.Options{
			ObjectID: &objectid.Options{}, TLS: &serve.TLSFiles{CertFile: certFile, KeyFile: keyFile}, SeparateMetrics: true,
			ProxyProtocol: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
			Limits:        serve.Limits{MaxConns: 512, MaxConnsPerClient: 4, RequestsPerSecond: perSecond},
		})
		require.NoError(t, err)
		main, err := net.Listen("tcp", fmt.Sprintf("127.0.1.%d:0", i+1))
		require.NoError(t, err)
		metrics, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		done := make(chan struct{}, 3)
		for _, run := range []func() error{
			func() error { return s.Serve(main) },
			func() error { return s.ServeProbes(probes[i]) },
			func() error { return s.ServeMetrics(metrics) },
		} {
			go func() { run(); done <- struct{}{} }()
		}
		t.Cleanup(func() {
			s.Close()
			for range 3 {
				testwait.Recv(t, done, "a server's listener to stop")
			}
		})
		list = append(list, proxiedServer{s: s, addr: main.Addr().String(), metricsURL: "http://" + metrics.Addr().String() + "/metrics"})
	}
	return list, port
}

// startHAProxy runs HAProxy with cfg in front of servers, its frontend
// on a free port of 127.0.0.1, until the test ends, and returns the
// frontend's address once every server is up behind it, and a function
// that returns what HAProxy has logged so far.
func startHAProxy(t *testing.T, haproxy, cfg string, servers []proxiedServer, probePort int) (string, func() string) {
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(haproxy, "-db", "-f", path)
	cmd.Env = append(os.Environ(), "IDKIT_LB_ADDR="+addr, "IDKIT_PROBE_PORT="+strconv.Itoa(probePort))
	for i, s := range servers {
		cmd.Env = append(cmd.Env, fmt.Sprintf("IDKIT_S%d=%s", i+1, s.addr))
	}
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	var gone atomic.Bool // HAProxy has exited
	go func() {
		err := cmd.Wait()
		gone.Store(true)
		exited <- err
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		testwait.Recv(t, exited, "HAProxy to exit")
		if t.Failed() {
			t.Logf("HAProxy's log:\n%s", log.String())
		}
	})
	// Up: a connection through it reaches a server, and every server
	// answered HAProxy's first health checks.
	testwait.Until(t, func() bool {
		if gone.Load() {
			t.Fatalf("HAProxy exited at start:\n%s", log.String())
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		for _, s := range servers {
			m := scrapeMetrics(t, s.metricsURL)
			if !strings.Contains(m, `idkit_http_requests_total{code="200",route="healthz",scheme=""}`) {
				return false
			}
		}
		return true
	}, "HAProxy to listen and check every server")
	return addr, log.String
}

// lockedBuffer is a buffer that a process writes while a test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// refused counts what the servers' shares refused.
type refused struct{ conns, requests int }

func (a refused) Sub(b refused) refused { return refused{a.conns - b.conns, a.requests - b.requests} }

func refusals(t *testing.T, servers []proxiedServer) refused {
	var r refused
	for _, s := range servers {
		m := scrapeMetrics(t, s.metricsURL)
		r.conns += int(metricIn(m, `idkit_connections_refused_total{listener="main"}`))
		r.requests += int(metricIn(m, `idkit_http_requests_total{code="429",route="ids",scheme="objectid"}`))
	}
	return r
}

// loadThrough runs clients, each from an address of its own (127.0.2.N)
// on conns connections, each asking for an ID every 100 ms for d, or
// past d until enough holds for the requests answered so far and the
// time since the load began (at most testwait.Bound past d), and returns
// the requests answered 200, that time when the load ended, and the
// failures. A request still in flight then counts for neither.
func loadThrough(t *testing.T, lb string, ca *testcert.CA, clients, conns int, d time.Duration, enough func(answered int, elapsed time.Duration) bool) (answered int, elapsed time.Duration, failed []string) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	began := time.Now()
	var total int           // answered when the load ended
	var ended time.Duration // when the load ended
	// The load ends at d, or with enough set once enough holds after d,
	// at most testwait.Bound after d.
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			elapsed := time.Since(began)
			if elapsed < d {
				continue
			}
			mu.Lock()
			done := enough == nil || enough(answered, elapsed) || elapsed > d+testwait.Bound
			if done {
				total, ended = answered, elapsed
				cancel()
			}
			mu.Unlock()
			if done {
				return
			}
		}
	})
	for i := range clients {
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 2, byte(i+1))}, Timeout: testwait.Bound}
		for range conns {
			// A transport per connection: the client's conns connections
			// are each kept alive.
			tr := &http.Transport{DialContext: dialer.DialContext, TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}, MaxConnsPerHost: 1}
			hc := &http.Client{Transport: tr, Timeout: testwait.Bound}
			wg.Go(func() {
				defer tr.CloseIdleConnections()
				for ctx.Err() == nil {
					err := getID(hc, "https://"+lb+"/v1/objectid")
					if ctx.Err() != nil {
						return
					}
					mu.Lock()
					if err == nil {
						answered++
					} else if len(failed) < 20 {
						failed = append(failed, err.Error())
					} else {
						failed = append(failed, "")
					}
					mu.Unlock()
					select {
					case <-ctx.Done():
					case <-time.After(100 * time.Millisecond):
					}
				}
			})
		}
	}
	wg.Wait()
	return total, ended, failed
}

func getID(hc *http.Client, url string) error {
	resp, err := hc.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status + ": " + string(b))
	}
	return nil
}

func scrapeMetrics(t *testing.T, url string) string {
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// metricIn returns the value of the metric line that starts with name
// and a space, or 0 while there is none.
func metricIn(metrics, name string) float64 {
	for line := range strings.Lines(metrics) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}
