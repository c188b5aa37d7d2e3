package faults

import (
	"context"
	"fmt"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// schemes are the generators under test, by name: traceid-percore is a
// traceid.Generator's per-core path (traceid.PerCore).
var schemes = []string{"traceid", "traceid-percore", "snowflake", "decimalid", "flake128"}

// monotonic says whether a scheme promises that a node's IDs increase
// across restarts. DecimalId does not: each run takes a new generator id
// and its counter starts again at 1.
func monotonic(scheme string) bool { return scheme != "decimalid" }

// ordered says whether one goroutine's IDs strictly increase. The per-core
// path promises less: a goroutine's TraceIds never go back a second, and
// increase within one only while it stays on one processor.
func ordered(scheme string) bool { return scheme != "traceid-percore" }

// inOrder checks that ids, one goroutine's in the order it got them, keep
// the order that scheme promises.
func inOrder(scheme string, ids []int64) error {
	for i := 1; i < len(ids); i++ {
		if ordered(scheme) && ids[i] <= ids[i-1] {
			return fmt.Errorf("ID %d after %d: one goroutine's IDs do not increase", ids[i], ids[i-1])
		}
		if !ordered(scheme) && traceid.ID(ids[i]).Second() < traceid.ID(ids[i-1]).Second() {
			return fmt.Errorf("ID %d after %d: one goroutine's TraceIds go back a second", ids[i], ids[i-1])
		}
	}
	return nil
}

// newNext returns the Next function of a concurrent-safe generator of
// scheme for node 1, with its launch-log store (nil for none) and clock.
func newNext(scheme string, log *launchlog.Log, launch int, c clock.Clock) (func() (int64, error), error) {
	switch scheme {
	case "traceid", "traceid-percore":
		o := traceid.Options{Node: 1, Clock: c}
		if log != nil {
			o.Store = log
		}
		g, err := traceid.New(context.Background(), o)
		if err != nil {
			return nil, err
		}
		next := g.Next
		if scheme == "traceid-percore" {
			next = g.PerCore().Next
		}
		return func() (int64, error) { id, err := next(); return int64(id), err }, nil
	case "snowflake":
		o := snowflake.Options{Node: map[string]int64{"datacenter": 0, "worker": 1}, Clock: c}
		if log != nil {
			o.Store = log
		}
		g, err := snowflake.New(context.Background(), o)
		if err != nil {
			return nil, err
		}
		return func() (int64, error) { id, err := g.Next(); return int64(id), err }, nil
	case "flake128":
		// A 128-bit Flake of one worker is its (millisecond, sequence)
		// pair, which fits an int64 as ms<<16 | sequence and orders alike.
		o := flake128.Options{Worker: 1, Clock: c}
		if log != nil {
			o.Store = log
		}
		g, err := flake128.New(context.Background(), o)
		if err != nil {
			return nil, err
		}
		return func() (int64, error) {
			id, err := g.Next()
			if err != nil {
				return 0, err
			}
			if id.Worker() != 1 || id.Milliseconds() >= 1<<47 {
				return 0, fmt.Errorf("flake128: ID %v of worker %d at %d ms, want worker 1 before 2^47 ms", id, id.Worker(), id.Milliseconds())
			}
			return int64(id.Milliseconds()<<16 | uint64(id.Sequence())), nil
		}, nil
	case "decimalid":
		o := decimalid.Options{Launch: launch, Source: log}
		if log == nil {
			o.Source = &memSource{}
		}
		g, err := decimalid.New(context.Background(), o)
		if err != nil {
			return nil, err
		}
		return func() (int64, error) { id, err := g.Next(); return int64(id), err }, nil
	}
	return nil, fmt.Errorf("unknown scheme %q", scheme)
}

// memSource hands out generator ids from memory, for runs without a log.
type memSource struct{ next int }

func (s *memSource) NextGenerator(context.Context, int) (int, error) {
	s.next++
	return s.next - 1, nil
}
