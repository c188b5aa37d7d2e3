package shardkey_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/shardkey"
)

// t0 is on a second boundary, so that it starts a tick of every unit the
// tests use.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// blocks is an in-memory segment.BlockStore.
type blocks struct {
	mu   sync.Mutex
	last map[string]int64
}

func (b *blocks) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	if err := ctx.Err(); err != nil {
		return segment.Block{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last == nil {
		b.last = map[string]int64{}
	}
	first := b.last[tag] + 1
	b.last[tag] += step
	return segment.Block{First: first, Last: b.last[tag]}, nil
}

// newReversed returns a Reversed generator on an in-memory store, closed
// at the end of the test.
func newReversed(t *testing.T, step int64) *shardkey.Reversed {
	t.Helper()
	r, err := shardkey.NewReversed(context.Background(), shardkey.ReversedOptions{
		Options: segment.Options{Store: &blocks{}, Tag: "order", Step: step, MinStep: step, MaxStep: step},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// newSharded returns a generator of either form on a fake clock at t0,
// with the clock already moved one tick on, so that the first Next need
// not wait for a fresh tick. It is closed at the end of the test.
func newSharded(t *testing.T, hashed bool, o shardkey.ShardBitsOptions) (*shardkey.Sharded, *clock.Fake) {
	t.Helper()
	fake := clock.NewFake(t0)
	o.Snowflake.Clock = fake
	s, err := construct(hashed)(context.Background(), o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	fake.Advance(s.Layout().Unit)
	return s, fake
}

// construct returns NewHashPrefixed or NewShardBits.
func construct(hashed bool) func(context.Context, shardkey.ShardBitsOptions) (*shardkey.Sharded, error) {
	if hashed {
		return shardkey.NewHashPrefixed
	}
	return shardkey.NewShardBits
}

func form(hashed bool) string {
	if hashed {
		return "hashprefixed"
	}
	return "shardbits"
}

// drive calls s.Next on another goroutine and moves fake on by step
// whenever that call sleeps on it, until the call returns, within
// testwait.Bound.
func drive(s *shardkey.Sharded, fake *clock.Fake, step time.Duration) (shardkey.ID, error) {
	return driveCall(fake, step, s.Next)
}

// driveCall is drive for any call.
func driveCall(fake *clock.Fake, step time.Duration, call func() (shardkey.ID, error)) (shardkey.ID, error) {
	type result struct {
		id  shardkey.ID
		err error
	}
	ch := make(chan result, 1)
	go func() {
		id, err := call()
		ch <- result{id, err}
	}()
	for giveUp := time.Now().Add(testwait.Bound); time.Now().Before(giveUp); {
		select {
		case r := <-ch:
			return r.id, r.err
		default:
		}
		if fake.Sleepers() == 0 {
			runtime.Gosched()
			continue
		}
		fake.Advance(step)
		fake.WaitForWakes()
	}
	return 0, fmt.Errorf("the call did not return within %v of moving the clock", testwait.Bound)
}

func requireDistinct(t *testing.T, ids []shardkey.ID) {
	t.Helper()
	seen := make(map[shardkey.ID]int, len(ids))
	for i, id := range ids {
		if j, dup := seen[id]; dup {
			t.Fatalf("ID %d issued twice, at %d and %d", id, j, i)
		}
		seen[id] = i
	}
}
