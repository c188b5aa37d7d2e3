package publicid

import (
	"bytes"
	"testing"
)

var sinkInt int64

func BenchmarkPermute(b *testing.B) {
	for _, d := range []Domain{Domain63, Domain53} {
		c, err := New(d, Key{ID: 1, Secret: bytes.Repeat([]byte{1}, 16)})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(d.name()+"/permute", func(b *testing.B) {
			b.ReportAllocs()
			id := int64(1)
			for b.Loop() {
				sinkInt, _ = c.Permute(id)
				id++
			}
		})
		b.Run(d.name()+"/unpermute", func(b *testing.B) {
			b.ReportAllocs()
			v := int64(1)
			for b.Loop() {
				sinkInt, _ = c.Unpermute(v)
				v++
			}
		})
		buf := make([]byte, 0, 16)
		b.Run(d.name()+"/encode", func(b *testing.B) {
			b.ReportAllocs()
			id := int64(1)
			for b.Loop() {
				buf, _ = c.AppendEncode(buf[:0], id)
				id++
			}
		})
		b.Run(d.name()+"/permute-parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				id := int64(1)
				for pb.Next() {
					v, _ := c.Permute(id)
					id += v & 1
				}
			})
		})
	}
}

// BenchmarkRoundFunction is one call of the round function, an AES block
// encryption: a mapping costs 10 of them, which sets its speed.
func BenchmarkRoundFunction(b *testing.B) {
	p, err := newPerm(bytes.Repeat([]byte{1}, 16), uint64(Domain63.Max()))
	if err != nil {
		b.Fatal(err)
	}
	buf := new([16]byte)
	var x uint64
	b.ReportAllocs()
	for b.Loop() {
		x = p.f(buf, 3, x, 31)
	}
	sinkInt = int64(x)
}
