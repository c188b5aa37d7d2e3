package fleet

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
	idstore "github.com/idkit/idkit/store"
)

var logEpoch = time.Date(2025, 11, 21, 9, 30, 0, 123456789, time.UTC)

// newTestLog returns a Log under a prefix of the test's own on cli.
func newTestLog(t testing.TB, cli *clientv3.Client, clk clock.Clock) *Log {
	t.Helper()
	// A long timeout: an attempt that runs out on a loaded machine is
	// tried again, and may leave a launch no caller received, which the
	// tests of the key layout would see.
	l, err := NewLog(LogOptions{Client: cli, Prefix: fleettest.Prefix(t, cli), Clock: clk, Timeout: time.Minute})
	require.NoError(t, err)
	return l
}

// put writes a raw value under the log's prefix, as another program
// would.
func put(t *testing.T, l *Log, key, value string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := l.cli.Put(ctx, key, value)
	require.NoError(t, err)
}

// dump returns every key under the log's prefix, without the prefix, and
// its value.
func dump(t *testing.T, l *Log) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := l.cli.Get(ctx, l.prefix, clientv3.WithPrefix())
	require.NoError(t, err)
	kvs := map[string]string{}
	for _, kv := range resp.Kvs {
		kvs[string(kv.Key[len(l.prefix):])] = string(kv.Value)
	}
	return kvs
}

func TestNewLogOptions(t *testing.T) {
	t.Parallel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:1"}})
	require.NoError(t, err) // the client dials lazily
	defer cli.Close()
	tests := []struct {
		name string
		o    LogOptions
		want string // substring of the error; empty for success
	}{
		{"defaults", LogOptions{Client: cli}, ""},
		{"no client", LogOptions{}, "LogOptions.Client is nil"},
		{"negative timeout", LogOptions{Client: cli, Timeout: -time.Second}, "LogOptions.Timeout = -1s, want > 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLog(tt.o)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Equal(t, "idkit/", l.Prefix())
				assert.Equal(t, 5*time.Second, l.timeout)
				assert.NotNil(t, l.clock)
				return
			}
			assert.ErrorIs(t, err, ErrInvalid)
			assert.ErrorIs(t, err, launchlog.ErrInvalid)
			assert.ErrorContains(t, err, tt.want)
			assert.Nil(t, l)
		})
	}
	l, err := NewLog(LogOptions{Client: cli, Prefix: "app/ids/", Timeout: time.Second})
	require.NoError(t, err)
	assert.Equal(t, "app/ids/", l.Prefix())
	assert.Equal(t, time.Second, l.timeout)
}

// TestLogConformance runs the launch log contract that launchlog keeps
// against one etcd member; the second handle of each store is a
// Log on a client of its own, as on another host.
func TestLogConformance(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 1)
	cli := c.Client()
	storetest.LaunchLog(t, func(t *testing.T, clk clock.Clock) (idstore.LaunchLog, func(*testing.T) idstore.LaunchLog) {
		l := newTestLog(t, cli, clk)
		again := func(t *testing.T) idstore.LaunchLog {
			l2, err := NewLog(LogOptions{Client: fleettest.NewClient(t, c.Endpoints()...), Prefix: l.prefix, Clock: clk})
			require.NoError(t, err)
			return l2
		}
		return l, again
	})
}

func TestLogKeyLayout(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 1)
	l := newTestLog(t, c.Client(), clock.NewFake(logEpoch))
	_, err := l.Begin(context.Background(), idstore.Info{Ticket: "REL-1", By: "ann", Note: "n"})
	require.NoError(t, err)
	for range 3 {
		_, err = l.NextGenerator(context.Background(), 12)
		require.NoError(t, err)
	}
	_, err = l.NextGenerator(context.Background(), 0)
	require.NoError(t, err)
	_, err = l.AdvanceHighWater(context.Background(), "traceid/node/7", logEpoch)
	require.NoError(t, err)
	_, err = l.AdvanceHighWater(context.Background(), "old", time.Date(1900, 1, 2, 3, 4, 5, 6, time.UTC))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"launches/last":            "1",
		"launches/00001":           `{"id":1,"started_at":"2025-11-21T09:30:00.123456789Z","ticket":"REL-1","by":"ann","note":"n"}`,
		"generators/00012":         "3",
		"generators/00000":         "1",
		"highwater/traceid/node/7": "2025-11-21T09:30:00.123456789Z",
		"highwater/old":            "1900-01-02T03:04:05.000000006Z",
	}, dump(t, l))
}

