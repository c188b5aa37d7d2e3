package fleet_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// BenchmarkClaim measures one claim and its release on a one-member etcd
// that fsyncs, and reports the 50th and 99th percentile of the claims'
// latency.
func BenchmarkClaim(b *testing.B) {
	cli := fleettest.StartDurable(b, 1).Client()
	o := fleet.ClaimOptions{Client: cli, Prefix: fleettest.Prefix(b, cli), Max: 1023}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		c, err := fleet.ClaimNode(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		c.Close()
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// Benchmark1024Claims measures 1,024 claimers at once filling a 1,024-node
// range on a one-member etcd that fsyncs: ns/op is the wall time of all.
func Benchmark1024Claims(b *testing.B) {
	cli := fleettest.StartDurable(b, 1).Client()
	for b.Loop() {
		b.StopTimer()
		o := fleet.ClaimOptions{Client: cli, Prefix: fleettest.Prefix(b, cli), Max: 1023, MaxSkew: -1,
			TTL: time.Minute, Interval: 20 * time.Second, Timeout: time.Minute}
		claims := make([]*fleet.Claim, 1024)
		var wg sync.WaitGroup
		b.StartTimer()
		for i := range claims {
			wg.Go(func() {
				c, err := fleet.ClaimNode(context.Background(), o)
				if err != nil {
					b.Error(err)
					return
				}
				claims[i] = c
			})
		}
		wg.Wait()
		b.StopTimer()
		for _, c := range claims {
			if c != nil {
				c.Close()
			}
		}
		b.StartTimer()
	}
}

// BenchmarkGenerator compares a generator on a claimed node, with its
// marks fenced in the claim, with one on a fixed node with its marks in a
// Log on the same etcd: the claim is checked off the hot path, so the two
// should cost the same. Use a fixed count below the per-second caps, such
// as -benchtime=1000000x.
func BenchmarkGenerator(b *testing.B) {
	cli := fleettest.Start(b, 1).Client()
	prefix := fleettest.Prefix(b, cli)
	claim, err := fleet.ClaimNode(context.Background(), fleet.ClaimOptions{Client: cli, Prefix: prefix, Max: 1023})
	if err != nil {
		b.Fatal(err)
	}
	defer claim.Close()
	log, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: prefix + "fixed/"})
	if err != nil {
		b.Fatal(err)
	}
	for _, node := range []string{"fixed", "claimed"} {
		b.Run("traceid/node="+node, func(b *testing.B) {
			o := traceid.Options{Node: claim.Node(), Store: log}
			if node == "claimed" {
				o = traceid.Options{Claim: claim}
			}
			g, err := traceid.New(context.Background(), o)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := g.Next(); err != nil { // wait out the first, fresh second
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("snowflake-twitter-borrow/node="+node, func(b *testing.B) {
			o := snowflake.Options{Layout: snowflake.Twitter(), ExhaustPolicy: snowflake.ExhaustBorrow, MaxLead: time.Hour}
			if node == "claimed" {
				o.Claim = claim
			} else {
				o.Node, _ = snowflake.Twitter().SplitNode(int64(claim.Node()))
				o.Store = log
			}
			g, err := snowflake.New(context.Background(), o)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := g.Next(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Next(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
