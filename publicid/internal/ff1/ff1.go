package ff1

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"fmt"
	"math/big"
)

// The limits SP 800-38G Rev. 1 sets on FF1's parameters.
const (
	MinRadix = 2
	MaxRadix = 1 << 16
	// MinDomain is the fewest strings a length must give: a numeral
	// string of radix r is at least minlen long, the least minlen >= 2
	// with r^minlen >= MinDomain (20 bits, 6 decimal digits, 4 numerals
	// of radix 36).
	MinDomain = 1_000_000
	// MaxLen is the longest numeral string: FF1 writes the length in four
	// bytes.
	MaxLen = 1<<32 - 1
	// MaxTweakLen is the longest tweak in bytes, also written in four
	// bytes.
	MaxTweakLen = 1<<32 - 1
)

// rounds is the number of Feistel rounds of FF1.
const rounds = 10

// Cipher is FF1 under one AES key for numeral strings of one radix. It is
// safe for concurrent use.
type Cipher struct {
	block  cipher.Block
	radix  int
	minLen int
}

// New returns FF1 under key, an AES-128, AES-192 or AES-256 key (16, 24
// or 32 bytes), for strings of numerals 0 to radix-1, radix MinRadix to
// MaxRadix.
func New(key []byte, radix int) (*Cipher, error) {
	block, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	if radix < MinRadix || radix > MaxRadix {
		return nil, fmt.Errorf("%w: radix %d, want %d to %d", ErrRadix, radix, MinRadix, MaxRadix)
	}
	return &Cipher{block: block, radix: radix, minLen: minLen(radix)}, nil
}

func newBlock(key []byte) (cipher.Block, error) {
	switch len(key) {
	case 16, 24, 32:
		return aes.NewCipher(key)
	}
	return nil, fmt.Errorf("%w: key of %d bytes, want 16, 24 or 32 (AES-128, AES-192 or AES-256)", ErrKey, len(key))
}

// minLen returns the shortest string SP 800-38G Rev. 1 allows for radix:
// the least n >= 2 with radix^n >= MinDomain.
func minLen(radix int) int {
	n := 0
	for size := uint64(1); size < MinDomain; size *= uint64(radix) {
		n++
	}
	return max(n, 2)
}

// Radix returns the radix of the numerals.
func (c *Cipher) Radix() int { return c.radix }

// MinLen returns the shortest numeral string the cipher takes: the least
// length >= 2 whose strings number at least MinDomain.
func (c *Cipher) MinLen() int { return c.minLen }

// Encrypt returns the encryption of the numeral string x under tweak, a
// new string of x's length (FF1.Encrypt, Algorithm 7 of SP 800-38G).
func (c *Cipher) Encrypt(x []uint16, tweak []byte) ([]uint16, error) {
	if err := c.check(x, tweak); err != nil {
		return nil, err
	}
	return c.crypt(x, tweak, false), nil
}

// Decrypt returns the numeral string whose encryption under tweak is y
// (FF1.Decrypt, Algorithm 8 of SP 800-38G).
func (c *Cipher) Decrypt(y []uint16, tweak []byte) ([]uint16, error) {
	if err := c.check(y, tweak); err != nil {
		return nil, err
	}
	return c.crypt(y, tweak, true), nil
}

func (c *Cipher) check(x []uint16, tweak []byte) error {
	if n := uint64(len(x)); n < uint64(c.minLen) || n > MaxLen {
		return fmt.Errorf("%w: %d numerals of radix %d, want %d to %d (radix^length at least %d)",
			ErrLength, n, c.radix, c.minLen, uint64(MaxLen), MinDomain)
	}
	for i, d := range x {
		if int(d) >= c.radix {
			return fmt.Errorf("%w: numeral %d is %d, want 0 to %d (radix %d)", ErrNumeral, i, d, c.radix-1, c.radix)
		}
	}
	if uint64(len(tweak)) > MaxTweakLen {
		return fmt.Errorf("%w: %d bytes, want at most %d", ErrTweak, len(tweak), uint64(MaxTweakLen))
	}
	return nil
}

