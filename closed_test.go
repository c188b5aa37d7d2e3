package idkit_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

// closedStart is when the fake clocks of the Close tests start.
var closedStart = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// closedCase builds one generator for the Close tests.
type closedCase struct {
	name string
	// pkg is the prefix of the package's messages, which a closed
	// generator's error starts with.
	pkg string
	// build returns a new generator and its fake clock (nil for none),
	// and the calls of its other issuers, a traceid Generator's PerCore
	// and Shard, by name. The generator issues at once once its clock
	// moved a second on.
	build func(t *testing.T) (closable, *clock.Fake, map[string]func() error)
	// waits says that a call on the new generator waits for its clock to
	// move on: to the first second or tick it may issue in, or to within
	// the lead ahead of its IDs.
	waits bool
}

// closable is what the tests need of a generator, whatever its ID type:
// each method that issues IDs, as a call that returns how many IDs it
// wrote and its error.
type closable interface {
	calls() map[string]func() (int, error)
	stats() idkit.Stats
	close() error
}

// shape adapts an idkit.Generator of any ID type to closable. Fill and
// FillContext write into dst, which the tests check for IDs written after
// Close.
type shape[ID comparable] struct {
	g   idkit.Generator[ID]
	dst []ID
}

func asClosable[ID comparable](g idkit.Generator[ID]) closable {
	return &shape[ID]{g: g, dst: make([]ID, 8)}
}

func (s *shape[ID]) calls() map[string]func() (int, error) {
	ctx := context.Background()
	one := func(id ID, err error) (int, error) {
		var zero ID
		if id != zero {
			return 1, err
		}
		return 0, err
	}
	fill := func(n int, err error) (int, error) {
		var zero ID
		for _, id := range s.dst {
			if id != zero {
				n = max(n, 1) // an ID written: count it, whatever n says
			}
		}
		clear(s.dst)
		return n, err
	}
	return map[string]func() (int, error){
		"Next":        func() (int, error) { return one(s.g.Next()) },
		"NextContext": func() (int, error) { return one(s.g.NextContext(ctx)) },
		"Fill":        func() (int, error) { return fill(s.g.Fill(s.dst)) },
		"FillContext": func() (int, error) { return fill(s.g.FillContext(ctx, s.dst)) },
	}
}

func (s *shape[ID]) stats() idkit.Stats { return s.g.Stats() }
func (s *shape[ID]) close() error       { return s.g.Close() }

// newLog returns a launch log in a file of its own.
func newLog(t *testing.T) *launchlog.Log {
	t.Helper()
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(t.TempDir(), "idkit.db")})
	require.NoError(t, err)
	return log
}

// closedCases are every generator, with and without a store where its
// package takes one.
var closedCases = []closedCase{
	{name: "traceid", pkg: "traceid:", waits: true, build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		return newTraceID(t, traceid.Options{Node: 3})
	}},
	{name: "traceid/launchlog", pkg: "traceid:", waits: true, build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		return newTraceID(t, traceid.Options{Node: 3, Store: newLog(t)})
	}},
	{name: "snowflake", pkg: "snowflake:", waits: true, build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		return newSnowflake(t, snowflake.Options{})
	}},
	{name: "snowflake/launchlog", pkg: "snowflake:", waits: true, build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		return newSnowflake(t, snowflake.Options{Store: newLog(t)})
	}},
	{name: "decimalid", pkg: "decimalid:", build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		return newDecimalID(t, &generators{})
	}},
	{name: "decimalid/launchlog", pkg: "decimalid:", build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		return newDecimalID(t, newLog(t))
	}},
	{name: "objectid", pkg: "objectid:", build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		fake := clock.NewFake(closedStart)
		g, err := objectid.New(objectid.Options{Clock: fake})
		require.NoError(t, err)
		return asClosable(g), fake, nil
	}},
	{name: "flake128", pkg: "flake128:", waits: true, build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		return newFlake128(t, flake128.Options{Worker: 5})
	}},
	{name: "flake128/launchlog", pkg: "flake128:", build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		return newFlake128(t, flake128.Options{Worker: 5, Store: newLog(t)})
	}},
	{name: "segment", pkg: "segment:", build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		return newSegment(t, &blocks{})
	}},
	{name: "segment/launchlog", pkg: "segment:", build: func(t *testing.T) (closable, *clock.Fake, map[string]func() error) {
		return newSegment(t, newLog(t))
	}},
}

func newTraceID(t *testing.T, o traceid.Options) (closable, *clock.Fake, map[string]func() error) {
	t.Helper()
	fake := clock.NewFake(closedStart)
	o.Clock = fake
	o.ThreadBits = 4 // a Shard claims a thread's chunk, not the whole second
	g, err := traceid.New(context.Background(), o)
	require.NoError(t, err)
	pc, shard := g.PerCore(), g.Shard()
	return asClosable(g), fake, map[string]func() error{
		"PerCore.Next":    func() error { _, err := pc.Next(); return err },
		"PerCore.TryNext": func() error { _, err := pc.TryNext(); return err },
		"Shard.Next":      func() error { _, err := shard.Next(); return err },
	}
}

