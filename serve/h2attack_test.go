package serve

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/objectid"
)

// zeroWindowConn opens an HTTP/2 connection with prior knowledge to addr
// from the loopback address from, tells the server it takes no data (an
// initial stream window of 0), and opens streams streams, each asking
// for n ObjectIDs. It reads what the server sends until the connection
// ends, counting in answered each stream answered (its headers) or
// refused (RST_STREAM), and throwing the rest away.
func zeroWindowConn(t *testing.T, from, addr string, streams, n int, answered *atomic.Int64) {
	t.Helper()
	c := dialFrom(t, from, addr)
	t.Cleanup(func() { c.Close() })
	_, err := io.WriteString(c, http2.ClientPreface)
	require.NoError(t, err)
	fr := http2.NewFramer(c, c)
	require.NoError(t, fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}))
	var wmu sync.Mutex // the framer's writes, from here and the reader
	go func() {
		r := http2.NewFramer(io.Discard, c)
		for {
			f, err := r.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.HeadersFrame, *http2.RSTStreamFrame:
				answered.Add(1)
			case *http2.SettingsFrame:
				if !f.IsAck() {
					wmu.Lock()
					fr.WriteSettingsAck()
					wmu.Unlock()
				}
			}
		}
	}()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for i := range streams {
		block.Reset()
		for _, f := range []hpack.HeaderField{
			{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "http"},
			{Name: ":authority", Value: "idkit"}, {Name: ":path", Value: fmt.Sprintf("/v1/objectid?n=%d", n)},
		} {
			require.NoError(t, enc.WriteField(f))
		}
		wmu.Lock()
		err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: uint32(2*i + 1), BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true})
		wmu.Unlock()
		if err != nil {
			return // the server closed the connection
		}
	}
}

// TestZeroWindowStreams: one address opens HTTP/2 streams that ask for
// IDs and never let the server send the answer (a window of 0): 250
// streams on each of 64 connections, as many as its busy connections
// may be, or 16 on each of the 1,024 connections of its share, 16,000
// streams either way. The server's heap and stacks (and this test's
// client, in the same process) grow by less than 128 MiB: a connection
// has at most MaxStreamsPerConn streams open, the address at most
// MaxStreamsPerClient requests in flight, and each one past that is
// answered 429 with headers alone, which no window holds back.
func TestZeroWindowStreams(t *testing.T) {
	for _, shape := range []struct{ conns, streams int }{{64, 250}, {DefaultMaxConns / 4, 16}} {
		t.Run(fmt.Sprintf("%dx%d", shape.conns, shape.streams), func(t *testing.T) {
			raiseFileLimit(t, uint64(4*shape.conns+1024))
			s := newServer(t, Options{ObjectID: &objectid.Options{}})
			ln, addr := freePort(t)
			served(t, s, s.Serve, ln)

			heap := func() uint64 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				return m.HeapInuse + m.StackInuse
			}
			before := heap()
			var answered atomic.Int64
			for range shape.conns {
				zeroWindowConn(t, "127.0.9.1", addr, shape.streams, 1000, &answered)
			}
			want := int64(shape.conns * shape.streams)
			testwait.Until(t, func() bool { return answered.Load() >= want },
				"every stream answered (its headers sent, its data held back by the window) or refused")
			grown := max(heap(), before) - before // what earlier tests left may be collected meanwhile
			m := body(t, get(t, s.metricsOnly(), "/metrics"))
			t.Logf("%d connections x %d streams: heap and stacks grown by %.1f MiB, %d goroutines; %v streams refused",
				shape.conns, shape.streams, float64(grown)/(1<<20), runtime.NumGoroutine(), metricOr0(m, "idkit_http2_streams_refused_total"))
			assert.Less(t, grown, uint64(128<<20), "heap and stacks grown under %d zero-window streams", want)
			if rss, ok := residentBytes(); ok {
				// Not bounded here: it counts what the package's earlier
				// tests took, which the runtime keeps for a while, and
				// the race detector's shadow memory.
				t.Logf("the process's resident memory, server and client, after this and the tests before it: %.0f MiB", float64(rss)/(1<<20))
			}
		})
	}
}

// TestTrickledHeaderBlock: an HTTP/2 connection that sends its first
// request's header block a frame at a time (a HEADERS frame without its
// end, then a CONTINUATION frame every 100 ms) is closed at the opening
// deadline from its accept (ReadHeaderTimeout, 1 s here), not left open
// until the idle timeout (a minute here): before its first stream an
// HTTP/2 connection is idle as the server sees it.
func TestTrickledHeaderBlock(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{ObjectID: &objectid.Options{}, ReadHeaderTimeout: time.Second, IdleTimeout: time.Minute})
	ln, addr := freePort(t)
	served(t, s, s.Serve, ln)

	c := dialFrom(t, "127.0.10.1", addr)
	accepted := time.Now()
	_, err := io.WriteString(c, http2.ClientPreface)
	require.NoError(t, err)
	fr := http2.NewFramer(c, nil)
	require.NoError(t, fr.WriteSettings())
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range []hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "http"}, {Name: ":authority", Value: "idkit"}, {Name: ":path", Value: "/v1/objectid"}} {
		require.NoError(t, enc.WriteField(f))
	}
	require.NoError(t, fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block.Bytes(), EndStream: true}))
	closed := make(chan time.Time, 1)
	go func() {
		io.Copy(io.Discard, c) // until the server closes it
		closed <- time.Now()
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	block.Reset()
	require.NoError(t, enc.WriteField(hpack.HeaderField{Name: "x-trickle", Value: "a"}))
	for {
		select {
		case at := <-closed:
			took := at.Sub(accepted)
			t.Logf("closed %v after its accept", took)
			assert.Less(t, took, 10*time.Second, "the trickling connection closed by the opening deadline, well before the idle timeout")
			assertMetric(t, body(t, get(t, s.metricsOnly(), "/metrics")), `idkit_connections_timed_out_total{listener="main"} 1`)
			return
		case <-tick.C:
			fr.WriteContinuation(1, false, block.Bytes()) // fails once closed
		case <-time.After(testwait.Bound):
			t.Fatalf("the trickling connection still open %v after its accept", testwait.Bound)
		}
	}
}

// residentBytes returns this process's resident memory (VmRSS), where
// /proc says it.
func residentBytes() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
