package scheme

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allocSink keeps what the allocating generator allocates on the heap.
var allocSink atomic.Pointer[[8]byte]

// TestMeasureSpeed is not parallel: allocations are counted process-wide,
// so other tests must not run beside it.
func TestMeasureSpeed(t *testing.T) {
	counter, err := counterScheme.New(1)
	require.NoError(t, err)
	allocating := GenFunc(func(dst []byte) ([]byte, error) {
		p := new([8]byte)
		allocSink.Store(p)
		return append(dst, p[:]...), nil
	})
	tests := []struct {
		name      string
		g         Generator
		design    Design
		maxIDs    int
		minAllocs float64
		maxAllocs float64
	}{
		{name: "counter", g: counter[0], maxIDs: 1 << 30, maxAllocs: 0.01},
		{name: "allocating", g: allocating, maxIDs: 1 << 30, minAllocs: 0.9, maxAllocs: 1.1},
		// A layout allowing 80 IDs a second is measured on 10 at most.
		{name: "capped", g: counter[0], design: Design{PerSecond: 80, Waits: true}, maxIDs: 10, maxAllocs: 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := MeasureSpeed(tt.g, 8, 5*time.Millisecond, tt.design)
			require.NoError(t, err)
			assert.Positive(t, s.NsPerID)
			assert.Positive(t, s.ParallelNsPerID)
			assert.Positive(t, s.IDs)
			assert.LessOrEqual(t, s.IDs, tt.maxIDs)
			assert.LessOrEqual(t, s.ParallelIDs, tt.maxIDs)
			assert.GreaterOrEqual(t, s.AllocsPerID, tt.minAllocs)
			assert.LessOrEqual(t, s.AllocsPerID, tt.maxAllocs)
			assert.False(t, s.AtCap, "far faster than 80 IDs/s is not at the cap")
		})
	}
}

func TestMeasureSpeedErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	calls := 0
	failLater := GenFunc(func(dst []byte) ([]byte, error) {
		if calls++; calls > 5 {
			return dst, boom
		}
		return append(dst, make([]byte, 8)...), nil
	})
	_, err := MeasureSpeed(failLater, 8, time.Second, Design{})
	assert.ErrorIs(t, err, boom)

	short := GenFunc(func(dst []byte) ([]byte, error) { return append(dst, 1), nil })
	_, err = MeasureSpeed(short, 8, time.Second, Design{})
	assert.ErrorIs(t, err, ErrKey)
	_, _, err = runParallel(short, 8, 10, 2)
	assert.ErrorIs(t, err, ErrKey)
}

func TestGrow(t *testing.T) {
	t.Parallel()
	// A round of n IDs "takes" n ms: grow stops at the first round of at
	// least 50 ms, predicting n from the previous round.
	var rounds []int
	n, elapsed, _, err := grow(50*time.Millisecond, 1<<30, func(n int) (time.Duration, uint64, error) {
		rounds = append(rounds, n)
		return time.Duration(n) * time.Millisecond, 0, nil
	})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 60}, rounds)
	assert.Equal(t, 60, n)
	assert.Equal(t, 60*time.Millisecond, elapsed)

	rounds = nil
	n, _, _, err = grow(time.Hour, 1000, func(n int) (time.Duration, uint64, error) {
		rounds = append(rounds, n)
		return time.Duration(n), 0, nil
	})
	require.NoError(t, err)
	assert.Equal(t, []int{1, 100, 1000}, rounds, "grows at most 100x a round and stops at maxN")
	assert.Equal(t, 1000, n)
}

func TestAtCap(t *testing.T) {
	t.Parallel()
	waits := Design{PerSecond: 4_096_000, Waits: true}
	tests := []struct {
		name    string
		nsPerID float64
		d       Design
		want    bool
	}{
		{"at the limit", 244, waits, true},
		{"a tick ahead", 210, waits, true},
		{"burst under a second's allowance", 10, waits, false},
		{"slower than the limit", 1000, waits, false},
		{"no waiting", 244, Design{PerSecond: 4_096_000}, false},
		{"no limit", 244, Design{Waits: true}, false},
		{"not measured", 0, waits, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, atCap(tt.nsPerID, tt.d))
		})
	}
}