func newSnowflake(t *testing.T, o snowflake.Options) (closable, *clock.Fake, map[string]func() error) {
	t.Helper()
	fake := clock.NewFake(closedStart)
	o.Clock = fake
	g, err := snowflake.New(context.Background(), o)
	require.NoError(t, err)
	return asClosable(g), fake, nil
}

func newDecimalID(t *testing.T, src store.Generators) (closable, *clock.Fake, map[string]func() error) {
	t.Helper()
	g, err := decimalid.New(context.Background(), decimalid.Options{Launch: 9, Source: src})
	require.NoError(t, err)
	return asClosable(g), nil, nil
}

func newFlake128(t *testing.T, o flake128.Options) (closable, *clock.Fake, map[string]func() error) {
	t.Helper()
	fake := clock.NewFake(closedStart)
	o.Clock = fake
	g, err := flake128.New(context.Background(), o)
	require.NoError(t, err)
	return asClosable(g), fake, nil
}

func newSegment(t *testing.T, store segment.BlockStore) (closable, *clock.Fake, map[string]func() error) {
	t.Helper()
	fake := clock.NewFake(closedStart)
	a, err := segment.New(context.Background(), segment.Options{Store: store, Tag: "order", Clock: fake})
	require.NoError(t, err)
	return asClosable(a), fake, nil
}

// TestClosedFailsEveryCall: once a generator is closed, every call that
// issues IDs fails at once with an error of kind idkit.ErrClosed, never
// ErrUnavailable, that names the package, and writes no ID; so again once
// the clock has moved on, and after a second Close. Stats still works,
// and the failed calls count nothing.
func TestClosedFailsEveryCall(t *testing.T) {
	t.Parallel()
	for _, c := range closedCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g, fake, others := c.build(t)
			if fake != nil {
				fake.Advance(time.Second)
			}
			calls := g.calls()
			for name, call := range calls {
				n, err := call()
				require.NoError(t, err, "%s before Close", name)
				require.Positive(t, n, "%s before Close", name)
			}
			for name, call := range others {
				require.NoError(t, call(), "%s before Close", name)
			}

			require.NoError(t, g.close())
			st := g.stats()
			check := func(when string) {
				t.Helper()
				for name, call := range calls {
					n, err := call()
					assertClosed(t, err, c.pkg, "%s %s", name, when)
					assert.Zero(t, n, "%s %s: IDs written", name, when)
				}
				for name, call := range others {
					assertClosed(t, call(), c.pkg, "%s %s", name, when)
				}
			}
			check("after Close")
			check("called again")
			if fake != nil {
				fake.Advance(2 * time.Second)
				check("once the clock moved on")
			}
			require.NoError(t, g.close(), "a second Close")
			check("after a second Close")
			assert.Equal(t, st, g.stats(), "Stats after Close, and the failed calls count nothing")
		})
	}
}

// TestCloseEndsALoop: Close while another goroutine loops on Next ends the
// loop with an error of kind idkit.ErrClosed, whether Next was issuing at
// once or waiting for the clock or the store.
func TestCloseEndsALoop(t *testing.T) {
	t.Parallel()
	for _, c := range closedCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			g, fake, _ := c.build(t)
			if fake != nil {
				fake.Advance(time.Second)
			}
			next := g.calls()["Next"]
			issued := make(chan struct{})
			ended := make(chan error, 1)
			go func() {
				for i := 0; ; i++ {
					if _, err := next(); err != nil {
						ended <- err
						return
					}
					if i == 100 {
						close(issued)
					}
				}
			}()
			testwait.Recv(t, issued, "100 IDs from the loop")
			require.NoError(t, g.close())
			assertClosed(t, testwait.Recv(t, ended, "the loop's end once the generator closed"), c.pkg, "the loop's error")
		})
	}
}

// TestCloseEndsAWait: Close ends the wait of a call asleep until its
// clock moves on, at once, with an error of kind idkit.ErrClosed.
func TestCloseEndsAWait(t *testing.T) {
	t.Parallel()
	for _, c := range closedCases {
		if !c.waits {
			continue
		}
		for _, name := range []string{"Next", "NextContext", "Fill", "FillContext"} {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				g, fake, _ := c.build(t)
				call := g.calls()[name]
				done := make(chan error, 1)
				go func() {
					n, err := call()
					assert.Zero(t, n, "IDs written")
					done <- err
				}()
				testwait.Sleepers(t, fake, 1)
				require.NoError(t, g.close())
				assertClosed(t, testwait.Recv(t, done, name+"'s return once the generator closed"), c.pkg, "%s's wait", name)
			})
		}
	}
}

// assertClosed checks that err is of kind idkit.ErrClosed, not
// ErrUnavailable, and names the package by its message's prefix pkg.
func assertClosed(t *testing.T, err error, pkg string, msgAndArgs ...any) {
	t.Helper()
	if !assert.ErrorIs(t, err, idkit.ErrClosed, msgAndArgs...) {
		return
	}
	assert.False(t, errors.Is(err, idkit.ErrUnavailable), "%q is of kind ErrUnavailable, which says retry", err)
	assert.True(t, strings.HasPrefix(err.Error(), pkg), "%q does not name its package", err)
}
