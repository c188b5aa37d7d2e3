package mysqlstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/mysqlstore"
)

// TestPair runs Flickr's two ticket servers as two schemas: A hands out
// odd tickets, B even ones, concurrent callers never share a block, and
// with A cut off B serves alone.
func TestPair(t *testing.T) {
	t.Parallel()
	dsnA, _ := newDatabase(t)
	dsnB, _ := newDatabase(t)
	cfgA, err := mysql.ParseDSN(dsnA)
	require.NoError(t, err)
	proxy := tcpproxy.New(t, "tcp://"+cfgA.Addr)
	cfgA.Addr = proxy.Addr()
	ctx := context.Background()
	const unit = 10
	p, err := mysqlstore.OpenPair(ctx, cfgA.FormatDSN(), dsnB, mysqlstore.Options{Unit: unit})
	require.NoError(t, err)
	defer p.Close()

	reserve := func(n int) []segment.Block {
		var (
			mu  sync.Mutex
			got []segment.Block
			wg  sync.WaitGroup
		)
		for range 4 {
			wg.Go(func() {
				for range n {
					b, err := p.Reserve(ctx, "t")
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					got = append(got, b)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		return got
	}
	seen := map[int64]bool{}
	odd, even := 0, 0
	for _, b := range reserve(25) {
		require.Equal(t, int64(unit), b.Len())
		require.Zero(t, (b.First-1)%unit, "block %v not on a ticket boundary", b)
		require.False(t, seen[b.First], "block %v twice", b)
		seen[b.First] = true
		if ticket := (b.First-1)/unit + 1; ticket%2 == 1 {
			odd++
		} else {
			even++
		}
	}
	assert.Equal(t, 50, odd, "server A's tickets are odd")
	assert.Equal(t, 50, even, "server B's tickets are even")

	proxy.Cut()
	for _, b := range reserve(5) {
		assert.Zero(t, ((b.First-1)/unit+1)%2, "with A cut off, %v must come from B", b)
		assert.False(t, seen[b.First], "block %v twice", b)
		seen[b.First] = true
	}
	_, err = p.Reserve(ctx, "bad tag")
	assert.ErrorIs(t, err, segment.ErrInvalid)
}

func TestPairBothDown(t *testing.T) {
	t.Parallel()
	dsnA, _ := newDatabase(t)
	dsnB, _ := newDatabase(t)
	var proxies []*tcpproxy.Proxy
	var dsns []string
	for _, dsn := range []string{dsnA, dsnB} {
		cfg, err := mysql.ParseDSN(dsn)
		require.NoError(t, err)
		pr := tcpproxy.New(t, "tcp://"+cfg.Addr)
		cfg.Addr = pr.Addr()
		proxies = append(proxies, pr)
		dsns = append(dsns, cfg.FormatDSN())
	}
	ctx := context.Background()
	p, err := mysqlstore.OpenPair(ctx, dsns[0], dsns[1], mysqlstore.Options{})
	require.NoError(t, err)
	defer p.Close()
	_, err = p.Reserve(ctx, "t")
	require.NoError(t, err)
	for _, pr := range proxies {
		pr.Cut()
	}
	_, err = p.Reserve(ctx, "t")
	assert.ErrorContains(t, err, "mysqlstore: pair: both servers failed")
	assert.ErrorContains(t, err, "server A: ")
	assert.ErrorContains(t, err, "server B: ")
}

// TestTablesRefuseOtherSettings: a table records the increment and
// offset its tickets were taken with. A plain store on one of a Pair's
// servers, a Pair with its servers swapped, and a Pair on a plain store's
// table would all take tickets already handed out; each is refused,
// naming the setting, while the same Pair opened again goes on.
func TestTablesRefuseOtherSettings(t *testing.T) {
	t.Parallel()
	dsnA, _ := newDatabase(t)
	dsnB, _ := newDatabase(t)
	ctx := context.Background()
	opts := mysqlstore.Options{Unit: 10}

	p, err := mysqlstore.OpenPair(ctx, dsnA, dsnB, opts)
	require.NoError(t, err)
	seen := map[int64]bool{}
	for range 4 {
		b, err := p.Reserve(ctx, "orders")
		require.NoError(t, err)
		seen[b.First] = true
	}
	require.NoError(t, p.Close())

	plain := open(t, dsnA, opts)
	_, err = plain.ReserveBlock(ctx, "orders", 10)
	assert.ErrorIs(t, err, segment.ErrInvalid)
	assert.ErrorContains(t, err, "increment=2 offset=1", "the error names the table's settings")

	swapped, err := mysqlstore.OpenPair(ctx, dsnB, dsnA, opts)
	require.NoError(t, err)
	defer swapped.Close()
	_, err = swapped.Reserve(ctx, "orders")
	assert.ErrorIs(t, err, segment.ErrInvalid)
	assert.ErrorContains(t, err, "offset=2")

	// A plain store's table is refused by a Pair, on either server.
	_, err = plain.ReserveBlock(ctx, "plain", 10)
	require.NoError(t, err)
	_, err = open(t, dsnB, opts).ReserveBlock(ctx, "plain", 10)
	require.NoError(t, err)
	_, err = swapped.Reserve(ctx, "plain")
	assert.ErrorIs(t, err, segment.ErrInvalid)
	assert.ErrorContains(t, err, `unit=10"`, "the error quotes the plain table's comment")

	again, err := mysqlstore.OpenPair(ctx, dsnA, dsnB, opts)
	require.NoError(t, err)
	defer again.Close()
	for range 4 {
		b, err := again.Reserve(ctx, "orders")
		require.NoError(t, err)
		assert.False(t, seen[b.First], "block %v twice", b)
		seen[b.First] = true
	}
}