func TestLogBeginExhausted(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 1)
	l := newTestLog(t, c.Client(), clock.NewFake(logEpoch))
	put(t, l, l.lastKey(), "99998")
	put(t, l, l.launchKey(99998), `{"id":99998,"started_at":"2025-11-21T09:00:00Z","ticket":"","by":"","note":"seeded"}`)

	got, err := l.Begin(context.Background(), idstore.Info{Note: "last"})
	require.NoError(t, err)
	assert.Equal(t, launchlog.MaxLaunch, got.ID)
	for range 2 {
		_, err = l.Begin(context.Background(), idstore.Info{Note: "too many"})
		assert.ErrorIs(t, err, launchlog.ErrLaunchesExhausted)
		assert.ErrorContains(t, err, l.prefix)
	}
	cur, err := l.Current(context.Background())
	require.NoError(t, err)
	assert.Equal(t, got, cur)
	kvs := dump(t, l)
	assert.Equal(t, "99999", kvs["launches/last"])
	assert.Len(t, kvs, 3, "nothing recorded beyond 99999")
}

func TestLogNextGeneratorExhausted(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 1)
	l := newTestLog(t, c.Client(), nil)
	put(t, l, l.generatorKey(7), "99999")

	got, err := l.NextGenerator(context.Background(), 7)
	require.NoError(t, err)
	assert.Equal(t, launchlog.MaxGenerator, got)
	for range 2 {
		_, err = l.NextGenerator(context.Background(), 7)
		assert.ErrorIs(t, err, launchlog.ErrGeneratorsExhausted)
		assert.ErrorContains(t, err, "launch 7")
	}
	// Another handle, which has seen nothing, reads the same from etcd.
	l2, err := NewLog(LogOptions{Client: l.cli, Prefix: l.prefix})
	require.NoError(t, err)
	_, err = l2.NextGenerator(context.Background(), 7)
	assert.ErrorIs(t, err, launchlog.ErrGeneratorsExhausted)
	got, err = l.NextGenerator(context.Background(), 8)
	require.NoError(t, err, "other launches are not affected")
	assert.Equal(t, 0, got)
	assert.Equal(t, "100000", dump(t, l)["generators/00007"])
}

// TestLogStartedAtNeverBackwards: hosts' clocks disagree, or one is
// stepped back; a launch never starts before the one it follows.
func TestLogStartedAtNeverBackwards(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 1)
	cli := c.Client()
	ahead := clock.NewFake(logEpoch.Add(time.Hour))
	behind := clock.NewFake(logEpoch)
	l := newTestLog(t, cli, ahead)
	l2, err := NewLog(LogOptions{Client: cli, Prefix: l.prefix, Clock: behind})
	require.NoError(t, err)

	first, err := l.Begin(context.Background(), idstore.Info{By: "ahead"})
	require.NoError(t, err)
	assert.Equal(t, logEpoch.Add(time.Hour), first.StartedAt)
	second, err := l2.Begin(context.Background(), idstore.Info{By: "behind"})
	require.NoError(t, err)
	assert.Equal(t, 2, second.ID)
	assert.Equal(t, first.StartedAt, second.StartedAt, "a clock behind stamps the previous launch's time")
	behind.Set(logEpoch.Add(2 * time.Hour))
	third, err := l2.Begin(context.Background(), idstore.Info{By: "behind, caught up"})
	require.NoError(t, err)
	assert.Equal(t, logEpoch.Add(2*time.Hour), third.StartedAt)
	list, err := l.List(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []idstore.Launch{first, second, third}, list)
}

