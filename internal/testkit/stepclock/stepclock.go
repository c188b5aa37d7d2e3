// Package stepclock is a clock for tests whose wall time can be stepped,
// as settimeofday or an NTP step steps a host's clock, while its monotonic
// reading runs on. Neither a clock.Fake (whose times carry no monotonic
// reading) nor an offset clock (which moves both) can show that, and the
// time package offers no way to make such a time: this one sets the wall
// part of a reading of time.Now through the layout of time.Time, which it
// checks at first use.
package stepclock

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/idkit/idkit/clock"
)

// Clock reads time.Now with its wall time moved by the sum of its steps;
// Sleep and the monotonic reading follow the real clock. The zero Clock
// reads the real time. It is safe for concurrent use.
type Clock struct {
	step atomic.Int64
}

// Now returns the current time, its wall part stepped and its monotonic
// reading the real one.
func (c *Clock) Now() time.Time { return stepWall(time.Now(), time.Duration(c.step.Load())) }

// Step moves the wall time by d from now on: back if d is negative.
func (c *Clock) Step(d time.Duration) { c.step.Add(int64(d)) }

// Sleep sleeps d of real time.
func (c *Clock) Sleep(d time.Duration) { time.Sleep(d) }

// SleepContext sleeps d of real time, or until ctx ends.
func (c *Clock) SleepContext(ctx context.Context, d time.Duration) error {
	return clock.SleepContext(ctx, clock.System(), d)
}

// timeLayout is time.Time's layout: wall holds the wall time (with a flag
// saying a monotonic reading is present), ext the monotonic reading.
type timeLayout struct {
	wall uint64
	ext  int64
	loc  *time.Location
}

var checkLayout = sync.OnceValue(func() error {
	t := time.Now()
	s := shift(t, -3*time.Second)
	if s.UnixNano() != t.UnixNano()-int64(3*time.Second) || s.Sub(t) != 0 || !s.Equal(t) {
		return fmt.Errorf("stepclock: time.Time's layout is not the one this package knows (Go %s)", runtime.Version())
	}
	return nil
})

// stepWall returns t with its wall time moved by d and its monotonic
// reading kept.
func stepWall(t time.Time, d time.Duration) time.Time {
	if err := checkLayout(); err != nil {
		panic(err)
	}
	return shift(t, d)
}

func shift(t time.Time, d time.Duration) time.Time {
	moved := t.Add(d) // wall and monotonic both moved by d
	(*timeLayout)(unsafe.Pointer(&moved)).ext = (*timeLayout)(unsafe.Pointer(&t)).ext
	return moved
}
