package fleettest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

func TestClusterAndProxy(t *testing.T) {
	c := Start(t, 1)
	cli := c.Client()
	p := Prefix(t, cli)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cli.Put(ctx, p+"k", "v")
	require.NoError(t, err)

	px := tcpproxy.New(t, c.Endpoint(0))
	via := NewClient(t, px.Endpoint())
	got, err := via.Get(ctx, p+"k")
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1)
	require.Equal(t, "v", string(got.Kvs[0].Value))

	px.Cut()
	short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancelShort()
	_, err = via.Get(short, p+"k")
	require.Error(t, err, "a cut proxy must not pass requests")

	px.Restore()
	testwait.Until(t, func() bool {
		c, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		_, err := via.Get(c, p+"k")
		return err == nil
	}, "a get through the restored proxy")
}

// A paused proxy holds a request and delivers it late, on Resume: the
// write lands then, not before, and its caller gets the answer.
func TestProxyPauseDeliversLate(t *testing.T) {
	c := Start(t, 1)
	direct := c.Client()
	p := Prefix(t, direct)
	px := tcpproxy.New(t, c.Endpoint(0))
	via := NewClient(t, px.Endpoint())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := via.Put(ctx, p+"warm", "up") // the connection is open before the pause
	require.NoError(t, err)

	px.Pause()
	put := make(chan error, 1)
	go func() {
		_, err := via.Put(ctx, p+"late", "v")
		put <- err
	}()
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	_, err = via.Get(short, p+"warm")
	require.Error(t, err, "a paused proxy passes nothing")
	got, err := direct.Get(ctx, p+"late")
	require.NoError(t, err)
	require.Empty(t, got.Kvs, "the write is held, not delivered")

	px.Resume()
	select {
	case err := <-put:
		require.NoError(t, err, "the held write is delivered and answered")
	case <-ctx.Done():
		t.Fatal("the held write got no answer 30s after Resume")
	}
	got, err = direct.Get(ctx, p+"late")
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1)
}

// A crashed member restarts on its ports with its data and serves again.
func TestCrashAndRestart(t *testing.T) {
	c := Start(t, 3)
	cli := c.Client()
	p := Prefix(t, cli)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.Crash(0)
	c.Crash(0) // harmless
	// A crashed leader costs an election: try each write for a second, as
	// long as the test's bound allows.
	for {
		actx, acancel := context.WithTimeout(ctx, time.Second)
		_, err := cli.Put(actx, p+"k", "written while m0 was down")
		acancel()
		if err == nil {
			break
		}
		require.NoError(t, ctx.Err(), "no write within 30s of the crash: %v", err)
	}
	c.Restart(0)
	only0 := NewClient(t, c.Endpoint(0))
	got, err := only0.Get(ctx, p+"k") // a linearizable read: m0 has caught up
	require.NoError(t, err)
	require.Len(t, got.Kvs, 1)
	require.Equal(t, "written while m0 was down", string(got.Kvs[0].Value))
}
