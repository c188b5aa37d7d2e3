package boltcheck

import (
	"encoding/binary"
	"fmt"
	"testing"

	"go.etcd.io/bbolt"
)

// BenchmarkBytes measures the check alone on launch logs of the shape
// launchlog's BenchmarkNextGeneratorBigLog uses: one 8-byte record per
// launch in one bucket.
func BenchmarkBytes(b *testing.B) {
	for _, n := range []int{1, 100, 10_000} {
		data := boltFile(b, 0, false, func(tx *bbolt.Tx) error {
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
