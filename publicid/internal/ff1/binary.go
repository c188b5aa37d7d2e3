package ff1

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"sync"
)

// The lengths Binary takes: FF1's shortest binary string, and the bits of
// a uint64.
const (
	MinBinaryLen = 20
	MaxBinaryLen = 64
)

// Binary is FF1 with radix 2 and an empty tweak on strings of n bits,
// MinBinaryLen to MaxBinaryLen, each held in the low n bits of a uint64
// with the first numeral as the most significant bit. For such strings it
// gives the results of Cipher, computed with fixed-width integers.
//
// FF1's round function is the CBC-MAC of two blocks, P || Q. P depends
// only on the radix, the length and the tweak's length, so its encryption
// is computed once by NewBinary; Q holds the round number and one half of
// the string, and each round costs one AES block encryption. Neither half
// exceeds 32 bits, so NUM(B) fills at most 4 bytes (b <= 4), d is 8 and y
// is the first 8 bytes of R.
//
// A Binary is safe for concurrent use and allocates nothing per call.
type Binary struct {
	block cipher.Block
	n     uint   // length of the strings
	v     uint   // length of the half B; A has u = n/2 bits
	maskU uint64 // 2^u-1
	maskV uint64 // 2^v-1
	shift uint   // 8b: the round number's place above NUM(B) in Q
	p0    uint64 // CIPH(P), the first block of the CBC-MAC, as two integers
	p1    uint64
	// scratch holds AES blocks: a block passed to cipher.Block escapes,
	// so a block on the stack would be allocated on every call.
	scratch sync.Pool
}

// NewBinary returns FF1 under key, an AES-128, AES-192 or AES-256 key,
// with radix 2 and an empty tweak, for strings of n bits.
func NewBinary(key []byte, n int) (*Binary, error) {
	block, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	if n < MinBinaryLen || n > MaxBinaryLen {
		return nil, fmt.Errorf("%w: %d bits, want %d to %d", ErrLength, n, MinBinaryLen, MaxBinaryLen)
	}
	u := n / 2
	v := n - u
	b := (v + 7) / 8 // ceil(ceil(v*log2(2))/8)
	// P = [1]^1 || [2]^1 || [1]^1 || [radix]^3 || [10]^1 || [u mod 256]^1 || [n]^4 || [t]^4
	p := [16]byte{1, 2, 1, 0, 0, 2, rounds, byte(u)}
	binary.BigEndian.PutUint32(p[8:], uint32(n))
	block.Encrypt(p[:], p[:])
	f := &Binary{
		block: block,
		n:     uint(n),
		v:     uint(v),
		maskU: 1<<u - 1,
		maskV: 1<<v - 1,
		shift: 8 * uint(b),
		p0:    binary.BigEndian.Uint64(p[:8]),
		p1:    binary.BigEndian.Uint64(p[8:]),
	}
	f.scratch.New = func() any { return new([16]byte) }
	return f, nil
}

// Len returns the length of the strings in bits.
func (f *Binary) Len() int { return int(f.n) }

// Encrypt returns the encryption of the n-bit string x.
//
// The standard's round i sets C = (NUM(A) + y) mod 2^m, A = B, B = C, with
// m = u in even rounds and v in odd ones. Two rounds in a row thus add to
// A, then to B, each in place, which is how the loop runs them.
func (f *Binary) Encrypt(x uint64) (uint64, error) {
	if err := f.check(x); err != nil {
		return 0, err
	}
	buf := f.scratch.Get().(*[16]byte)
	a, b := x>>f.v, x&f.maskV
	for i := 0; i < rounds; i += 2 {
		a = (a + f.y(buf, i, b)) & f.maskU
		b = (b + f.y(buf, i+1, a)) & f.maskV
	}
	f.scratch.Put(buf)
	return a<<f.v | b, nil
}

// Decrypt returns the n-bit string whose encryption is y: the rounds of
// Encrypt backwards, each subtracting what it added.
func (f *Binary) Decrypt(y uint64) (uint64, error) {
	if err := f.check(y); err != nil {
		return 0, err
	}
	buf := f.scratch.Get().(*[16]byte)
	a, b := y>>f.v, y&f.maskV
	for i := rounds - 2; i >= 0; i -= 2 {
		b = (b - f.y(buf, i+1, a)) & f.maskV
		a = (a - f.y(buf, i, b)) & f.maskU
	}
	f.scratch.Put(buf)
	return a<<f.v | b, nil
}

func (f *Binary) check(x uint64) error {
	if f.n < 64 && x>>f.n != 0 {
		return fmt.Errorf("%w: %#x is not a string of %d bits, want below 2^%d", ErrNumeral, x, f.n, f.n)
	}
	return nil
}

// y returns FF1's y of round i on the half h: the first 8 bytes of
// R = CIPH(CIPH(P) xor Q) as an integer, where
// Q = [0]^(15-b) || [i]^1 || [h]^b. Q's first 8 bytes are zero, since
// b <= 4.
func (f *Binary) y(buf *[16]byte, i int, h uint64) uint64 {
	binary.BigEndian.PutUint64(buf[:8], f.p0)
	binary.BigEndian.PutUint64(buf[8:], f.p1^(uint64(i)<<f.shift|h))
	f.block.Encrypt(buf[:], buf[:])
	return binary.BigEndian.Uint64(buf[:8])
}
