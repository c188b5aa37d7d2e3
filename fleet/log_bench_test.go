package fleet

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/launchlog"
)

// benchStore is what the benchmarks call on either backend.
type benchStore interface {
	NextGenerator(ctx context.Context, launch int) (int, error)
	AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error)
}

// benchBackends returns the bbolt launch log on a file in a temporary
// directory and the etcd log on one etcd member (its data on the same
// disk), warm and cold, so that one run measures both. Every write of either is durable
// before it returns: bbolt fsyncs its file, etcd its write-ahead log.
func benchBackends(b *testing.B) []struct {
	name string
	open func(b *testing.B) benchStore
} {
	c := fleettest.StartDurable(b, 1)
	cli := c.Client()
	return []struct {
		name string
		open func(b *testing.B) benchStore
	}{
		{"backend=bbolt", func(b *testing.B) benchStore {
			l, err := launchlog.New(launchlog.Options{Path: filepath.Join(b.TempDir(), "launch.db")})
			if err != nil {
				b.Fatal(err)
			}
			return l
		}},
		{"backend=etcd", func(b *testing.B) benchStore { return newTestLog(b, cli, nil) }},
		{"backend=etcd-cold", func(b *testing.B) benchStore { return coldLog{newTestLog(b, cli, nil)} }},
	}
}

// coldLog forgets what its Log saw before every call, as the first call of
// a process does: a write then takes two round trips (a transaction that
// fails its comparison and returns the key, then the one that commits)
// instead of one.
type coldLog struct{ *Log }

func (c coldLog) forget() {
	c.mu.Lock()
	clear(c.generators)
	clear(c.marks)
	c.mu.Unlock()
}

func (c coldLog) NextGenerator(ctx context.Context, launch int) (int, error) {
	c.forget()
	return c.Log.NextGenerator(context.Background(), launch)
}

func (c coldLog) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	c.forget()
	return c.Log.AdvanceHighWater(context.Background(), key, t)
}

// BenchmarkLogNextGenerator measures one NextGenerator call, from one
// goroutine (serial) and from GOMAXPROCS goroutines on one handle and one
// launch (parallel), where etcd transactions conflict and retry.
func BenchmarkLogNextGenerator(b *testing.B) {
	for _, bk := range benchBackends(b) {
		b.Run(bk.name+"/serial", func(b *testing.B) {
			s := bk.open(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.NextGenerator(context.Background(), 1); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bk.name+"/parallel", func(b *testing.B) {
			s := bk.open(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.NextGenerator(context.Background(), 1); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkLogAdvanceHighWater measures moving one mark forward by a
// second per call, as a generator's lease renewal does.
func BenchmarkLogAdvanceHighWater(b *testing.B) {
	epoch := time.Date(2025, 11, 21, 9, 30, 0, 0, time.UTC)
	for _, bk := range benchBackends(b) {
		b.Run(bk.name+"/serial", func(b *testing.B) {
			s := bk.open(b)
			at := epoch
			b.ReportAllocs()
			for b.Loop() {
				at = at.Add(time.Second)
				if _, err := s.AdvanceHighWater(context.Background(), "traceid/node/1", at); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bk.name+"/parallel", func(b *testing.B) {
			s := bk.open(b)
			var n atomic.Int64
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					at := epoch.Add(time.Duration(n.Add(1)) * time.Second)
					if _, err := s.AdvanceHighWater(context.Background(), "traceid/node/1", at); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
