package launchlog

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// The benchmarks measure one operation each, open, lock, verify,
// transaction, fsync and close included, on the machine's disk.
func BenchmarkNextGenerator(b *testing.B) {
	l := newLog(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.NextGenerator(context.Background(), 1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHold takes and releases a key: what a generator's start, and
// each Reserve call, adds to the store calls it makes.
func BenchmarkHold(b *testing.B) {
	l := newLog(b)
	b.ReportAllocs()
	for b.Loop() {
		h, err := l.Hold(context.Background(), "traceid/node/1")
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAdvanceHighWater(b *testing.B) {
	l := newLog(b)
	at := epoch
	b.ReportAllocs()
	for b.Loop() {
		at = at.Add(time.Second)
		if _, err := l.AdvanceHighWater(context.Background(), "traceid/node/1", at); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHeldAdvanceHighWater is a lease renewal of a generator on the
// log: a write through its hold, fenced by the hold's token.
func BenchmarkHeldAdvanceHighWater(b *testing.B) {
	l := newLog(b)
	h, err := l.Hold(context.Background(), "traceid/node/1")
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	at := epoch
	b.ReportAllocs()
	for b.Loop() {
		at = at.Add(time.Second)
		if _, err := h.AdvanceHighWater(context.Background(), "traceid/node/1", at); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHighWater(b *testing.B) {
	l := newLog(b)
	if _, err := l.AdvanceHighWater(context.Background(), "traceid/node/1", epoch); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.HighWater(context.Background(), "traceid/node/1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextGeneratorBigLog shows what verifying the whole file costs
// as the log fills: one generator counter per launch.
func BenchmarkNextGeneratorBigLog(b *testing.B) {
	for _, launches := range []int{100, 10_000} {
		b.Run(fmt.Sprint(launches, " launches"), func(b *testing.B) {
			l := newLog(b)
			err := l.update(func(tx *bbolt.Tx) error {
				bk, err := createBucket(tx, generatorsBucket)
				if err != nil {
					return err
				}
				for i := range launches {
					if err := putSealed(bk, idKey(i), []byte{0, 0, 0, 1}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := l.NextGenerator(context.Background(), 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
