package engine

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idkit/idkit/clock"
)

// ThrottlePoll is how often a paused load reads the server's load again.
const ThrottlePoll = time.Second

// Busy is what a throttle reads of a server between two batches: the
// sessions running a statement besides the run's, and the replay lag of
// its furthest standby (PostgreSQL).
type Busy struct {
	Running int
	Lag     time.Duration
}

// Throttle holds a server's loads between two batches while the server
// is busier than Options.MaxLoad or Options.MaxLag allow, as
// pt-online-schema-change's --max-load and --max-lag do, and counts the
// pauses for the report.
type Throttle struct {
	maxLoad  int
	maxLag   time.Duration
	clock    clock.Clock
	poll     time.Duration
	progress io.Writer
	engine   string
	read     func(context.Context) (Busy, error)

	pauses int
	paused time.Duration
}

// Limits are how busy a server may be before a throttle holds the loads
// on it (--max-load, --max-lag; 0: no limit), and where the throttle
// says that it waits (nil: nowhere).
type Limits struct {
	MaxLoad  int
	MaxLag   time.Duration
	Progress io.Writer
}

// NewThrottle returns the throttle of engine's loads, which read reads:
// it holds them while more than lim.MaxLoad other sessions run a
// statement or a replica lags by more than lim.MaxLag; nil when lim sets
// no limit.
func NewThrottle(lim Limits, engine string, read func(context.Context) (Busy, error)) *Throttle {
	if lim.MaxLoad == 0 && lim.MaxLag == 0 {
		return nil
	}
	return &Throttle{maxLoad: lim.MaxLoad, maxLag: lim.MaxLag, clock: clock.System(), poll: ThrottlePoll, progress: lim.Progress, engine: engine, read: read}
}

// over says which limit b passes, or "".
func (t *Throttle) over(b Busy) string {
	var why []string
	if t.maxLoad > 0 && b.Running > t.maxLoad {
		why = append(why, fmt.Sprintf("%d other sessions running a statement, above --max-load %d", b.Running, t.maxLoad))
	}
	if t.maxLag > 0 && b.Lag > t.maxLag {
		why = append(why, fmt.Sprintf("a standby %s behind, above --max-lag %s", b.Lag.Round(time.Millisecond), t.maxLag))
	}
	return strings.Join(why, "; ")
}

// Wait returns once the server is within the limits, reading it every
// poll while it is not; it says when it pauses and when it goes on.
func (t *Throttle) Wait(ctx context.Context) error {
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

func (t *Throttle) say(format string, args ...any) {
	if t.progress != nil {
		fmt.Fprintf(t.progress, format, args...)
	}
}

// Note says how often the loads paused, for the report; "" without a
// throttle.
func (t *Throttle) Note() string {
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
