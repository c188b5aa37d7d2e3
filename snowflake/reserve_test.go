package snowflake_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/claimtest"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/snowflake"
)

var reserveT0 = time.Date(2026, 6, 1, 12, 0, 0, 300_000_000, time.UTC)

func reserveIDs(t *testing.T, o snowflake.Options, n int) []snowflake.ID {
	t.Helper()
	ids := make([]snowflake.ID, n)
	require.NoError(t, snowflake.Reserve(context.Background(), o, ids))
	return ids
}

func requireAbove(t *testing.T, prev snowflake.ID, ids []snowflake.ID) snowflake.ID {
	t.Helper()
	for _, id := range ids {
		require.Greater(t, id, prev)
		prev = id
	}
	return prev
}

// TestReserveContinues checks that calls continue one another in the same
// tick, across a clock stepped back, and in a new tick, for a layout whose
// positions are times (twitter) and one whose positions are IDs
// (simpleflake: 22 sequence bits in 1 ms).
func TestReserveContinues(t *testing.T) {
	t.Parallel()
	simple, err := snowflake.Preset("simpleflake")
	require.NoError(t, err)
	for _, tt := range []struct {
		name   string
		layout snowflake.Layout
		node   map[string]int64
	}{
		{"twitter", snowflake.Twitter(), map[string]int64{"worker": 7}},
		{"simpleflake", simple, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := clock.NewFake(reserveT0)
			o := snowflake.Options{Layout: tt.layout, Node: tt.node, Store: &memstore.Store{}, Clock: f}
			var prev snowflake.ID
			for range 3 {
				prev = requireAbove(t, prev, reserveIDs(t, o, 10))
			}
			p, err := tt.layout.Decode(prev)
			require.NoError(t, err)
			assert.Equal(t, reserveT0.Add(tt.layout.Unit), p.Time, "the node's first call takes the next tick")
			assert.Equal(t, int64(29), p.Sequence)

			f.Advance(-2 * time.Second)
			ids := reserveIDs(t, o, 5)
			prev = requireAbove(t, prev, ids)
			p, err = tt.layout.Decode(ids[0])
			require.NoError(t, err)
			assert.Equal(t, int64(30), p.Sequence, "continues the last tick")

			f.Set(reserveT0.Add(time.Second))
			ids = reserveIDs(t, o, 5)
			requireAbove(t, prev, ids)
			p, err = tt.layout.Decode(ids[0])
			require.NoError(t, err)
			assert.Equal(t, reserveT0.Add(time.Second), p.Time)
			assert.Equal(t, int64(0), p.Sequence)
		})
	}
}

// TestReserveAndGenerator checks that a Generator after Reserve issues
// after the reserved IDs on a clock stepped back, and that Reserve after a
// Generator starts past its lease at once.
func TestReserveAndGenerator(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(reserveT0)
	store := &memstore.Store{}
	o := snowflake.Options{Node: map[string]int64{"worker": 1}, Store: store, Clock: f}
	ids := reserveIDs(t, o, 10)

	f.Advance(-time.Second)
	g, err := snowflake.New(context.Background(), o)
	require.NoError(t, err)
	done := make(chan snowflake.ID)
	go func() {
		id, err := g.Next()
		assert.NoError(t, err)
		done <- id
	}()
	var gid snowflake.ID
	testwait.Until(t, func() bool {
		select {
		case gid = <-done:
			return true
		default:
			if f.Sleepers() > 0 {
				f.Advance(time.Millisecond)
			}
			return false
		}
	}, "the generator's first ID")
	assert.Greater(t, gid, ids[9])

	mark, err := store.HighWater(context.Background(), "snowflake/twitter/datacenter=0,worker=1")
	require.NoError(t, err)
	require.True(t, mark.After(f.Now()), "the lease is ahead of the clock")
	more := reserveIDs(t, o, 3)
	assert.Greater(t, more[0], gid)
	assert.False(t, more[0].Time(snowflake.Twitter()).Before(mark), "past the mark, without waiting")
	assert.Equal(t, 0, f.Sleepers())
}

func TestReserveExhausted(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(reserveT0)
	o := snowflake.Options{Node: map[string]int64{"worker": 2}, Store: &memstore.Store{}, Clock: f}
	ids := reserveIDs(t, o, 4090)

	e := o
	e.ExhaustPolicy = snowflake.ExhaustError
	require.ErrorIs(t, snowflake.Reserve(context.Background(), e, make([]snowflake.ID, 10)), snowflake.ErrExhausted)

	done := make(chan []snowflake.ID)
	go func() {
		more := make([]snowflake.ID, 10)
		assert.NoError(t, snowflake.Reserve(context.Background(), o, more))
		done <- more
	}()
	testwait.Sleepers(t, f, 1)
	f.Advance(2 * time.Millisecond) // to the tick after the first call's
	more := testwait.Recv(t, done, "the second reservation")
	requireAbove(t, ids[len(ids)-1], more)
	assert.Equal(t, reserveT0.Add(2*time.Millisecond), more[9].Time(snowflake.Twitter()))

	f.Advance(-time.Minute)
	reserveIDs(t, o, 4096-4)
	err := snowflake.Reserve(context.Background(), o, make([]snowflake.ID, 1))
	require.ErrorIs(t, err, snowflake.ErrExhausted)
	assert.Contains(t, err.Error(), "at most 5s")
}

func TestReserveErrors(t *testing.T) {
	t.Parallel()
	_, err := reserveErr(snowflake.Options{})
	assert.ErrorContains(t, err, "Options.Store and Options.Claim are nil")
	_, err = reserveErr(snowflake.Options{Store: &memstore.Store{}, Node: map[string]int64{"worker": 32}})
	assert.ErrorContains(t, err, `Options.Node["worker"] = 32, want 0 to 31`)
	_, err = reserveErr(snowflake.Options{Store: &memstore.Store{}, Clock: clock.NewFake(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC))})
	assert.ErrorIs(t, err, snowflake.ErrInvalid)
}

func reserveErr(o snowflake.Options) ([]snowflake.ID, error) {
	ids := make([]snowflake.ID, 1)
	return ids, snowflake.Reserve(context.Background(), o, ids)
}

// TestReserveClaim checks that a claim supplies the node and that a lost
// one reserves nothing.
func TestReserveClaim(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 33, Deadline: reserveT0.Add(time.Hour)}
	o := snowflake.Options{Claim: claim, Clock: clock.NewFake(reserveT0)}
	ids := reserveIDs(t, o, 2)
	p, err := snowflake.Twitter().Decode(ids[0])
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"datacenter": 1, "worker": 1}, p.Node)
	assert.Positive(t, claim.Marks.Calls(), "the claim keeps the position")

	lost := &claimtest.Claim{Number: 33}
	o.Claim = lost
	err = snowflake.Reserve(context.Background(), o, make([]snowflake.ID, 1))
	require.ErrorIs(t, err, snowflake.ErrNodeLost)
	assert.Zero(t, lost.Marks.Calls(), "nothing read or written")

	o.Store = &memstore.Store{}
	err = snowflake.Reserve(context.Background(), o, make([]snowflake.ID, 1))
	require.ErrorIs(t, err, snowflake.ErrInvalid)
	assert.Contains(t, err.Error(), "Options.Store and Options.Claim are both set")
}
