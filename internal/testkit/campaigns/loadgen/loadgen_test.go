package loadgen

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHistogram compares quantiles with the exact ones of the same sample:
// each must be at least the exact value and within the 1.6% precision.
func TestHistogram(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	var h, a, b Histogram
	var all []time.Duration
	for i := range 100_000 {
		d := time.Duration(rng.ExpFloat64() * float64(200*time.Microsecond))
		if i%1000 == 0 {
			d = time.Duration(rng.Int64N(int64(time.Second)))
		}
		all = append(all, d)
		h.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	slices.Sort(all)
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 1} {
		rank := max(int(float64(len(all))*q+0.999999), 1)
		exact := all[rank-1]
		got := h.Quantile(q)
		assert.GreaterOrEqual(t, got, exact, "q %v", q)
		assert.LessOrEqual(t, float64(got), float64(exact)*1.016+1, "q %v", q)
		assert.Equal(t, got, a.Quantile(q), "merged, q %v", q)
	}
	assert.Equal(t, all[len(all)-1], h.Max())
	assert.Equal(t, uint64(len(all)), a.Count())
	var empty Histogram
	assert.Zero(t, empty.Quantile(0.99))
	for v := range uint64(1 << 16) { // every bucket's top maps back to it
		i := index(v)
		require.GreaterOrEqual(t, upper(i), v)
		require.Equal(t, i, index(upper(i)))
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("n") == "2" {
			w.Write([]byte(`{"ids":["1","2"]}` + "\n"))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":"down"}`))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	// Open loop: exactly rate × duration requests are due.
	r, err := Run(context.Background(), Config{Addr: addr, Path: "/v1/x?n=2", Rate: 400, Conns: 4, Duration: 500 * time.Millisecond, WantIDs: 2})
	require.NoError(t, err)
	assert.Equal(t, int64(200), r.Requests+r.Errors+r.Missed)
	assert.Zero(t, r.Errors, "%v", r.FirstErr)
	assert.Equal(t, 2*r.Requests, r.IDs)
	assert.Equal(t, uint64(r.Requests), r.Latency.Count())
	assert.Equal(t, r.Requests+r.Errors, r.Sent, "no warm-up")

	// Saturation, with a wrong count of IDs and an error status.
	r, err = Run(context.Background(), Config{Addr: addr, Path: "/v1/x?n=2", Duration: 100 * time.Millisecond, WantIDs: 3})
	require.NoError(t, err)
	assert.Zero(t, r.Requests)
	assert.Positive(t, r.Errors)
	assert.EqualError(t, r.FirstErr, "response holds 2 IDs, want 3")
	r, err = Run(context.Background(), Config{Addr: addr, Path: "/v1/x?n=1", Duration: 100 * time.Millisecond})
	require.NoError(t, err)
	assert.EqualError(t, r.FirstErr, `status 503: {"error":"down"}`)

	_, err = Run(context.Background(), Config{Addr: addr, Path: "/", Duration: time.Second, Conns: -1})
	assert.ErrorContains(t, err, "Conns -1 out of range")
	_, err = Run(context.Background(), Config{Addr: addr, Path: "/"})
	assert.ErrorContains(t, err, "Duration 0s must be positive")
}

// A Call load is scheduled and counted as the HTTP one.
func TestRunCall(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	call := func(context.Context) (int, error) {
		if calls.Add(1)%10 == 0 {
			return 0, errors.New("down")
		}
		return 2, nil
	}
	r, err := Run(context.Background(), Config{Call: call, Rate: 400, Conns: 4, Duration: 500 * time.Millisecond, WantIDs: 2})
	require.NoError(t, err)
	assert.Equal(t, int64(200), r.Requests+r.Errors+r.Missed)
	assert.Positive(t, r.Errors)
	assert.EqualError(t, r.FirstErr, "down")
	assert.Equal(t, 2*r.Requests, r.IDs)
	assert.Equal(t, calls.Load(), r.Sent)

	two := func(context.Context) (int, error) { return 2, nil }
	r, err = Run(context.Background(), Config{Call: two, Duration: 100 * time.Millisecond, WantIDs: 3})
	require.NoError(t, err)
	assert.Zero(t, r.Requests)
	assert.EqualError(t, r.FirstErr, "response holds 2 IDs, want 3")

	_, err = Run(context.Background(), Config{Duration: time.Second})
	assert.ErrorContains(t, err, "Config.Addr and Config.Path are required, or Config.Call")
}
