package publicid

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math/bits"
	"sync"
)

// This file keeps the construction publicid used before FF1 (construction
// version 0 of the text), its encrypting direction unchanged, for two uses
// in tests: the benchmark that compares FF1 with it, and the test that its
// public IDs fail to decode with ErrUnknownConstruction instead of giving
// a wrong ID.

// rounds is the number of Feistel rounds, as in NIST SP 800-38G's FF1.
const rounds = 10

// feistelPerm is a keyed permutation of 0..n-1: an unbalanced Feistel
// network on w = bits.Len64(n-1) bits whose round function is AES under
// the key, cycle-walked down to n values.
//
// The w bits split into a left part of u = w/2 bits and a right part of
// v = w-u bits. Round i computes C = A xor F(i, B) truncated to the width
// of A, then A, B = B, C; so the parts swap widths each round, and after
// an even number of rounds A has u bits again. F(i, B) is the first 64
// bits of AES(key, "P" | i | w | n | B): the round, the width and the
// domain size separate every round function from the others and from the
// other domains under the same key.
type feistelPerm struct {
	block  cipher.Block
	n      uint64 // values 0..n-1
	w      uint   // bits of the Feistel network
	u, v   uint   // widths of the left and right parts
	h0, h1 uint64 // the round function's input block, without round and value
	pool   sync.Pool
}

func newFeistelPerm(secret []byte, n uint64) (*feistelPerm, error) {
	block, err := aes.NewCipher(secret)
	if err != nil {
		return nil, err
	}
	w := max(uint(bits.Len64(n-1)), 2)
	p := &feistelPerm{block: block, n: n, w: w, u: w / 2, v: w - w/2}
	// "P" | round | w | n (8 bytes) | 0 | value (4 bytes)
	p.h0 = 'P'<<56 | uint64(w)<<40 | n>>24
	p.h1 = n << 40
	p.pool.New = func() any { return new([16]byte) }
	return p, nil
}

// f is the round function of round i on b, truncated to m bits. buf is
// scratch space from the pool, so that no block escapes to the heap per
// call.
func (p *feistelPerm) f(buf *[16]byte, i int, b uint64, m uint) uint64 {
	binary.BigEndian.PutUint64(buf[:8], p.h0|uint64(i)<<48)
	binary.BigEndian.PutUint64(buf[8:], p.h1|b)
	p.block.Encrypt(buf[:], buf[:])
	return binary.BigEndian.Uint64(buf[:8]) & (1<<m - 1)
}

// feistel applies the network once to x < 2^w.
func (p *feistelPerm) feistel(buf *[16]byte, x uint64) uint64 {
	a, b := x>>p.v, x&(1<<p.v-1) // a: u bits, b: v bits
	m, o := p.u, p.v             // widths of a and b
	for i := range rounds {
		c := a ^ p.f(buf, i, b, m)
		a, b = b, c
		m, o = o, m
	}
	return a<<p.v | b
}

// encrypt maps x < n to the permuted value < n, walking the cycle of the
// network until it lands inside the domain (Black and Rogaway's cycle
// walking): a bijection on 0..n-1 because the network is one on 0..2^w-1.
func (p *feistelPerm) encrypt(x uint64) uint64 {
	buf := p.pool.Get().(*[16]byte)
	y := p.feistel(buf, x)
	for y >= p.n {
		y = p.feistel(buf, y)
	}
	p.pool.Put(buf)
	return y
}
