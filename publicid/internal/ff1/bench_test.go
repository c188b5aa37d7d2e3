package ff1

import (
	"bytes"
	"crypto/aes"
	"testing"
)

var sink uint64

// BenchmarkBinary is one FF1 encryption and decryption of a 63-bit
// string: 10 rounds of one AES block each.
func BenchmarkBinary(b *testing.B) {
	f, err := NewBinary(bytes.Repeat([]byte{1}, 16), 63)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encrypt", func(b *testing.B) {
		b.ReportAllocs()
		x := uint64(1)
		for b.Loop() {
			x, _ = f.Encrypt(x)
		}
		sink = x
	})
	b.Run("decrypt", func(b *testing.B) {
		b.ReportAllocs()
		x := uint64(1)
		for b.Loop() {
			x, _ = f.Decrypt(x)
		}
		sink = x
	})
}

// BenchmarkAESBlock is one cipher.Block.Encrypt call, the cost of a round.
func BenchmarkAESBlock(b *testing.B) {
	block, err := aes.NewCipher(bytes.Repeat([]byte{1}, 16))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 16)
	b.ReportAllocs()
	for b.Loop() {
		block.Encrypt(buf, buf)
	}
}

// BenchmarkCipher is the general FF1 on NIST's decimal sample, for scale:
// big integers and allocations per call.
func BenchmarkCipher(b *testing.B) {
	c, err := New(bytes.Repeat([]byte{1}, 16), 10)
	if err != nil {
		b.Fatal(err)
	}
	x := []uint16{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	b.ReportAllocs()
	for b.Loop() {
		x, _ = c.Encrypt(x, nil)
	}
}
