package segment_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/segment"
)

// memStore is a BlockStore in memory, for the allocator's tests: it keeps
// the contract but nothing survives the process. It can answer late (a
// test double of latency), fail, or hand out a bad block.
type memStore struct {
	mu    sync.Mutex
	last  map[string]int64
	delay time.Duration // how long each reservation takes
	fail  error         // when set, ReserveBlock fails with it
	calls int
	steps []int64 // the steps asked for, in order
	bad   *segment.Block
	gate  chan struct{} // when set, a reservation waits for a token
}

func newMemStore() *memStore { return &memStore{last: make(map[string]int64)} }

func (m *memStore) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	if err := segment.CheckTag(tag); err != nil {
		return segment.Block{}, fmt.Errorf("memstore: %w", err)
	}
	if err := segment.CheckStep(step); err != nil {
		return segment.Block{}, fmt.Errorf("memstore: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return segment.Block{}, fmt.Errorf("memstore: %w", err)
	}
	m.mu.Lock()
	delay, gate := m.delay, m.gate
	m.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return segment.Block{}, fmt.Errorf("memstore: %w", ctx.Err())
		}
	}
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return segment.Block{}, fmt.Errorf("memstore: %w", ctx.Err())
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	m.steps = append(m.steps, step)
	if m.fail != nil {
		return segment.Block{}, m.fail
	}
	if m.bad != nil {
		return *m.bad, nil
	}
	b := segment.Block{First: m.last[tag] + 1, Last: m.last[tag] + step}
	m.last[tag] = b.Last
	return b, nil
}

func (m *memStore) set(f func(m *memStore)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f(m)
}

// TestMemStoreConformance holds the test double to the contract that the
// real stores keep, and the suite to a store that keeps it.
func TestMemStoreConformance(t *testing.T) {
	t.Parallel()
	s := newMemStore()
	storetest.BlockStore(t, func(*testing.T) segment.BlockStore { return s })
}