// TestLogCorrupt writes values this package never writes under each of
// its keys: every operation that reads them fails with ErrCorrupt and
// hands out nothing.
func TestLogCorrupt(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 1)
	cli := c.Client()
	good := `{"id":1,"started_at":"2025-11-21T09:00:00Z","ticket":"","by":"","note":""}`
	type kv struct{ key, value string }
	tests := []struct {
		name string
		kvs  []kv     // keys without the prefix
		ops  []string // operations that must fail with ErrCorrupt
		want string   // substring of the errors
	}{
		{"last not a number", []kv{{"launches/last", "seven"}}, []string{"Begin", "Current", "Get", "List"}, `"seven"`},
		{"last zero", []kv{{"launches/last", "0"}}, []string{"Begin", "Current", "Get", "List"}, "want a launch id from 1 to 99999"},
		{"last leading zero", []kv{{"launches/last", "01"}, {"launches/00001", good}}, []string{"Begin", "Current", "Get", "List"}, `"01"`},
		{"last beyond the range", []kv{{"launches/last", "100000"}}, []string{"Begin", "Current", "Get", "List"}, `"100000"`},
		{"launch missing", []kv{{"launches/last", "1"}}, []string{"Begin", "Current", "Get", "List"}, "launch 1 missing"},
		{"launch beyond the last", []kv{{"launches/00001", good}}, []string{"Begin", "Get", "List"}, "beyond the last launch id"},
		{"launch not JSON", []kv{{"launches/last", "1"}, {"launches/00001", "{"}}, []string{"Begin", "Current", "Get", "List"}, "launch 1"},
		{"launch with an unknown field", []kv{{"launches/last", "1"}, {"launches/00001", `{"id":1,"x":2}`}}, []string{"Begin", "Current", "Get", "List"}, "unknown field"},
		{"launch with trailing data", []kv{{"launches/last", "1"}, {"launches/00001", good + "{}"}}, []string{"Begin", "Current", "Get", "List"}, "data after the record"},
		{"launch under another id", []kv{{"launches/last", "1"}, {"launches/00001", `{"id":2}`}}, []string{"Begin", "Current", "Get", "List"}, "launch 2 stored under key"},
		{"launch key not five digits", []kv{{"launches/last", "1"}, {"launches/1", good}}, []string{"List"}, "want"},
		{"generator counter not a number", []kv{{"generators/00001", "x"}}, []string{"NextGenerator"}, `generator counter of launch 1 is "x"`},
		{"generator counter zero", []kv{{"generators/00001", "0"}}, []string{"NextGenerator"}, "want 1 to 100000"},
		{"generator counter beyond the range", []kv{{"generators/00001", "100001"}}, []string{"NextGenerator"}, "want 1 to 100000"},
		{"generator counter negative", []kv{{"generators/00001", "-1"}}, []string{"NextGenerator"}, "want 1 to 100000"},
		{"mark in Unix nanoseconds", []kv{{"highwater/k", "1763717400000000000"}}, []string{"HighWater", "AdvanceHighWater"}, "want a UTC time"},
		{"mark in another zone", []kv{{"highwater/k", "2025-11-21T10:30:00.000000000+01:00"}}, []string{"HighWater", "AdvanceHighWater"}, "want a UTC time"},
		{"mark without nanoseconds", []kv{{"highwater/k", "2025-11-21T09:30:00Z"}}, []string{"HighWater", "AdvanceHighWater"}, "want a UTC time"},
		{"mark beyond 2262", []kv{{"highwater/k", "2300-01-01T00:00:00.000000000Z"}}, []string{"HighWater", "AdvanceHighWater"}, "1678 to 2262"},
		{"mark empty", []kv{{"highwater/k", ""}}, []string{"HighWater", "AdvanceHighWater"}, "want a UTC time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := newTestLog(t, cli, clock.NewFake(logEpoch))
			for _, kv := range tt.kvs {
				put(t, l, l.prefix+kv.key, kv.value)
			}
			before := dump(t, l)
			ops := map[string]func() error{
				"Begin":         func() error { _, err := l.Begin(context.Background(), idstore.Info{}); return err },
				"Current":       func() error { _, err := l.Current(context.Background()); return err },
				"Get":           func() error { _, err := l.Get(context.Background(), 1); return err },
				"List":          func() error { _, err := l.List(context.Background()); return err },
				"NextGenerator": func() error { _, err := l.NextGenerator(context.Background(), 1); return err },
				"HighWater":     func() error { _, err := l.HighWater(context.Background(), "k"); return err },
				"AdvanceHighWater": func() error {
					_, err := l.AdvanceHighWater(context.Background(), "k", logEpoch.Add(time.Hour))
					return err
				},
			}
			for _, name := range tt.ops {
				for range 2 { // a second call must not trust what the first one saw
					err := ops[name]()
					assert.ErrorIs(t, err, ErrCorrupt, name)
					assert.ErrorContains(t, err, tt.want, name)
					assert.ErrorContains(t, err, l.prefix, name)
				}
			}
			assert.Equal(t, before, dump(t, l), "a corrupt log is left as it was")
		})
	}
}

