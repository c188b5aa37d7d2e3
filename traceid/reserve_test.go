package traceid_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/claimtest"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/traceid"
)

var reserveT0 = time.Date(2026, 6, 1, 12, 0, 0, 300_000_000, time.UTC)

// reserve returns n IDs from Reserve, moving the fake clock o.Clock to each
// wake-up while the call sleeps on it (the node's first call waits for the
// next second).
func reserve(t *testing.T, o traceid.Options, n int) []traceid.ID {
	t.Helper()
	f := o.Clock.(*clock.Fake)
	ids := make([]traceid.ID, n)
	done := make(chan error, 1)
	go func() { done <- traceid.Reserve(context.Background(), o, ids) }()
	testwait.Until(t, func() bool {
		select {
		case err := <-done:
			require.NoError(t, err)
			return true
		default:
			if wake, ok := f.NextWake(); ok {
				f.Set(wake)
			}
			return false
		}
	}, "Reserve to return")
	return ids
}

func requireAbove(t *testing.T, prev traceid.ID, ids []traceid.ID) traceid.ID {
	t.Helper()
	for _, id := range ids {
		require.Greater(t, id, prev)
		require.True(t, id.IsValid(), "%d", id)
		prev = id
	}
	return prev
}

// TestReserveContinues checks that back-to-back calls continue one another
// in the same second, after a clock stepped back, and in a new second.
func TestReserveContinues(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(reserveT0)
	store := &memstore.Store{}
	o := traceid.Options{Node: 7, Store: store, Clock: f}
	first := reserveT0.Unix() + 1 // the node's first use of the store begins in the next second
	var prev traceid.ID
	for range 3 {
		ids := reserve(t, o, 10)
		prev = requireAbove(t, prev, ids)
		assert.Equal(t, int(first%(1<<25)), ids[0].Second(), "the first call's second")
	}
	assert.Equal(t, traceid.ID(first%(1<<25)<<38|7<<22|30), prev, "counters 1 to 30")
	mark, err := store.HighWater(context.Background(), "traceid/node/7/last")
	require.NoError(t, err)
	assert.Equal(t, time.Unix(first, 30).UTC(), mark.UTC())

	f.Advance(-2 * time.Second) // stepped back: continue in the last second
	ids := reserve(t, o, 5)
	prev = requireAbove(t, prev, ids)
	assert.Equal(t, 31, int(ids[0])&(1<<22-1))

	f.Set(time.Unix(first+1, 0)) // a new second: counters restart
	ids = reserve(t, o, 5)
	requireAbove(t, prev, ids)
	assert.Equal(t, 1, int(ids[0])&(1<<22-1))
	assert.Equal(t, int((first+1)%(1<<25)), ids[0].Second())
	assert.Equal(t, 0, f.Sleepers())
}

// A run without a store earlier in the second repeats none of its IDs in
// the node's first call with the store, made in that second: the call
// waits for the next second. (Before it did, it repeated them.)
func TestReserveFirstCallAfterARunWithoutStore(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(reserveT0)
	g, err := traceid.New(context.Background(), traceid.Options{Node: 3, Clock: f}) // no store
	require.NoError(t, err)
	f.Advance(time.Second) // it issues nothing in the second it started in
	issued := make([]traceid.ID, 100)
	n, err := g.Fill(issued)
	require.NoError(t, err)
	require.Equal(t, 100, n)
	require.NoError(t, g.Close())

	ids := reserve(t, traceid.Options{Node: 3, Store: &memstore.Store{}, Clock: f}, 100)
	assert.Greater(t, ids[0], issued[99], "after every ID of the run without a store")
	assert.Equal(t, issued[0].Second()+1, ids[0].Second())
}

// TestReserveThenGenerator checks that a Generator started after Reserve
// issues after the reserved IDs, even on a clock stepped back, and that
// Reserve after a Generator starts after its lease at once.
func TestReserveThenGenerator(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(reserveT0)
	store := &memstore.Store{}
	o := traceid.Options{Node: 7, Store: store, Clock: f}
	ids := reserve(t, o, 10)

	f.Advance(-3 * time.Second)
	g, err := traceid.New(context.Background(), o)
	require.NoError(t, err)
	done := make(chan traceid.ID)
	go func() {
		id, err := g.Next()
		assert.NoError(t, err)
		done <- id
	}()
	var gid traceid.ID
	testwait.Until(t, func() bool {
		select {
		case gid = <-done:
			return true
		default:
			if f.Sleepers() > 0 {
				f.Advance(100 * time.Millisecond)
			}
			return false
		}
	}, "the generator's first ID")
	assert.Greater(t, gid, ids[9], "the generator begins after the reserved IDs")

	// The generator's lease mark is ahead of the clock: Reserve starts
	// after it at once, without waiting.
	mark, err := store.HighWater(context.Background(), "traceid/node/7")
	require.NoError(t, err)
	require.Greater(t, mark.Unix(), f.Now().Unix())
	more := reserve(t, o, 3)
	assert.Greater(t, more[0], gid)
	assert.Equal(t, int(mark.Unix()+1)%(1<<25), more[0].Second(), "the second after the mark")
}

