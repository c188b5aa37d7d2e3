package launchlog_test

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// soakFor is how long TestFencingAloneKeepsHoldersApart runs: a minute in
// CI, a few seconds elsewhere.
func soakFor() time.Duration {
	if os.Getenv("CI") != "" {
		return time.Minute
	}
	return 5 * time.Second
}

// id is an ID of any scheme, as two words that order like it.
type id [2]uint64

// run is a generator holding its node: fill issues up to n IDs.
type run struct {
	fill  func(n int) ([]id, error)
	close func()
}

// soakScheme is a scheme whose generators and Reserve calls keep their
// node in a launch log.
type soakScheme struct {
	name    string
	key     string
	start   func(ctx context.Context, l *launchlog.Log) (run, error)
	reserve func(ctx context.Context, l *launchlog.Log, n int) ([]id, error) // nil: the scheme has none
}

var soakSchemes = []soakScheme{{
	name: "traceid", key: "soak/traceid",
	start: func(ctx context.Context, l *launchlog.Log) (run, error) {
		g, err := traceid.New(ctx, traceid.Options{Node: 7, Store: l, StoreKey: "soak/traceid"})
		if err != nil {
			return run{}, err
		}
		return run{fill: fillWith(g.Fill, func(v traceid.ID) id { return id{0, uint64(v)} }), close: func() { _ = g.Close() }}, nil
	},
	reserve: func(ctx context.Context, l *launchlog.Log, n int) ([]id, error) {
		ids := make([]traceid.ID, n)
		err := traceid.Reserve(ctx, traceid.Options{Node: 7, Store: l, StoreKey: "soak/traceid"}, ids)
		return convert(ids, func(v traceid.ID) id { return id{0, uint64(v)} }), err
	},
}, {
	name: "snowflake", key: "soak/snowflake",
	start: func(ctx context.Context, l *launchlog.Log) (run, error) {
		g, err := snowflake.New(ctx, snowflake.Options{Node: map[string]int64{"worker": 7}, Store: l, StoreKey: "soak/snowflake"})
		if err != nil {
			return run{}, err
		}
		return run{fill: fillWith(g.Fill, func(v snowflake.ID) id { return id{0, uint64(v)} }), close: func() { _ = g.Close() }}, nil
	},
	reserve: func(ctx context.Context, l *launchlog.Log, n int) ([]id, error) {
		ids := make([]snowflake.ID, n)
		err := snowflake.Reserve(ctx, snowflake.Options{Node: map[string]int64{"worker": 7}, Store: l, StoreKey: "soak/snowflake"}, ids)
		return convert(ids, func(v snowflake.ID) id { return id{0, uint64(v)} }), err
	},
}, {
	name: "flake128", key: "soak/flake128",
	start: func(ctx context.Context, l *launchlog.Log) (run, error) {
		g, err := flake128.New(ctx, flake128.Options{Worker: 7, Store: l, StoreKey: "soak/flake128"})
		if err != nil {
			return run{}, err
		}
		words := func(v flake128.ID) id { return id{binary.BigEndian.Uint64(v[:8]), binary.BigEndian.Uint64(v[8:])} }
		return run{fill: fillWith(g.Fill, words), close: func() { _ = g.Close() }}, nil
	},
}}

func fillWith[T any](fill func([]T) (int, error), conv func(T) id) func(n int) ([]id, error) {
	return func(n int) ([]id, error) {
		dst := make([]T, n)
		k, err := fill(dst)
		return convert(dst[:k], conv), err
	}
}

func convert[T any](vs []T, conv func(T) id) []id {
	out := make([]id, len(vs))
	for i, v := range vs {
		out[i] = conv(v)
	}
	return out
}

