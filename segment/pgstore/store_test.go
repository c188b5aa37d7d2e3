package pgstore_test

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/pgstore"
)

const envDSN = "IDKIT_POSTGRES_DSN"

// newSchema creates a schema of the test's own, dropped when it ends, and
// returns the DSN, the schema and a pool on the server.
func newSchema(t testing.TB) (dsn, schema string, pool *pgxpool.Pool) {
	t.Helper()
	dsn = storetest.Server(t, envDSN, "PostgreSQL", "postgres://postgres@127.0.0.1:5432/test")
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	require.NoError(t, err)
	schema = "idkit_seg_" + storetest.Suffix(t)
	_, err = pool.Exec(ctx, "CREATE SCHEMA "+schema)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		assert.NoError(t, err)
		pool.Close()
	})
	return dsn, schema, pool
}

func open(t testing.TB, dsn, table string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Table: table})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestReserveBlock(t *testing.T) {
	t.Parallel()
	dsn, schema, pool := newSchema(t)
	ctx := context.Background()
	s := open(t, dsn, schema+".blocks")

	var got []segment.Block
	for _, step := range []int64{10, 1, 1000} {
		b, err := s.ReserveBlock(ctx, "orders", step)
		require.NoError(t, err)
		got = append(got, b)
	}
	assert.Equal(t, []segment.Block{{First: 1, Last: 10}, {First: 11, Last: 11}, {First: 12, Last: 1011}}, got)

	// Another handle, as another process would open, continues the tag;
	// other tags start from 1.
	again := open(t, dsn, schema+".blocks")
	b, err := again.ReserveBlock(ctx, "orders", 5)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: 1012, Last: 1016}, b)
	b, err = again.ReserveBlock(ctx, "users", 5)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: 1, Last: 5}, b)

	// The row is Leaf's: the last ID, the last step, when.
	var maxID, step int64
	var updated time.Time
	require.NoError(t, pool.QueryRow(ctx, "SELECT max_id, step, update_time FROM "+schema+".blocks WHERE biz_tag = 'orders'").Scan(&maxID, &step, &updated))
	assert.Equal(t, int64(1016), maxID)
	assert.Equal(t, int64(5), step)
	assert.WithinDuration(t, time.Now(), updated, time.Minute)
}

// TestConcurrent reserves from several goroutines on two pools, as two
// processes would: the blocks tile 1..total with no gap and no overlap,
// and each goroutine's blocks increase.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	dsn, schema, _ := newSchema(t)
	stores := []*pgstore.Store{open(t, dsn, schema+".blocks"), open(t, dsn, schema+".blocks")}
	const workers, each, step = 8, 40, 7
	var (
		mu  sync.Mutex
		all []segment.Block
		wg  sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			var last int64
			for range each {
				b, err := stores[w%2].ReserveBlock(context.Background(), "t", step)
				if !assert.NoError(t, err) {
					return
				}
				assert.Greater(t, b.First, last, "worker %d: blocks not increasing", w)
				last = b.Last
				mu.Lock()
				all = append(all, b)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, all, workers*each)
	sort.Slice(all, func(i, j int) bool { return all[i].First < all[j].First })
	next := int64(1)
	for _, b := range all {
		require.Equal(t, next, b.First, "gap or overlap at %v", b)
		require.Equal(t, int64(step), b.Len())
		next = b.Last + 1
	}
}