// TestReserveExhausted fills a second and checks that Reserve waits for the
// next one, fails under NoWait, and fails rather than wait for a clock far
// behind.
func TestReserveExhausted(t *testing.T) {
	t.Parallel()
	const perSecond = 1<<22 - 1
	f := clock.NewFake(reserveT0)
	store := &memstore.Store{}
	o := traceid.Options{Node: 1, Store: store, Clock: f}
	ids := reserve(t, o, perSecond-2)

	no := o
	no.NoWait = true
	err := traceid.Reserve(context.Background(), no, make([]traceid.ID, 5))
	require.ErrorIs(t, err, traceid.ErrExhausted)

	done := make(chan []traceid.ID)
	go func() {
		more := make([]traceid.ID, 5)
		assert.NoError(t, traceid.Reserve(context.Background(), o, more))
		done <- more
	}()
	testwait.Sleepers(t, f, 1)
	f.Advance(1700 * time.Millisecond) // to the second after the first call's
	more := testwait.Recv(t, done, "the result")
	requireAbove(t, ids[len(ids)-1], more)
	assert.Equal(t, ids[0].Second(), more[1].Second())
	assert.Equal(t, ids[0].Second()+1, more[2].Second(), "the next second once the clock reached it")

	// Fill the next second with the clock stepped back 10 s: no wait.
	f.Advance(-10 * time.Second)
	reserve(t, o, perSecond-3)
	err = traceid.Reserve(context.Background(), o, make([]traceid.ID, 1))
	require.ErrorIs(t, err, traceid.ErrExhausted)
	assert.Contains(t, err.Error(), "at most 5s")
}

func TestReserveErrors(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(reserveT0)
	for _, tt := range []struct {
		name string
		o    traceid.Options
		want error
		msg  string
	}{
		{"no store", traceid.Options{Node: 1}, traceid.ErrInvalid, "Options.Store and Options.Claim are nil"},
		{"node", traceid.Options{Node: 65536, Store: &memstore.Store{}}, traceid.ErrInvalid, "Options.Node = 65536, want 0 to 65535"},
		{"thread bits", traceid.Options{ThreadBits: 17, Store: &memstore.Store{}}, traceid.ErrInvalid, "want 0 to 16"},
		{"claim lost", traceid.Options{Claim: &claimtest.Claim{Number: 9}, Clock: f}, traceid.ErrNodeLost, "test claim lost"},
		{"claim and node", traceid.Options{Node: 3, Claim: &claimtest.Claim{Number: 9}}, traceid.ErrInvalid, "want 0 or the same"},
		{"claim and store", traceid.Options{Claim: &claimtest.Claim{Number: 9}, Store: &memstore.Store{}}, traceid.ErrInvalid, "Options.Store and Options.Claim are both set"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := traceid.Reserve(context.Background(), tt.o, make([]traceid.ID, 1))
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	store := &memstore.Store{}
	store.Fail(errors.New("disk full"))
	err := traceid.Reserve(context.Background(), traceid.Options{Store: store, Clock: f}, make([]traceid.ID, 1))
	require.ErrorIs(t, err, traceid.ErrStore)
}

// TestReserveThreadBits checks that with thread bits no ID has counter 0.
func TestReserveThreadBits(t *testing.T) {
	t.Parallel()
	o := traceid.Options{Node: 2, ThreadBits: 16, Store: &memstore.Store{}, Clock: clock.NewFake(reserveT0)}
	ids := reserve(t, o, 130) // 63 counters per thread: three threads
	requireAbove(t, 0, ids)
	for _, id := range ids {
		_, err := traceid.Decode(id, 16)
		assert.NoError(t, err)
	}
	p, err := traceid.Decode(ids[129], 16)
	require.NoError(t, err)
	assert.Equal(t, traceid.Parts{Second: ids[0].Second(), Node: 2, Thread: 2, Counter: 4}, p)
}

// Under NoWait the node's first call, which would wait for the next
// second, fails at once and reserves nothing.
func TestReserveFirstCallNoWait(t *testing.T) {
	t.Parallel()
	store := &memstore.Store{}
	o := traceid.Options{Node: 4, Store: store, Clock: clock.NewFake(reserveT0), NoWait: true}
	err := traceid.Reserve(context.Background(), o, make([]traceid.ID, 1))
	require.ErrorIs(t, err, traceid.ErrExhausted)
	assert.Contains(t, err.Error(), "node 4's first call with the store waits for the next second")
	mark, err := store.HighWater(context.Background(), "traceid/node/4/last")
	require.NoError(t, err)
	assert.True(t, mark.IsZero(), "nothing reserved")
}
