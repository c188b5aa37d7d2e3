package redisstore_test

import (
	"context"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/testkit/leakcheck"
	"github.com/idkit/idkit/internal/testkit/suites/segmenttest"
	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/redisstore"
)

const (
	envAddr = "IDKIT_REDIS_ADDR"
	// envPrefix names the key prefix a child process of segmenttest uses.
	envPrefix = "IDKIT_REDISSTORE_PREFIX"
)

func TestMain(m *testing.M) {
	segmenttest.Child(func() (segment.BlockStore, error) {
		return redisstore.Open(context.Background(), os.Getenv(envAddr),
			redisstore.Options{Prefix: os.Getenv(envPrefix), AllowVolatile: true})
	})
	goleak.VerifyTestMain(m, leakcheck.Options()...)
}

// newPrefix returns a key prefix of the test's own, whose keys are deleted
// when it ends, and a client on the server.
func newPrefix(t testing.TB) (addr, prefix string, client *redis.Client) {
	t.Helper()
	addr = storetest.Server(t, envAddr, "Redis", "127.0.0.1:6379")
	prefix = "idkit-test-" + storetest.Suffix(t) + ":"
	client = redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() {
		ctx := context.Background()
		keys, err := client.Keys(ctx, prefix+"*").Result()
		assert.NoError(t, err)
		if len(keys) > 0 {
			assert.NoError(t, client.Del(ctx, keys...).Err())
		}
		client.Close()
	})
	return addr, prefix, client
}

func open(t testing.TB, addr, prefix string) *redisstore.Store {
	t.Helper()
	s, err := redisstore.Open(context.Background(), addr, redisstore.Options{Prefix: prefix, AllowVolatile: true})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	addr, prefix, _ := newPrefix(t)
	storetest.BlockStore(t, func(t *testing.T) segment.BlockStore { return open(t, addr, prefix) })
}

func TestReserveBlock(t *testing.T) {
	t.Parallel()
	addr, prefix, client := newPrefix(t)
	ctx := context.Background()
	s := open(t, addr, prefix)
	b, err := s.ReserveBlock(ctx, "orders", 10)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: 1, Last: 10}, b)
	b, err = s.ReserveBlock(ctx, "orders", 3)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: 11, Last: 13}, b)
	v, err := client.Get(ctx, prefix+"orders").Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(13), v, "the key holds the last ID reserved")
	assert.Equal(t, prefix+"orders", s.Key("orders"))
}

// TestCounter: INCR per ID continues the blocks of the same tag, and
// concurrent callers never get one ID twice.
func TestCounter(t *testing.T) {
	t.Parallel()
	addr, prefix, _ := newPrefix(t)
	ctx := context.Background()
	s := open(t, addr, prefix)
	_, err := s.ReserveBlock(ctx, "t", 100)
	require.NoError(t, err)
	c, err := s.Counter("t")
	require.NoError(t, err)
	id, err := c.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, segment.ID(101), id)

	const workers, each = 4, 200
	var mu sync.Mutex
	seen := map[segment.ID]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var last segment.ID
			for range each {
				id, err := c.Next(ctx)
				if !assert.NoError(t, err) {
					return
				}
				assert.Greater(t, id, last)
				last = id
				mu.Lock()
				assert.False(t, seen[id], "ID %d twice", id)
				seen[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	assert.Len(t, seen, workers*each)
	for id := range seen {
		assert.True(t, id > 101 && id <= 101+workers*each, "ID %d outside 102..=%d", id, 101+workers*each)
	}

	_, err = s.Counter("bad tag")
	assert.ErrorIs(t, err, segment.ErrInvalid)
}

// TestExhausted: a tag at 2^63-1 is exhausted, told apart from other
// errors of the server by the counter's value. The store runs on a
// UniversalClient, as a Cluster or Sentinel client would pass it.
func TestExhausted(t *testing.T) {
	t.Parallel()
	addr, prefix, client := newPrefix(t)
	ctx := context.Background()
	uc := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{addr}})
	t.Cleanup(func() { uc.Close() })
	s, err := redisstore.New(ctx, uc, redisstore.Options{Prefix: prefix, AllowVolatile: true})
	require.NoError(t, err)
	require.NoError(t, client.Set(ctx, prefix+"t", int64(math.MaxInt64-10), 0).Err())
	_, err = s.ReserveBlock(ctx, "t", 11)
	assert.ErrorIs(t, err, segment.ErrExhausted)
	b, err := s.ReserveBlock(ctx, "t", 10)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: math.MaxInt64 - 9, Last: math.MaxInt64}, b)
	c, err := s.Counter("t")
	require.NoError(t, err)
	_, err = c.Next(ctx)
	assert.ErrorIs(t, err, segment.ErrExhausted)

	// A key set to something else gives an error, never a block.
	require.NoError(t, client.Set(ctx, prefix+"u", "x", 0).Err())
	_, err = s.ReserveBlock(ctx, "u", 1)
	assert.ErrorContains(t, err, "redisstore: INCRBY "+prefix+"u 1: ")
	assert.NotErrorIs(t, err, segment.ErrExhausted, "a refusal of the server other than overflow")
	require.NoError(t, client.Set(ctx, prefix+"v", -50, 0).Err())
	_, err = s.ReserveBlock(ctx, "v", 10)
	assert.ErrorContains(t, err, "below 1")
}