// TestConcurrentOpen: processes that start together all open the store,
// though each finds the table missing and creates it. Without the advisory
// lock around CREATE TABLE IF NOT EXISTS, PostgreSQL failed some of them
// with "type already exists" or a duplicate key in its catalog.
func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	dsn, schema, _ := newSchema(t)
	ctx := context.Background()
	const rounds, openers = 10, 8
	pools := make([]*pgxpool.Pool, openers)
	for i := range pools {
		pool, err := pgxpool.New(ctx, dsn)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		require.NoError(t, pool.Ping(ctx)) // connected before the race starts
		pools[i] = pool
	}
	for round := range rounds {
		table := fmt.Sprintf("%s.blocks%d", schema, round)
		errs := make([]error, openers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, pool := range pools {
			wg.Go(func() {
				<-start
				s, err := pgstore.New(ctx, pool, pgstore.Options{Table: table})
				if err == nil {
					_, err = s.ReserveBlock(ctx, "t", 1)
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, opener %d", round, i)
		}
	}
}

// TestInvalidTable: a table name that is not an identifier is refused
// before anything reaches the server. (Bad tags and steps are the
// conformance suite's.)
func TestInvalidTable(t *testing.T) {
	t.Parallel()
	dsn, schema, _ := newSchema(t)
	for _, table := range []string{"a.b.c", "1abc", "bad-name", "x;drop table y", schema + "."} {
		_, err := pgstore.Open(context.Background(), dsn, pgstore.Options{Table: table})
		assert.ErrorIs(t, err, segment.ErrInvalid, table)
		assert.ErrorContains(t, err, fmt.Sprintf("Table %q", table))
	}
}

// TestExhausted: a block past 2^63-1 is refused and leaves the row as it
// was; a block ending exactly at 2^63-1 is issued.
func TestExhausted(t *testing.T) {
	t.Parallel()
	dsn, schema, pool := newSchema(t)
	ctx := context.Background()
	s := open(t, dsn, schema+".blocks")
	_, err := s.ReserveBlock(ctx, "t", 1)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "UPDATE "+schema+".blocks SET max_id = $1", int64(math.MaxInt64-10))
	require.NoError(t, err)

	_, err = s.ReserveBlock(ctx, "t", 11)
	assert.ErrorIs(t, err, segment.ErrExhausted)
	b, err := s.ReserveBlock(ctx, "t", 10)
	require.NoError(t, err)
	assert.Equal(t, segment.Block{First: math.MaxInt64 - 9, Last: math.MaxInt64}, b)
	_, err = s.ReserveBlock(ctx, "t", 1)
	assert.ErrorIs(t, err, segment.ErrExhausted)
}

// TestNotDurable: New refuses sessions with synchronous_commit off.
func TestNotDurable(t *testing.T) {
	t.Parallel()
	dsn, schema, _ := newSchema(t)
	cfg, err := pgxpool.ParseConfig(dsn)
	require.NoError(t, err)
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	defer pool.Close()
	_, err = pgstore.New(context.Background(), pool, pgstore.Options{Table: schema + ".blocks"})
	assert.ErrorIs(t, err, pgstore.ErrNotDurable)
	assert.ErrorContains(t, err, "synchronous_commit is off")
}

// TestUnreachable: a server that cannot be reached gives an error, never
// a block; once it is back, blocks continue above every block issued.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	dsn, schema, _ := newSchema(t)
	ctx := context.Background()

	_, err := pgstore.Open(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=5", pgstore.Options{})
	assert.ErrorContains(t, err, "pgstore: connect: ")
	assert.ErrorIs(t, err, pgstore.ErrUnavailable)
	assert.ErrorIs(t, err, idkit.ErrUnavailable, "may pass")

	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy := tcpproxy.New(t, "tcp://"+u.Host)
	u.Host = proxy.Addr()
	s := open(t, u.String(), schema+".blocks")
	b, err := s.ReserveBlock(ctx, "t", 100)
	require.NoError(t, err)
	require.Equal(t, segment.Block{First: 1, Last: 100}, b)

	proxy.Cut()
	for range 3 {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		b, err := s.ReserveBlock(ctx, "t", 100)
		cancel()
		require.Error(t, err, "got %v through a cut connection", b)
		assert.ErrorContains(t, err, `pgstore: reserve block of 100 for tag "t"`)
		assert.ErrorIs(t, err, idkit.ErrUnavailable)
	}
	proxy.Restore()
	testwait.Until(t, func() bool {
		b, err = s.ReserveBlock(ctx, "t", 100)
		return err == nil
	}, "reserving again through the restored connection")
	assert.Equal(t, int64(101), b.First, "the blocks after the cut continue the committed ones")
}

// TestClosed: after Close every call fails with ErrClosed, of kind
// idkit.ErrClosed and never idkit.ErrUnavailable, whether or not the store
// made its pool.
func TestClosed(t *testing.T) {
	t.Parallel()
	dsn, schema, pool := newSchema(t)
	ctx := context.Background()
	own := open(t, dsn, schema+".own")
	lent, err := pgstore.New(ctx, pool, pgstore.Options{Table: schema + ".lent"})
	require.NoError(t, err)
	for _, s := range []*pgstore.Store{own, lent} {
		_, err := s.ReserveBlock(ctx, "t", 10)
		require.NoError(t, err)
		require.NoError(t, s.Close())
		require.NoError(t, s.Close(), "a second Close does nothing")
		_, err = s.ReserveBlock(ctx, "t", 10)
		assert.ErrorIs(t, err, pgstore.ErrClosed)
		assert.ErrorIs(t, err, idkit.ErrClosed)
		assert.NotErrorIs(t, err, idkit.ErrUnavailable)
	}
	var one int
	require.NoError(t, pool.QueryRow(ctx, "SELECT 1").Scan(&one), "Close leaves a lent pool open")
}

// TestRefused: a role without the rights the store needs is refused with
// ErrRefused, of kind idkit.ErrRefused, which no retry changes.
func TestRefused(t *testing.T) {
	t.Parallel()
	dsn, schema, pool := newSchema(t)
	ctx := context.Background()
	role := schema + "_nobody"
	_, err := pool.Exec(ctx, "CREATE ROLE "+role+" LOGIN")
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP ROLE "+role)
		assert.NoError(t, err)
	})
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.User(role)
	_, err = pgstore.Open(ctx, u.String(), pgstore.Options{Table: schema + ".blocks"})
	require.Error(t, err, "a role with no rights on the schema")
	assert.ErrorIs(t, err, pgstore.ErrRefused)
	assert.ErrorIs(t, err, idkit.ErrRefused)
	assert.NotErrorIs(t, err, idkit.ErrUnavailable, "not retryable")
	assert.ErrorContains(t, err, "permission denied")
}
