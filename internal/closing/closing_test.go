package closing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/closing"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

// A Sleep ends when its time comes, when its ctx ends, or when the signal
// closes, each with its own result; after Close, a Sleep ends at once.
func TestSleep(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	s := closing.New()
	sleep := func(ctx context.Context) <-chan error {
		done := make(chan error, 1)
		go func() { done <- s.Sleep(ctx, fake, time.Second) }()
		testwait.Sleepers(t, fake, 1)
		return done
	}

	done := sleep(context.Background())
	fake.Advance(time.Second)
	assert.NoError(t, testwait.Recv(t, done, "the Sleep's end once its time came"))

	ctx, cancel := context.WithCancel(context.Background())
	done = sleep(ctx)
	cancel()
	assert.ErrorIs(t, testwait.Recv(t, done, "the Sleep's end once its ctx ended"), context.Canceled)

	done = sleep(context.Background())
	require.False(t, s.Closed())
	s.Close()
	assert.True(t, s.Closed())
	assert.ErrorIs(t, testwait.Recv(t, done, "the Sleep's end once the signal closed"), closing.ErrClosed)
	assert.ErrorIs(t, s.Sleep(context.Background(), fake, time.Second), closing.ErrClosed, "a Sleep after Close")
	s.Close() // again: nothing
}
