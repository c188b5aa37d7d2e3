package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/traceid"
)

// fakeOnly is a clock with Now and Sleep alone, as an application's own
// clock would be, driven by a Fake.
type fakeOnly struct{ f *clock.Fake }

func (c fakeOnly) Now() time.Time        { return c.f.Now() }
func (c fakeOnly) Sleep(d time.Duration) { c.f.Sleep(d) }

// A generator runs on a clock with Now and Sleep alone.
func TestGeneratorOnUserClock(t *testing.T) {
	t.Parallel()
	f := clock.NewFake(t0)
	g, err := traceid.New(context.Background(), traceid.Options{Node: 3, Clock: fakeOnly{f}})
	require.NoError(t, err)
	done := make(chan traceid.ID)
	go func() {
		id, err := g.Next()
		assert.NoError(t, err)
		done <- id
	}()
	testwait.Sleepers(t, f, 1) // the start-up second
	f.Advance(time.Second)
	id := testwait.Recv(t, done, "ID after the start-up second")
	assert.Equal(t, t0.Add(time.Second), id.Time(f.Now()))
	assert.Equal(t, 3, id.Node())
}

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