// TestDurability: without AllowVolatile, Open accepts the server only if
// it runs with appendonly yes and appendfsync always.
func TestDurability(t *testing.T) {
	t.Parallel()
	addr, prefix, client := newPrefix(t)
	ctx := context.Background()
	cfg, err := client.ConfigGet(ctx, "append*").Result()
	require.NoError(t, err)
	s, err := redisstore.Open(ctx, addr, redisstore.Options{Prefix: prefix})
	if cfg["appendonly"] == "yes" && cfg["appendfsync"] == "always" {
		require.NoError(t, err)
		s.Close()
		return
	}
	require.ErrorIs(t, err, redisstore.ErrNotDurable)
	assert.ErrorContains(t, err, "appendonly "+cfg["appendonly"]+" and appendfsync "+cfg["appendfsync"])
	assert.ErrorContains(t, err, "AllowVolatile")
}

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := redisstore.Open(ctx, "redis://[bad", redisstore.Options{})
	assert.ErrorIs(t, err, segment.ErrInvalid)
	long := make([]byte, redisstore.MaxPrefixLen+1)
	_, err = redisstore.Open(ctx, "127.0.0.1:1", redisstore.Options{Prefix: string(long)})
	assert.ErrorIs(t, err, segment.ErrInvalid)
	assert.ErrorContains(t, err, "Prefix is 257 bytes, want up to 256")
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := redisstore.Open(ctx, "127.0.0.1:1", redisstore.Options{AllowVolatile: true})
	assert.ErrorContains(t, err, "redisstore: connect to 127.0.0.1:1: ")
	assert.ErrorIs(t, err, redisstore.ErrUnavailable)
	assert.ErrorIs(t, err, idkit.ErrUnavailable, "may pass")

	// A URL that does not parse is not repeated: it may hold a password.
	_, err = redisstore.Open(ctx, "redis://app:s3cret@127.0.0.1:notaport/0", redisstore.Options{AllowVolatile: true})
	assert.ErrorIs(t, err, segment.ErrInvalid)
	assert.ErrorContains(t, err, "the URL does not parse")
	assert.NotContains(t, err.Error(), "s3cret")
}

// TestProcesses and TestKillLoop run alone, not in parallel: their
// processes would eat into the timeouts of the package's other tests.
func TestProcesses(t *testing.T) {
	addr, prefix, _ := newPrefix(t)
	segmenttest.Processes(t, 4, 100_000, envAddr+"="+addr, envPrefix+"="+prefix)
}

func TestKillLoop(t *testing.T) {
	addr, prefix, _ := newPrefix(t)
	segmenttest.KillLoop(t, 15, envAddr+"="+addr, envPrefix+"="+prefix)
}

// TestServerRestart: processes issue IDs while a Redis of the test's own,
// with appendfsync always, is killed with SIGKILL and started again, five
// times; no ID repeats and every round starts above the rounds before.
func TestServerRestart(t *testing.T) {
	s := startOwnServer(t, "--appendonly", "yes", "--appendfsync", "always")
	addr := s.addr
	restart := func(t *testing.T) {
		s.kill()
		s.start()
		require.Equal(t, addr, s.addr, "the restarted server took another port; the children cannot follow it")
	}
	segmenttest.RestartLoop(t, 5, restart, envAddr+"="+addr, envPrefix+"=idkit_restart:")
}

func TestOutage(t *testing.T) {
	t.Parallel()
	addr, prefix, _ := newPrefix(t)
	proxy := tcpproxy.New(t, "tcp://"+addr)
	s := open(t, proxy.Addr(), prefix)
	segmenttest.Outage(t, s, proxy.Cut, proxy.Restore, nil, 10*time.Second)
}

// TestClosed: after Close every call of the Store and of its Counters
// fails with ErrClosed, of kind idkit.ErrClosed and never
// idkit.ErrUnavailable.
func TestClosed(t *testing.T) {
	t.Parallel()
	addr, prefix, _ := newPrefix(t)
	ctx := context.Background()
	s := open(t, addr, prefix)
	c, err := s.Counter("t")
	require.NoError(t, err)
	_, err = c.Next(ctx)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close does nothing")
	_, err = s.ReserveBlock(ctx, "t", 10)
	assertClosed(t, err, "ReserveBlock")
	_, err = c.Next(ctx)
	assertClosed(t, err, "Counter.Next")
	_, err = s.Counter("u")
	assertClosed(t, err, "Counter")
}

func assertClosed(t *testing.T, err error, call string) {
	t.Helper()
	assert.ErrorIs(t, err, redisstore.ErrClosed, call)
	assert.ErrorIs(t, err, idkit.ErrClosed, call)
	assert.NotErrorIs(t, err, idkit.ErrUnavailable, call)
}
