package connlimit

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/testwait"
)

// TestLazyDeadline: a deadline in the future is kept, not set on the
// socket, and set as a past time once it has fallen; one in the past is
// set at once; and a socket's past deadline is taken off when the
// deadline moves to the future or to none, so that I/O works again.
func TestLazyDeadline(t *testing.T) {
	var applied []time.Time
	apply := func(t time.Time) error { applied = append(applied, t); return nil }
	var d LazyDeadline
	base := time.Now()
	now := SinceEpoch(base)

	require.NoError(t, d.set(base.Add(time.Second), now, apply))
	assert.Empty(t, applied, "a future deadline is kept")
	d.fire(SinceEpoch(base.Add(999*time.Millisecond)), apply)
	assert.Empty(t, applied, "not before it falls")
	d.fire(SinceEpoch(base.Add(time.Second)), apply)
	require.Equal(t, []time.Time{ALongTimeAgo}, applied, "set on the socket once it has fallen")
	d.fire(SinceEpoch(base.Add(2*time.Second)), apply)
	assert.Len(t, applied, 1, "once")

	require.NoError(t, d.set(base.Add(3*time.Second), now, apply))
	require.Equal(t, []time.Time{ALongTimeAgo, {}}, applied, "a new deadline takes the fallen one off the socket")
	require.NoError(t, d.set(time.Time{}, now, apply))
	assert.Len(t, applied, 2, "no socket call when the socket has no deadline")
	d.fire(SinceEpoch(base.Add(time.Hour)), apply)
	assert.Len(t, applied, 2, "a deadline taken off before it fell never falls")

	past := base.Add(-time.Millisecond)
	require.NoError(t, d.set(past, now, apply))
	require.Equal(t, past, applied[2], "a past deadline is set at once")
	require.NoError(t, d.set(time.Time{}, now, apply))
	require.Equal(t, time.Time{}, applied[3], "and taken off at once")
	require.NoError(t, d.set(base, now, apply))
	require.Equal(t, base, applied[4], "a deadline at the present is past")
}

// TestSweptDeadlines: through a limited listener, a read blocked under a
// read deadline fails with the socket's own deadline error no sooner than
// the deadline, a deadline set in the past ends a blocked read at once,
// and the connection reads again once its deadline is taken off.
func TestSweptDeadlines(t *testing.T) {
	t.Parallel()
	lim := New(Limits{Max: -1}, prometheus.NewCounter(prometheus.CounterOpts{Name: "e"}), prometheus.NewCounter(prometheus.CounterOpts{Name: "r"}),
		prometheus.NewCounter(prometheus.CounterOpts{Name: "t"}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "o"}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "i"}))
	inner, addr := freePort(t)
	ln := lim.Listener(inner)
	defer ln.Close()
	client, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer client.Close()
	server, err := ln.Accept()
	require.NoError(t, err)
	defer server.Close()

	read := func() <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := server.Read(make([]byte, 1))
			done <- err
		}()
		return done
	}

	const wait = 120 * time.Millisecond
	set := time.Now()
	require.NoError(t, server.SetReadDeadline(set.Add(wait)))
	err = testwait.Recv(t, read(), "a read past its deadline")
	assert.True(t, errors.Is(err, os.ErrDeadlineExceeded), "the socket's deadline error: %v", err)
	assert.GreaterOrEqual(t, time.Since(set), wait, "not before the deadline")

	require.NoError(t, server.SetReadDeadline(time.Time{}))
	done := read()
	_, err = client.Write([]byte{1})
	require.NoError(t, err)
	assert.NoError(t, testwait.Recv(t, done, "a read once the deadline is off"))

	require.NoError(t, server.SetReadDeadline(time.Now().Add(time.Hour)))
	done = read()
	require.NoError(t, server.SetReadDeadline(ALongTimeAgo))
	err = testwait.Recv(t, done, "a read under a deadline set in the past")
	assert.True(t, errors.Is(err, os.ErrDeadlineExceeded), "%v", err)

	require.NoError(t, server.SetDeadline(time.Time{}))
	done = read()
	_, err = client.Write([]byte{2})
	require.NoError(t, err)
	assert.NoError(t, testwait.Recv(t, done, "a read once both deadlines are off"))

	require.NoError(t, server.Close())
	_, err = io.ReadAll(client)
	assert.NoError(t, err, "the client sees the close")
}

// BenchmarkDeadlineMoves: the deadline moves net/http makes on each
// request of a kept-alive HTTP/1.1 connection with every timeout set
// (the header, the write, the body, the aborted background read, the
// write's end, the idle wait and the next header), on a plain TCP
// connection and on a limited one, whose deadlines the sweeper enforces.
func BenchmarkDeadlineMoves(b *testing.B) {
	lim := New(Limits{Max: -1}, prometheus.NewCounter(prometheus.CounterOpts{Name: "e"}), prometheus.NewCounter(prometheus.CounterOpts{Name: "r"}),
		prometheus.NewCounter(prometheus.CounterOpts{Name: "t"}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "o"}), prometheus.NewGauge(prometheus.GaugeOpts{Name: "i"}))
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	ln := lim.Listener(inner)
	defer ln.Close()
	client, err := net.Dial("tcp", inner.Addr().String())
	require.NoError(b, err)
	defer client.Close()
	limited, err := ln.Accept()
	require.NoError(b, err)
	defer limited.Close()
	raw := limited.(*Conn).raw

	for _, c := range []struct {
		name string
		conn net.Conn
	}{{"conn=tcp", raw}, {"conn=limited", limited}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				now := time.Now()
				c.conn.SetReadDeadline(now.Add(5 * time.Second))
				c.conn.SetWriteDeadline(now.Add(30 * time.Second))
				c.conn.SetReadDeadline(now.Add(10 * time.Second))
				c.conn.SetReadDeadline(ALongTimeAgo)
				c.conn.SetReadDeadline(time.Time{})
				c.conn.SetWriteDeadline(time.Time{})
				c.conn.SetReadDeadline(now.Add(120 * time.Second))
				c.conn.SetReadDeadline(now.Add(5 * time.Second))
			}
		})
	}
}
