package etcdtest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestClusterAndProxy(t *testing.T) {
	c := Start(t, 1)
	cli := c.Client()
	p := Prefix(t, cli)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cli.Put(ctx, p+"k", "v")
	require.NoError(t, err)

	px := NewProxy(t, c.Endpoint(0))
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
	require.Eventually(t, func() bool {
		c, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		_, err := via.Get(c, p+"k")
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)
}
