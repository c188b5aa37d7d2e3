package compare

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/internal/testkit/testwait"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestThrottleOptions: out-of-range limits, and --max-lag beside a
// MariaDB/MySQL server, which does not know its replicas' lag.
func TestThrottleOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{MaxLoad: -1}, {MaxLoad: MaxMaxLoad + 1}, {MaxLag: -time.Second}, {MaxLag: time.Second, MySQLDSN: "root@tcp(127.0.0.1:3306)/test"}} {
		_, err := o.withDefaults()
		assert.ErrorIs(t, err, ErrOptions, "%+v", o)
	}
	_, err := Options{MaxLag: time.Second, MySQLDSN: "x"}.withDefaults()
	assert.ErrorContains(t, err, "a MariaDB/MySQL server does not know its replicas' lag")
}

// TestLikeThrottledByMaxLoad: on both servers, while two other sessions
// run a statement, a --like run with --max-load 1 pauses its load between
// two batches and says so; once they end, it goes on, and the report says
// how often it paused. It does not run in parallel, so that the servers'
// running sessions are its own.
func TestLikeThrottledByMaxLoad(t *testing.T) {
	skipUnderRace(t)
	ctx := context.Background()
	pg, my, name := acceptServers(t, 2_000)
	pgDSN := serverDSN(t, engine.EnvPostgresDSN)
	var err error

	for _, eng := range []string{engine.Postgres, engine.MySQL} {
		t.Run(eng, func(t *testing.T) {
			// Two sessions that run a statement until they are ended.
			var busyEnd []func()
			for range 2 {
				switch eng {
				case engine.Postgres:
					c, err := pgx.Connect(ctx, pgDSN)
					require.NoError(t, err)
					var pid uint32
					require.NoError(t, c.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
					go c.Exec(ctx, "SELECT pg_sleep(600)")
					busyEnd = append(busyEnd, func() {
						pg.Exec(context.Background(), "SELECT pg_cancel_backend($1)", pid)
						c.Close(context.Background())
					})
				default:
					c, err := my.Conn(ctx)
					require.NoError(t, err)
					var id int64
					require.NoError(t, c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id))
					go c.ExecContext(ctx, "SELECT SLEEP(600)")
					busyEnd = append(busyEnd, func() {
						my.Exec("KILL QUERY ?", id)
						c.Close()
					})
				}
			}
			ended := false
			end := func() {
				if !ended {
					ended = true
					for _, f := range busyEnd {
						f()
					}
				}
			}
			t.Cleanup(end)

			o := likeOptions(t, eng, name+".orders")
			o.N, o.BatchSize, o.Sample = 2_000, 500, 500
			o.Schemes, err = scheme.Select("counter")
			require.NoError(t, err)
			o.MaxLoad = 1
			paused := make(chan struct{})
			var once sync.Once
			o.Progress = writerFunc(func(p []byte) {
				if strings.Contains(string(p), eng+": paused: ") {
					assert.Contains(t, string(p), "other sessions running a statement, above --max-load 1")
					once.Do(func() { close(paused) })
				}
			})
			result := make(chan *report.Report, 1)
			go func() {
				r, err := Run(o)
				assert.NoError(t, err)
				result <- r
			}()
			testwait.Recv(t, paused, "the load pauses while two sessions run")
			end()
			var r *report.Report
			select {
			case r = <-result:
			case <-time.After(60 * time.Second):
				t.Fatal("the run did not go on within 60 s of the sessions' end")
			}
			require.NotNil(t, r)
			require.Len(t, r.Like, 1)
			assert.Contains(t, strings.Join(r.Like[0].Notes, "\n"), "throttled by --max-load 1: the loads paused ")
		})
	}
}
