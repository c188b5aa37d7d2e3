package snowflake

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// settle waits until g has no asynchronous lease renewal running.
func settle(t *testing.T, g *Generator) {
	t.Helper()
	testwait.Until(t, g.lease.Idle, "the background lease renewal to end")
}

func mark(t *testing.T, s *memstore.Store, key string) time.Time {
	t.Helper()
	m, err := s.HighWater(context.Background(), key)
	require.NoError(t, err)
	return m
}

// A run crashes, the clock is stepped back 2 s while the process is down,
// and a new run of the same node starts: with the store it waits until the
// clock has passed the mark, and repeats no ID. (Without the mark it would
// reissue the IDs of the ticks it steps back into.)
func TestRestartAfterClockSteppedBackWithStore(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		policy  ExhaustPolicy
		perTick int // IDs taken before the clock moves on; 8 borrows a tick
	}{{ExhaustWait, 4}, {ExhaustBorrow, 8}} {
		t.Run(tt.policy.String(), func(t *testing.T) {
			t.Parallel()
			store := &memstore.Store{}
			fake := clock.NewFake(t0)
			rec := &recorder{}
			o := Options{Layout: small(), Node: map[string]int64{"node": 7}, Store: store, Clock: fake,
				ExhaustPolicy: tt.policy, MaxLead: 5 * time.Millisecond, Logger: slog.New(rec)}
			const key = "snowflake/small/node=7"

			g1, err := New(context.Background(), o)
			require.NoError(t, err)
			fake.Advance(time.Millisecond)
			var run1 []ID
			for k := range 100 { // ticks 1 ms + 25 ms * k, over 2.5 s
				if k > 0 {
					fake.Advance(25 * time.Millisecond)
				}
				run1 = append(run1, take(t, g1, tt.perTick)...)
			}
			settle(t, g1)
			m := mark(t, store, key)
			for _, id := range run1 {
				end := parts(t, g1, id).Time.Add(time.Millisecond)
				require.False(t, end.After(m), "ID %d's tick ends at %v, after the mark %v", id, end, m)
			}

			fake.Advance(-2 * time.Second) // the process is down; the clock steps back
			g2, err := New(context.Background(), o)
			require.NoError(t, err)
			assert.Equal(t, []string{"snowflake: high-water mark ahead of the clock; waiting for the clock to pass it"},
				rec.messages(slog.LevelWarn))
			first, err := drive(g2, fake, 100*time.Millisecond)
			require.NoError(t, err)
			assert.False(t, fake.Now().Before(m), "the first ID came before the clock passed the mark")
			assert.False(t, parts(t, g2, first).Time.Before(m))
			run2 := []ID{first}
			for range 100 { // every tick for 100 ms
				for range 3 {
					id, err := drive(g2, fake, time.Millisecond)
					require.NoError(t, err)
					run2 = append(run2, id)
				}
				fake.Advance(time.Millisecond)
			}
			requireIncreasing(t, run1)
			requireIncreasing(t, run2)
			requireDistinct(t, append(run1, run2...))
			assert.Greater(t, run2[0], run1[len(run1)-1])
		})
	}
}

// Without a store a new generator skips the tick it was created in, so a
// restart in the same tick (the clock not stepped back) repeats nothing;
// under ExhaustBorrow it also skips the lead the earlier run may have
// borrowed.
func TestRestartWithoutStore(t *testing.T) {
	t.Parallel()
	for _, ep := range []ExhaustPolicy{ExhaustWait, ExhaustBorrow} {
		t.Run(ep.String(), func(t *testing.T) {
			t.Parallel()
			fake := clock.NewFake(t0)
			o := Options{Layout: small(), Clock: fake, ExhaustPolicy: ep, MaxLead: 5 * time.Millisecond}
			g1, err := New(context.Background(), o)
			require.NoError(t, err)
			fake.Advance(time.Millisecond)
			var run1 []ID
			for range 40 { // under ExhaustBorrow this borrows as far ahead as it may
				id, err := drive(g1, fake, time.Millisecond)
				require.NoError(t, err)
				run1 = append(run1, id)
			}
			fake.Advance(300 * time.Microsecond) // crash and restart within the tick
			g2, err := New(context.Background(), o)
			require.NoError(t, err)
			var run2 []ID
			for range 40 {
				id, err := drive(g2, fake, time.Millisecond)
				require.NoError(t, err)
				run2 = append(run2, id)
			}
			requireDistinct(t, append(run1, run2...))
			assert.Greater(t, run2[0], run1[len(run1)-1])
		})
	}
}