// crypt runs the Feistel rounds of FF1 forwards (encryption) or backwards
// on a checked string x, with the variables named as in the standard.
func (c *Cipher) crypt(x []uint16, tweak []byte, decrypt bool) []uint16 {
	n, t := len(x), len(tweak)
	u := n / 2
	v := n - u
	radix := big.NewInt(int64(c.radix))
	radixU := new(big.Int).Exp(radix, big.NewInt(int64(u)), nil)
	radixV := new(big.Int).Exp(radix, big.NewInt(int64(v)), nil)
	// b = ceil(ceil(v*log2(radix))/8): ceil(v*log2(radix)) is the bit
	// length of radix^v-1, computed exactly rather than in floating point.
	b := (new(big.Int).Sub(radixV, big.NewInt(1)).BitLen() + 7) / 8
	d := 4*((b+3)/4) + 4

	// P || Q. P and the part of Q before the round number are the same
	// in every round; the round number and NUM(B) (A when decrypting)
	// fill the last b+1 bytes.
	pad := ((-t-b-1)%16 + 16) % 16
	pq := make([]byte, 16+t+pad+1+b)
	pq[0], pq[1], pq[2] = 1, 2, 1
	pq[3], pq[4], pq[5] = byte(c.radix>>16), byte(c.radix>>8), byte(c.radix)
	pq[6] = rounds
	pq[7] = byte(u) // u mod 256
	binary.BigEndian.PutUint32(pq[8:], uint32(n))
	binary.BigEndian.PutUint32(pq[12:], uint32(t))
	copy(pq[16:], tweak)
	roundAt := 16 + t + pad

	s := make([]byte, (d+15)/16*16)
	y := new(big.Int)
	a, bb := c.num(x[:u]), c.num(x[u:])
	for j := range rounds {
		i := j
		if decrypt {
			i = rounds - 1 - j
		}
		m := radixU
		if i%2 == 1 {
			m = radixV
		}
		pq[roundAt] = byte(i)
		if decrypt {
			a.FillBytes(pq[roundAt+1:])
		} else {
			bb.FillBytes(pq[roundAt+1:])
		}
		c.prf(s, pq)
		y.SetBytes(s[:d])
		if decrypt {
			// C = (NUM(B) - y) mod radix^m; B = A; A = C.
			bb.Sub(bb, y).Mod(bb, m)
			a, bb = bb, a
		} else {
			// C = (NUM(A) + y) mod radix^m; A = B; B = C.
			a.Add(a, y).Mod(a, m)
			a, bb = bb, a
		}
	}
	out := make([]uint16, n)
	c.str(out[:u], a)
	c.str(out[u:], bb)
	return out
}

// prf fills s with FF1's S before truncation to d bytes: R, the CBC-MAC
// under the key of pq (PRF(P || Q)), followed by the encryptions of
// R xor [j]^16 for j = 1, 2, ... while s has room.
func (c *Cipher) prf(s, pq []byte) {
	r := s[:16]
	clear(r)
	for k := 0; k < len(pq); k += 16 {
		subtle.XORBytes(r, r, pq[k:k+16])
		c.block.Encrypt(r, r)
	}
	for j := 1; j < len(s)/16; j++ {
		blk := s[16*j : 16*j+16]
		copy(blk, r)
		binary.BigEndian.PutUint64(blk[8:], binary.BigEndian.Uint64(r[8:])^uint64(j))
		c.block.Encrypt(blk, blk)
	}
}

// num returns NUM_radix(x): x read as a number in base radix, first
// numeral most significant.
func (c *Cipher) num(x []uint16) *big.Int {
	z, r, d := new(big.Int), big.NewInt(int64(c.radix)), new(big.Int)
	for _, xi := range x {
		z.Mul(z, r).Add(z, d.SetUint64(uint64(xi)))
	}
	return z
}

// str writes STR^m_radix(z) to out, m = len(out): the m numerals of
// z < radix^m, first numeral most significant.
func (c *Cipher) str(out []uint16, z *big.Int) {
	q, r, d := new(big.Int).Set(z), big.NewInt(int64(c.radix)), new(big.Int)
	for i := len(out) - 1; i >= 0; i-- {
		q.QuoRem(q, r, d)
		out[i] = uint16(d.Uint64())
	}
}
