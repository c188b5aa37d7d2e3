package launchlog

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/memstore"
)

// store is the contract both launchlog and memstore keep.
type store interface {
	HighWater(ctx context.Context, key string) (time.Time, error)
	AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error)
}

func TestHighWater(t *testing.T) {
	t.Parallel()
	t0 := epoch
	steps := []struct {
		name string
		key  string
		to   time.Time // zero: only read
		want time.Time // the mark after the step
	}{
		{"none yet", "a", time.Time{}, time.Time{}},
		{"first", "a", t0, t0},
		{"forward", "a", t0.Add(time.Second), t0.Add(time.Second)},
		{"backward is ignored", "a", t0.Add(-time.Hour), t0.Add(time.Second)},
		{"one nanosecond back is ignored", "a", t0.Add(time.Second - 1), t0.Add(time.Second)},
		{"same", "a", t0.Add(time.Second), t0.Add(time.Second)},
		{"one nanosecond on", "a", t0.Add(time.Second + 1), t0.Add(time.Second + 1)},
		{"other key", "b", t0.Add(-time.Hour), t0.Add(-time.Hour)},
		{"before 1970", "c", time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"zero time moves nothing", "c", time.Time{}, time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"other location", "d", t0.In(time.FixedZone("X", 3600)), t0},
	}
	stores := map[string]func(t *testing.T) (store, func() store){
		"launchlog": func(t *testing.T) (store, func() store) {
			l := newLog(t)
			return l, func() store { return reopen(t, l) }
		},
		"memstore": func(*testing.T) (store, func() store) {
			s := &memstore.Store{}
			return s, func() store { return s }
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, again := open(t)
			for _, st := range steps {
				if !st.to.IsZero() || name == "launchlog" {
					got, err := s.AdvanceHighWater(context.Background(), st.key, st.to)
					require.NoError(t, err, st.name)
					assert.True(t, st.want.Equal(got), "%s: advance returned %v, want %v", st.name, got, st.want)
				}
				got, err := s.HighWater(context.Background(), st.key)
				require.NoError(t, err, st.name)
				assert.True(t, st.want.Equal(got), "%s: mark %v, want %v", st.name, got, st.want)
			}
			// The marks survive a reopen.
			s = again()
			for key, want := range map[string]time.Time{"a": t0.Add(time.Second + 1), "b": t0.Add(-time.Hour), "z": {}} {
				got, err := s.HighWater(context.Background(), key)
				require.NoError(t, err)
				assert.True(t, want.Equal(got), "after reopen %q = %v, want %v", key, got, want)
			}
		})
	}
}

func TestHighWaterUTC(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	at := epoch.In(time.FixedZone("X", -7200))
	got, err := l.AdvanceHighWater(context.Background(), "k", at)
	require.NoError(t, err)
	assert.Equal(t, epoch, got)
	got, err = l.HighWater(context.Background(), "k")
	require.NoError(t, err)
	assert.Equal(t, epoch, got)
}

func TestHighWaterInvalid(t *testing.T) {
	t.Parallel()
	l := newLog(t)
	long := string(make([]byte, 32769))
	tests := []struct {
		name string
		key  string
		t    time.Time
		want string
	}{
		{"empty key", "", epoch, "high-water key of 0 bytes, want 1..=32768"},
		{"long key", long, epoch, "high-water key of 32769 bytes, want 1..=32768"},
		{"before 1678", "k", time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), "want a time from 1678 to 2262"},
		{"after 2262", "k", time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), "want a time from 1678 to 2262"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.AdvanceHighWater(context.Background(), tt.key, tt.t)
			assert.ErrorIs(t, err, ErrInvalid)
			assert.ErrorContains(t, err, tt.want)
			if tt.key != "k" {
				_, err = l.HighWater(context.Background(), tt.key)
				assert.ErrorIs(t, err, ErrInvalid)
			}
		})
	}
	got, err := l.HighWater(context.Background(), "k")
	require.NoError(t, err)
	assert.True(t, got.IsZero(), "rejected times leave no mark")
}

func TestHighWaterConcurrent(t *testing.T) {
	t.Parallel()
	// Writers race to move one mark to different times; whatever the
	// order, the mark ends at the latest, and no writer sees a mark behind
	// its own time.
	l := newLog(t)
	l2, err := New(Options{Path: filepath.Join(filepath.Dir(l.path), "launch.db")})
	require.NoError(t, err)
	const writers = 6
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			h := l
			if w%2 == 0 {
				h = l2
			}
			at := epoch.Add(time.Duration((w*7)%writers) * time.Second)
			got, err := h.AdvanceHighWater(context.Background(), "k", at)
			if err == nil && got.Before(at) {
				err = assert.AnError
			}
			errs <- err
		}()
	}
	for range writers {
		require.NoError(t, <-errs)
	}
	got, err := l.HighWater(context.Background(), "k")
	require.NoError(t, err)
	assert.Equal(t, epoch.Add((writers-1)*time.Second), got)
}
