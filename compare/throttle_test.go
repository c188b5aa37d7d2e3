package compare

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
)

// waitFor fails the test unless done is closed within a bound.
func waitFor(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not within 30 s", what)
	}
}

// sleepers returns a channel closed once n goroutines sleep on c.
func sleepers(c *clock.Fake, n int) <-chan struct{} {
	done := make(chan struct{})
	go func() { c.WaitForSleepers(n); close(done) }()
	return done
}

// TestThrottlePausesWhileBusy: a throttled load waits while the server
// is over a limit, reading it once a poll, says why once and how long it
// paused, and goes on at the limit; a stopped run ends the wait.
func TestThrottlePausesWhileBusy(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(time.Unix(1_800_000_000, 0))
	var mu sync.Mutex
	state := busy{running: 5, lag: 2 * time.Second}
	reads := 0
	var out strings.Builder
	th := &throttle{maxLoad: 3, maxLag: time.Second, clock: fake, poll: time.Second, progress: &out, engine: "postgres",
		read: func(context.Context) (busy, error) {
			mu.Lock()
			defer mu.Unlock()
			reads++
			return state, nil
		}}
	done := make(chan error, 1)
	go func() { done <- th.wait(context.Background()) }()
	waitFor(t, sleepers(fake, 1), "the throttle pauses")
	fake.Advance(time.Second)
	fake.WaitForWakes()
	waitFor(t, sleepers(fake, 1), "still over: it pauses again")
	mu.Lock()
	state = busy{running: 3, lag: time.Second} // at the limits, not over
	mu.Unlock()
	fake.Advance(time.Second)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the throttle did not go on within 30 s of the server's load falling")
	}
	assert.Equal(t, 3, reads)
	assert.Equal(t, 1, th.pauses)
	assert.Equal(t, 2*time.Second, th.paused)
	assert.Equal(t, "postgres: paused: 5 other sessions running a statement, above --max-load 3; a standby 2s behind, above --max-lag 1s\npostgres: going on after 2s\n", out.String())
	assert.Equal(t, "throttled by --max-load 3 and --max-lag 1s: the loads paused 1 times, for 2s in all", th.note())

	// Within the limits it returns at once, without a word.
	out.Reset()
	require.NoError(t, th.wait(context.Background()))
	assert.Empty(t, out.String())

	// A stopped run ends a pause.
	mu.Lock()
	state = busy{running: 9}
	mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- th.wait(ctx) }()
	waitFor(t, sleepers(fake, 1), "the throttle pauses")
	cancel()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(30 * time.Second):
		t.Fatal("a stopped run's pause did not end within 30 s")
	}

	var nilThrottle *throttle
	assert.NoError(t, nilThrottle.wait(context.Background()), "no limit, no wait")
	assert.Empty(t, nilThrottle.note())
}

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
	pgDSN := serverDSN(t, EnvPostgresDSN)
	var err error

	for _, engine := range []string{EnginePostgres, EngineMySQL} {
		t.Run(engine, func(t *testing.T) {
			// Two sessions that run a statement until they are ended.
			var busyEnd []func()
			for range 2 {
				switch engine {
				case EnginePostgres:
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

			o := likeOptions(t, engine, name+".orders")
			o.N, o.BatchSize, o.Sample = 2_000, 500, 500
			o.Schemes, err = Select("counter")
			require.NoError(t, err)
			o.MaxLoad = 1
			paused := make(chan struct{})
			var once sync.Once
			o.Progress = writerFunc(func(p []byte) {
				if strings.Contains(string(p), engine+": paused: ") {
					assert.Contains(t, string(p), "other sessions running a statement, above --max-load 1")
					once.Do(func() { close(paused) })
				}
			})
			result := make(chan *Report, 1)
			go func() {
				r, err := Run(o)
				assert.NoError(t, err)
				result <- r
			}()
			waitFor(t, paused, "the load pauses while two sessions run")
			end()
			var r *Report
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
