package compare

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/idkit/idkit/clock"
)

// ThrottlePoll is how often a paused load reads the server's load again.
const ThrottlePoll = time.Second

// MaxMaxLoad is the largest Options.MaxLoad.
const MaxMaxLoad = 100_000

// busy is what a throttle reads of a server between two batches: the
// sessions running a statement besides the run's, and the replay lag of
// its furthest standby (PostgreSQL).
type busy struct {
	running int
	lag     time.Duration
}

// throttle holds a server's loads between two batches while the server
// is busier than Options.MaxLoad or Options.MaxLag allow, as
// pt-online-schema-change's --max-load and --max-lag do, and counts the
// pauses for the report.
type throttle struct {
	maxLoad  int
	maxLag   time.Duration
	clock    clock.Clock
	poll     time.Duration
	progress io.Writer
	engine   string
	read     func(context.Context) (busy, error)

	pauses int
	paused time.Duration
}

// newThrottle returns o's throttle of engine, which read reads; nil when
// o sets no limit.
func newThrottle(o Options, engine string, read func(context.Context) (busy, error)) *throttle {
	if o.MaxLoad == 0 && o.MaxLag == 0 {
		return nil
	}
	return &throttle{maxLoad: o.MaxLoad, maxLag: o.MaxLag, clock: clock.System(), poll: ThrottlePoll, progress: o.Progress, engine: engine, read: read}
}

// over says which limit b passes, or "".
func (t *throttle) over(b busy) string {
	var why []string
	if t.maxLoad > 0 && b.running > t.maxLoad {
		why = append(why, fmt.Sprintf("%d other sessions running a statement, above --max-load %d", b.running, t.maxLoad))
	}
	if t.maxLag > 0 && b.lag > t.maxLag {
		why = append(why, fmt.Sprintf("a standby %s behind, above --max-lag %s", b.lag.Round(time.Millisecond), t.maxLag))
	}
	return strings.Join(why, "; ")
}

// wait returns once the server is within the limits, reading it every
// poll while it is not; it says when it pauses and when it goes on.
func (t *throttle) wait(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var since time.Time
	for {
		b, err := t.read(ctx)
		if err != nil {
			return fmt.Errorf("read the server's load for --max-load/--max-lag: %w", err)
		}
		why := t.over(b)
		if why == "" {
			if !since.IsZero() {
				d := t.clock.Now().Sub(since)
				t.paused += d
				t.say("%s: going on after %s\n", t.engine, d.Round(time.Millisecond))
			}
			return nil
		}
		if since.IsZero() {
			since = t.clock.Now()
			t.pauses++
			t.say("%s: paused: %s\n", t.engine, why)
		}
		if err := clock.SleepContext(ctx, t.clock, t.poll); err != nil {
			return err
		}
	}
}

func (t *throttle) say(format string, args ...any) {
	if t.progress != nil {
		fmt.Fprintf(t.progress, format, args...)
	}
}

// note says how often the loads paused, for the report; "" without a
// throttle.
func (t *throttle) note() string {
	if t == nil {
		return ""
	}
	var limits []string
	if t.maxLoad > 0 {
		limits = append(limits, fmt.Sprintf("--max-load %d", t.maxLoad))
	}
	if t.maxLag > 0 {
		limits = append(limits, fmt.Sprintf("--max-lag %s", t.maxLag))
	}
	return fmt.Sprintf("throttled by %s: the loads paused %d times, for %s in all", strings.Join(limits, " and "), t.pauses, t.paused.Round(time.Millisecond))
}

// pgBusy reads, on conn, PostgreSQL's client sessions running a statement
// other than conn's own, and the largest replay lag of its standbys
// (pg_stat_replication; 0 without any). Both need pg_read_all_stats (or a
// superuser) to see other roles' sessions, which the preflight asks for.
func pgBusy(conn *pgx.Conn) func(context.Context) (busy, error) {
	return func(ctx context.Context) (busy, error) {
		var b busy
		var lag float64
		err := conn.QueryRow(ctx, `SELECT
			  (SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND backend_type = 'client backend' AND pid <> pg_backend_pid()),
			  coalesce((SELECT extract(epoch FROM max(replay_lag)) FROM pg_stat_replication), 0)`).Scan(&b.running, &lag)
		b.lag = time.Duration(lag * float64(time.Second))
		return b, err
	}
}

// mysqlBusy reads MariaDB/MySQL's Threads_running on conn, less conn's own.
func mysqlBusy(conn *sql.Conn) func(context.Context) (busy, error) {
	return func(ctx context.Context) (busy, error) {
		var b busy
		err := conn.QueryRowContext(ctx, "SELECT VARIABLE_VALUE - 1 FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'THREADS_RUNNING'").Scan(&b.running)
		return b, err
	}
}
