package fleet_test

import (
	"testing"

	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/suites/segmenttest"
)

// BenchmarkBlocks measures ReserveBlock on one etcd member that
// fsyncs its write-ahead log, as production members do, and allocators on
// it.
func BenchmarkBlocks(b *testing.B) {
	c := fleettest.StartDurable(b, 1)
	cli := c.Client()
	l, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: fleettest.Prefix(b, cli)})
	if err != nil {
		b.Fatal(err)
	}
	segmenttest.Bench(b, l)
}