// TestLogUnavailable cuts the client off from etcd: every operation fails
// with ErrUnavailable within its timeout, and works again once etcd is
// reachable.
func TestLogUnavailable(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 1)
	px := tcpproxy.New(t, c.Endpoint(0))
	cli := fleettest.NewClient(t, px.Endpoint())
	const timeout = 300 * time.Millisecond
	prefix := fleettest.Prefix(t, c.Client())
	warm, err := NewLog(LogOptions{Client: cli, Prefix: prefix})
	require.NoError(t, err)
	_, err = warm.Begin(context.Background(), idstore.Info{})
	require.NoError(t, err)
	_, err = warm.NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	l, err := NewLog(LogOptions{Client: cli, Prefix: prefix, Timeout: timeout})
	require.NoError(t, err)

	px.Cut()
	for name, op := range logOps(l) {
		start := time.Now()
		err := op()
		took := time.Since(start)
		assert.ErrorIs(t, err, ErrUnavailable, name)
		assert.ErrorContains(t, err, l.prefix, name)
		// The slack covers a loaded machine's scheduling; a retry that
		// ignored the timeout would take a multiple of it.
		assert.Less(t, took, timeout+5*time.Second, "%s took %v with a timeout of %v", name, took, timeout)
	}

	px.Restore()
	testwait.Until(t, func() bool {
		_, err := l.Current(context.Background())
		return err == nil
	}, "the log answering again once the proxy is restored")
	got, err := warm.NextGenerator(context.Background(), 1)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, got, 1, "a value lost in the cut is never handed out")
}

// logOps returns every operation of l, for tests that call them all.
func logOps(l *Log) map[string]func() error { return logOpsIn(context.Background(), l) }

// logOpsIn is logOps with the operations called under ctx.
func logOpsIn(ctx context.Context, l *Log) map[string]func() error {
	return map[string]func() error{
		"Begin":            func() error { _, err := l.Begin(ctx, idstore.Info{}); return err },
		"Current":          func() error { _, err := l.Current(ctx); return err },
		"Get":              func() error { _, err := l.Get(ctx, 1); return err },
		"List":             func() error { _, err := l.List(ctx); return err },
		"NextGenerator":    func() error { _, err := l.NextGenerator(ctx, 1); return err },
		"HighWater":        func() error { _, err := l.HighWater(ctx, "k"); return err },
		"AdvanceHighWater": func() error { _, err := l.AdvanceHighWater(ctx, "k", logEpoch); return err },
	}
}

// TestLogContext: with etcd cut off and a timeout far beyond the test's
// bound, every operation returns once the context passed to it ends, with
// its error.
func TestLogContext(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 1)
	px := tcpproxy.New(t, c.Endpoint(0))
	cli := fleettest.NewClient(t, px.Endpoint())
	l, err := NewLog(LogOptions{Client: cli, Prefix: fleettest.Prefix(t, c.Client()), Timeout: time.Hour})
	require.NoError(t, err)
	_, err = l.Begin(context.Background(), idstore.Info{})
	require.NoError(t, err, "the log answers before the cut")

	px.Cut()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 16)
	ops := logOpsIn(ctx, l)
	for _, op := range ops {
		go func() { done <- op() }()
	}
	cancel()
	for range ops {
		err := testwait.Recv(t, done, "an operation returning once its context ended")
		assert.ErrorIs(t, err, context.Canceled)
	}
}

// TestLogClosedClient: a closed client fails at once with ErrUnavailable.
func TestLogClosedClient(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 1)
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints()})
	require.NoError(t, err)
	l, err := NewLog(LogOptions{Client: cli, Prefix: fleettest.Prefix(t, c.Client())})
	require.NoError(t, err)
	require.NoError(t, cli.Close())
	for name, op := range logOps(l) {
		start := time.Now()
		err := op()
		assert.ErrorIs(t, err, ErrUnavailable, name)
		// At once: no request is sent. The slack covers a loaded machine.
		assert.Less(t, time.Since(start), 5*time.Second, "%s: %v", name, err)
		assert.False(t, errors.Is(err, ErrCorrupt), name)
	}
}
