package idkit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// silent is a store that answers while answering is set and otherwise
// never does: each call then reports itself on called and waits for its
// context to end, as a store behind a cut link does until the client's
// deadline.
type silent struct {
	*memstore.Store
	answering atomic.Bool
	called    chan string
	gens      atomic.Int64 // the generator ids handed out
}

func newSilent(answering bool) *silent {
	s := &silent{Store: &memstore.Store{}, called: make(chan string, 64)}
	s.answering.Store(answering)
	return s
}

func (s *silent) hang(ctx context.Context, call string) error {
	s.called <- call
	<-ctx.Done()
	return ctx.Err()
}

func (s *silent) HighWater(ctx context.Context, key string) (time.Time, error) {
	if !s.answering.Load() {
		return time.Time{}, s.hang(ctx, "HighWater")
	}
	return s.Store.HighWater(ctx, key)
}

func (s *silent) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	if !s.answering.Load() {
		return time.Time{}, s.hang(ctx, "AdvanceHighWater")
	}
	return s.Store.AdvanceHighWater(ctx, key, t)
}

func (s *silent) NextGenerator(ctx context.Context, launch int) (int, error) {
	if !s.answering.Load() {
		return 0, s.hang(ctx, "NextGenerator")
	}
	return int(s.gens.Add(1)) - 1, nil
}

func (s *silent) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	return segment.Block{}, s.hang(ctx, "ReserveBlock")
}

// endsWithItsContext runs call, waits until the store has been asked,
// cancels the call's context and checks that the call returns, with an
// error that wraps context.Canceled.
func endsWithItsContext(t *testing.T, s *silent, what string, call func(ctx context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- call(ctx) }()
	testwait.Recv(t, s.called, what+" asking the store")
	cancel()
	err := testwait.Recv(t, done, what+" returning once its context ended")
	assert.True(t, errors.Is(err, context.Canceled), "%s: %v, want an error of context.Canceled", what, err)
}

// TestNewEndsWithItsContext: every constructor that reads a store takes a
// context and returns once it ends, though the store never answers.
func TestNewEndsWithItsContext(t *testing.T) {
	t.Parallel()
	at := clock.NewFake(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	for name, call := range map[string]func(ctx context.Context, s *silent) error{
		"traceid.New": func(ctx context.Context, s *silent) error {
			_, err := traceid.New(ctx, traceid.Options{Node: 1, Store: s, Clock: at})
			return err
		},
		"snowflake.New": func(ctx context.Context, s *silent) error {
			_, err := snowflake.New(ctx, snowflake.Options{Store: s, Clock: at})
			return err
		},
		"flake128.New": func(ctx context.Context, s *silent) error {
			_, err := flake128.New(ctx, flake128.Options{Worker: 1, Store: s, Clock: at})
			return err
		},
		"decimalid.New": func(ctx context.Context, s *silent) error {
			_, err := decimalid.New(ctx, decimalid.Options{Launch: 1, Source: s})
			return err
		},
		"segment.New": func(ctx context.Context, s *silent) error {
			_, err := segment.New(ctx, segment.Options{Store: s, Tag: "order", Clock: at})
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSilent(false)
			endsWithItsContext(t, s, name, func(ctx context.Context) error { return call(ctx, s) })
		})
	}
}

// TestViewsEndWithTheirContext: a traceid Shard and PerCore whose lease
// runs out while the store has stopped answering wait for it under the
// context of NextContext, and return once it ends.
func TestViewsEndWithTheirContext(t *testing.T) {
	t.Parallel()
	for name, next := range map[string]func(g *traceid.Generator) func(ctx context.Context) error{
		"Generator.NextContext": func(g *traceid.Generator) func(ctx context.Context) error {
			return func(ctx context.Context) error { _, err := g.NextContext(ctx); return err }
		},
		"Shard.NextContext": func(g *traceid.Generator) func(ctx context.Context) error {
			s := g.Shard()
			return func(ctx context.Context) error { _, err := s.NextContext(ctx); return err }
		},
		"PerCore.NextContext": func(g *traceid.Generator) func(ctx context.Context) error {
			p := g.PerCore()
			return func(ctx context.Context) error { _, err := p.NextContext(ctx); return err }
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSilent(true)
			fake := clock.NewFake(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
			g, err := traceid.New(context.Background(), traceid.Options{Node: 1, Store: s, Clock: fake, NoWait: true})
			require.NoError(t, err)
			defer g.Close()
			call := next(g)
			s.answering.Store(false)
			fake.Advance(time.Hour) // far past the lease: the next ID needs a write
			endsWithItsContext(t, s, name, call)
		})
	}
}
