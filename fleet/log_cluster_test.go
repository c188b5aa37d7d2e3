package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/store"
)

// TestLogClusterMemberLoss runs a 3-member cluster. Goroutines on two
// clients call NextGenerator, Begin and AdvanceHighWater while the leader
// is stopped: operations go on, and no generator id or launch id is
// handed out twice. An operation may fail with ErrUnavailable while the
// members elect a new leader (the caller tries again), never otherwise. Then a second member stops and the cluster loses
// its quorum: every operation fails with ErrUnavailable within its
// timeout instead of hanging.
func TestLogClusterMemberLoss(t *testing.T) {
	t.Parallel()
	c := fleettest.Start(t, 3)
	cli := c.Client()
	prefix := fleettest.Prefix(t, cli)
	var logs []*Log
	for _, client := range []*clientv3.Client{cli, fleettest.NewClient(t, c.Endpoints()...)} {
		// Twice the default, for a leader election on a busy machine.
		l, err := NewLog(LogOptions{Client: client, Prefix: prefix, Timeout: 10 * time.Second})
		require.NoError(t, err)
		logs = append(logs, l)
	}

	var (
		mu         sync.Mutex
		generators = map[int]int{} // generator id → times handed out
		launches   = map[int]int{} // launch id → times handed out
		errs       []error
		unanswered int // operations that failed with ErrUnavailable
		stop       = make(chan struct{})
		wg         sync.WaitGroup
	)
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(generators)
	}
	// fail records err and reports whether the worker is to stop.
	fail := func(err error) bool {
		mu.Lock()
		defer mu.Unlock()
		if errors.Is(err, ErrUnavailable) {
			unanswered++
			return false
		}
		errs = append(errs, err)
		return true
	}
	running := func() bool {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	for w := range 6 {
		wg.Go(func() {
			l := logs[w%len(logs)]
			for running() {
				v, err := l.NextGenerator(context.Background(), 1)
				if err != nil {
					if fail(fmt.Errorf("NextGenerator, worker %d: %w", w, err)) {
						return
					}
					continue
				}
				mu.Lock()
				generators[v]++
				mu.Unlock()
			}
		})
	}
	for w := range 2 {
		wg.Go(func() {
			l := logs[w]
			for running() {
				launch, err := l.Begin(context.Background(), store.Info{By: fmt.Sprint("worker ", w)})
				if err != nil {
					if fail(fmt.Errorf("Begin, worker %d: %w", w, err)) {
						return
					}
					continue
				}
				mu.Lock()
				launches[launch.ID]++
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		at := logEpoch
		for i := 0; running(); i++ {
			at = at.Add(time.Second)
			got, err := logs[i%2].AdvanceHighWater(context.Background(), "k", at)
			if err == nil && got.Before(at) {
				err = fmt.Errorf("advance to %v returned %v", at, got)
			}
			if err != nil && fail(fmt.Errorf("AdvanceHighWater: %w", err)) {
				return
			}
		}
	})
	// waitFor polls, bounded, until the workers have handed out n
	// generator ids.
	waitFor := func(n int) {
		t.Helper()
		if !assert.Eventually(t, func() bool { return count() >= n }, 60*time.Second, 10*time.Millisecond, "want %d generator ids", n) {
			close(stop)
			wg.Wait()
			t.FailNow()
		}
	}

	waitFor(50)
	leader := leaderOf(t, c)
	c.Stop(leader)
	stoppedAt := count()
	t.Logf("stopped the leader, member %d, after %d generator ids", leader, stoppedAt)
	stopTime := time.Now()
	waitFor(stoppedAt + 100)
	t.Logf("100 more generator ids in %v", time.Since(stopTime))
	close(stop)
	wg.Wait()

	require.Empty(t, errs, "operations failed while one member was down")
	t.Logf("%d operations failed with ErrUnavailable during the election", unanswered)
	for v, n := range generators {
		assert.Equal(t, 1, n, "generator id %d handed out %d times", v, n)
	}
	for id, n := range launches {
		assert.Equal(t, 1, n, "launch %d handed out %d times", id, n)
	}
	list, err := logs[1].List(context.Background())
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(list), len(launches), "every launch handed out is recorded")
	for i, l := range list {
		assert.Equal(t, i+1, l.ID)
		if i > 0 {
			assert.False(t, l.StartedAt.Before(list[i-1].StartedAt), "launch %d starts before launch %d", l.ID, i)
		}
	}
	t.Logf("%d generator ids, %d launches", len(generators), len(launches))

	// Quorum lost: one member of three left.
	c.Stop((leader + 1) % 3)
	const timeout = time.Second
	short, err := NewLog(LogOptions{Client: cli, Prefix: prefix, Timeout: timeout})
	require.NoError(t, err)
	for name, op := range logOps(short) {
		start := time.Now()
		err := op()
		took := time.Since(start)
		assert.ErrorIs(t, err, ErrUnavailable, name)
		// The slack covers a loaded machine's scheduling; a retry that
		// ignored the timeout would take a multiple of it.
		assert.Less(t, took, timeout+5*time.Second, "%s took %v with a timeout of %v", name, took, timeout)
	}
}

// leaderOf returns the index of the cluster's leader.
func leaderOf(t *testing.T, c *fleettest.Cluster) int {
	t.Helper()
	cli := c.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, ep := range c.Endpoints() {
		st, err := cli.Status(ctx, ep)
		require.NoError(t, err)
		if st.Leader == st.Header.MemberId {
			return i
		}
	}
	t.Fatal("no leader")
	return -1
}
