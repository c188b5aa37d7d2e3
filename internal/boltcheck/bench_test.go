package boltcheck

import (
	"encoding/binary"
	"fmt"
	"testing"

	"go.etcd.io/bbolt"
)

// launchLog returns a file of the shape launchlog's
// BenchmarkNextGeneratorBigLog uses: one 8-byte record per launch in one
// bucket.
func launchLog(tb testing.TB, n int) []byte {
	return boltFile(tb, 0, false, func(tx *bbolt.Tx) error {
		bk, err := tx.CreateBucketIfNotExists([]byte("generators"))
		if err != nil {
			return err
		}
		for i := range n {
			if err := bk.Put(binary.BigEndian.AppendUint32(nil, uint32(i)), make([]byte, 8)); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkBytes measures the check alone on launch logs of 1, 100 and
// 10,000 records.
func BenchmarkBytes(b *testing.B) {
	for _, n := range []int{1, 100, 10_000} {
		data := launchLog(b, n)
		b.Run(fmt.Sprint(n, " records"), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := Bytes(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFile measures File on a launch log of 100 records as bbolt
// wrote it, and on the same file grown sparsely to 1 GiB: the pages past
// the high water mark hold nothing the check needs.
func BenchmarkFile(b *testing.B) {
	data := launchLog(b, 100)
	for _, v := range []struct {
		name string
		size int64
	}{
		{"small", 0},
		{"sparse 1 GiB", 1 << 30},
	} {
		f := tempFile(b, data, v.size)
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := File(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
