package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/traceid"
)

// A test of your own drives a generator with a fake clock: the generator
// issues nothing in the second it starts in, so the test moves the clock on
// instead of waiting a second.
func ExampleFake() {
	fake := clock.NewFake(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	g, err := traceid.New(context.Background(), traceid.Options{Node: 7, Clock: fake, NoWait: true})
	if err != nil {
		panic(err)
	}
	_, err = g.Next()
	fmt.Println(err != nil) // still in the start-up second

	fake.Advance(time.Second)
	id, err := g.Next()
	fmt.Println(id.Node(), id.Time(fake.Now()), err)
	// Output:
	// true
	// 7 2026-11-21 12:00:01 +0000 UTC <nil>
}

// skewed is a clock of an application's own: any type with Now and Sleep.
type skewed struct{ by time.Duration }

func (s skewed) Now() time.Time        { return time.Now().Add(s.by) }
func (s skewed) Sleep(d time.Duration) { time.Sleep(d) }

// Generators take any Clock; CoarseOf gives it the cheap view they read per
// ID.
func ExampleClock() {
	g, err := traceid.New(context.Background(), traceid.Options{Node: 7, Clock: skewed{by: -time.Hour}})
	if err != nil {
		panic(err)
	}
	id, err := g.Next()
	fmt.Println(id.Time(time.Now()), err) // about an hour ago
}
