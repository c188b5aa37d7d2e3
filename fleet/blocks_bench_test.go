package fleet_test

import (
	"testing"

	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/internal/testkit/etcdtest"
	"github.com/idkit/idkit/internal/testkit/segmenttest"
)

// BenchmarkBlocks measures ReserveBlock on one embedded etcd member that
// fsyncs its write-ahead log, as production members do, and allocators on
// it.
func BenchmarkBlocks(b *testing.B) {
	c := etcdtest.StartDurable(b, 1)
	cli := c.Client()
	l, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: etcdtest.Prefix(b, cli)})
	if err != nil {
		b.Fatal(err)
	}
	segmenttest.Bench(b, l)
}