// TestFencingAloneKeepsHoldersApart runs 8 holders of one node on one
// file, with the OS locks off, so that each hold takes the node from the
// holder before it: generators and Reserve calls one after another in each
// holder, for a minute in CI. Each superseded holder may still issue in
// the time it leased, and its next write fails: no ID is issued twice, and
// every generator ends with ErrNodeLost once a last hold has taken the
// node from all of them.
func TestFencingAloneKeepsHoldersApart(t *testing.T) {
	t.Parallel()
	for _, s := range soakSchemes {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			soak(t, s, 8, soakFor())
		})
	}
}

func soak(t *testing.T, s soakScheme, holders int, d time.Duration) {
	path := filepath.Join(t.TempDir(), "idkit.db")
	ctx := context.Background()
	var (
		gate      sync.RWMutex // held to start a run; locked for good once the soak ends
		stopped   bool         // guarded by gate
		mu        sync.Mutex   // guards the fields below
		issued    []id
		runs      int
		lostRuns  int
		reserves  int
		lostCalls int
		failures  []error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, err)
	}
	keep := func(ids []id) {
		mu.Lock()
		defer mu.Unlock()
		issued = append(issued, ids...)
	}
	var wg sync.WaitGroup
	for h := range holders {
		l, err := launchlog.NewWithoutOSLocks(launchlog.Options{Path: path, Timeout: time.Minute})
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(uint64(h), 1))
		wg.Go(func() {
			for {
				// An idle while between holds, so that a run lives long
				// enough to issue before the next hold takes its node.
				time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
				if s.reserve != nil && rng.IntN(3) == 0 {
					gate.RLock()
					if stopped {
						gate.RUnlock()
						return
					}
					ids, err := s.reserve(ctx, l, 1+rng.IntN(1000))
					gate.RUnlock()
					mu.Lock()
					reserves++
					mu.Unlock()
					switch {
					case err == nil:
						keep(ids)
					case errors.Is(err, idkit.ErrNodeLost):
						mu.Lock()
						lostCalls++
						mu.Unlock()
					default:
						fail(err)
						return
					}
					continue
				}
				gate.RLock()
				if stopped {
					gate.RUnlock()
					return
				}
				r, err := s.start(ctx, l)
				gate.RUnlock()
				if err != nil {
					fail(err)
					return
				}
				mu.Lock()
				runs++
				mu.Unlock()
				for {
					ids, err := r.fill(10)
					keep(ids)
					if err != nil {
						if errors.Is(err, idkit.ErrNodeLost) {
							mu.Lock()
							lostRuns++
							mu.Unlock()
						} else {
							fail(err)
						}
						break
					}
					time.Sleep(time.Millisecond) // a paced load: a minute's IDs fit in memory
				}
				r.close()
			}
		})
	}
	time.Sleep(d) // the soak's length, not a wait for an event
	gate.Lock()
	stopped = true
	gate.Unlock()
	// The last hold takes the node from every holder: each live run then
	// ends with ErrNodeLost at its next write.
	last, err := launchlog.NewWithoutOSLocks(launchlog.Options{Path: path, Timeout: time.Minute})
	require.NoError(t, err)
	h, err := last.Hold(ctx, s.key)
	require.NoError(t, err)
	defer h.Close()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	ended := true
	select {
	case <-done:
	case <-time.After(testwait.Bound):
		ended = false
	}

	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(issued, func(a, b id) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	repeats := 0
	for i := 1; i < len(issued); i++ {
		if issued[i] == issued[i-1] {
			repeats++
		}
	}
	t.Logf("%s: %d holders for %v: %d IDs, %d generator runs (%d ended with ErrNodeLost), %d Reserve calls (%d lost their node)",
		s.name, holders, d, len(issued), runs, lostRuns, reserves, lostCalls)
	assert.Empty(t, failures, "errors other than ErrNodeLost")
	assert.True(t, ended, "every run ends within %v once the last hold took the node", testwait.Bound)
	assert.Zero(t, repeats, "IDs issued twice")
	assert.Equal(t, runs, lostRuns, "every generator run ends with ErrNodeLost")
	assert.Greater(t, runs+reserves, holders, "holders took the node from one another")
	assert.NotEmpty(t, issued)
}
