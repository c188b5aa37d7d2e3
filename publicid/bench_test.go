package publicid

import (
	"bytes"
	"fmt"
	"testing"
)

var sinkInt int64

// permute is Permute as it was before FF1: the range check, then the
// Feistel network on id-1.
func (p *feistelPerm) permute(id int64) (int64, error) {
	if id < 1 || uint64(id) > p.n {
		return 0, fmt.Errorf("%w: ID %d", ErrRange, id)
	}
	return int64(p.encrypt(uint64(id-1))) + 1, nil
}

// BenchmarkConstruction compares FF1's Permute with the construction
// before it on the same key and IDs, serial and parallel; compare them
// with benchstat -col /construction, and parallel with serial with
// benchstat -col /mode.
func BenchmarkConstruction(b *testing.B) {
	secret := bytes.Repeat([]byte{1}, 16)
	for _, d := range []Domain{Domain63, Domain53} {
		codec, err := New(d, Key{ID: 1, Secret: secret})
		if err != nil {
			b.Fatal(err)
		}
		old, err := newFeistelPerm(secret, uint64(d.Max()))
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range []struct {
			name    string
			permute func(int64) (int64, error)
		}{
			{"feistel", old.permute},
			{"ff1", codec.Permute},
		} {
			b.Run("domain="+d.name()+"/construction="+c.name+"/mode=serial", func(b *testing.B) {
				b.ReportAllocs()
				id := int64(1)
				for b.Loop() {
					sinkInt, _ = c.permute(id)
					id++
				}
			})
			b.Run("domain="+d.name()+"/construction="+c.name+"/mode=parallel", func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					id := int64(1)
					for pb.Next() {
						v, _ := c.permute(id)
						id += 1 + v&1
					}
				})
			})
		}
	}
}

// BenchmarkCodec is each operation of a Codec on FF1.
func BenchmarkCodec(b *testing.B) {
	for _, d := range []Domain{Domain63, Domain53} {
		c, err := New(d, Key{ID: 1, Secret: bytes.Repeat([]byte{1}, 16)})
		if err != nil {
			b.Fatal(err)
		}
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
		text, _ := c.Encode(12345)
		b.Run(d.name()+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkInt, _ = c.Decode(text)
			}
		})
		// A page of 100 IDs; ns/op is per page.
		ids := make([]int64, 100)
		for i := range ids {
			ids[i] = int64(i + 1)
		}
		page := make([]byte, 0, len(ids)*d.TextLen())
		b.Run(d.name()+"/encode-all-100", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page, _ = c.AppendEncodeAll(page[:0], ids)
			}
		})
	}
}