func TestStoreLease(t *testing.T) {
	t.Parallel()
	store := &memstore.Store{}
	rec := &recorder{}
	g, fake := start(t, Options{Layout: small(), Store: store, Lease: 100 * time.Millisecond, Logger: slog.New(rec)})
	const key = "snowflake/small/node=0"
	assert.Equal(t, 1, store.Calls(), "New reads the mark")

	id := next(t, g)
	assert.Equal(t, time.Millisecond, tick(t, g, id))
	assert.Equal(t, 2, store.Calls(), "the first tick is leased synchronously")
	assert.Equal(t, t0.Add(102*time.Millisecond), mark(t, store, key), "leased 100 ticks past the tick")

	// Past half the lease, moving to a new tick renews in the background.
	fake.Advance(60 * time.Millisecond)
	next(t, g)
	settle(t, g)
	assert.Equal(t, t0.Add(162*time.Millisecond), mark(t, store, key))

	// The renewed lease covers ticks past the first lease without the store.
	store.Fail(errors.New("disk gone"))
	fake.Advance(60 * time.Millisecond) // 121 ms
	id = next(t, g)
	assert.Equal(t, 121*time.Millisecond, tick(t, g, id))
	settle(t, g) // a renewal was due; it fails and logs
	assert.Contains(t, rec.messages(slog.LevelWarn), "snowflake: lease renewal failed; will retry before the lease runs out")

	// Beyond the lease, with the store still failing, no ID is safe.
	fake.Advance(50 * time.Millisecond) // 171 ms
	_, err := g.Next()
	require.ErrorIs(t, err, ErrStore)
	assert.Contains(t, err.Error(), `advance "snowflake/small/node=0": disk gone`)

	store.Fail(nil)
	id = next(t, g)
	assert.Equal(t, 171*time.Millisecond, tick(t, g, id))
	assert.Equal(t, t0.Add(272*time.Millisecond), mark(t, store, key))
}

func TestStoreErrors(t *testing.T) {
	t.Parallel()
	store := &memstore.Store{}
	store.Fail(errors.New("locked"))
	_, err := New(context.Background(), Options{Clock: clock.NewFake(t0), Store: store, StoreKey: "k"})
	require.ErrorIs(t, err, ErrStore)
	assert.Contains(t, err.Error(), `read "k": locked`)

	// A mark beyond the layout's lifetime leaves no tick to start in.
	store.Fail(nil)
	_, err = store.AdvanceHighWater(context.Background(), "k", t0.AddDate(100, 0, 0))
	require.NoError(t, err)
	_, err = New(context.Background(), Options{Clock: clock.NewFake(t0), Store: store, StoreKey: "k"})
	require.ErrorIs(t, err, ErrExpired)
}

// keptStore is a broken store that never moves its mark.
type keptStore struct{ memstore.Store }

func (s *keptStore) AdvanceHighWater(ctx context.Context, key string, _ time.Time) (time.Time, error) {
	return s.HighWater(context.Background(), key)
}

func TestStoreThatDoesNotAdvance(t *testing.T) {
	t.Parallel()
	g, _ := start(t, Options{Layout: small(), Store: &keptStore{}})
	_, err := g.Next()
	require.ErrorIs(t, err, ErrStore)
	assert.Contains(t, err.Error(), "the store kept")
}
