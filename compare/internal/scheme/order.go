package scheme

import (
	"bytes"
	"fmt"
	"math/bits"

	"github.com/idkit/idkit/compare/internal/engine"
)

func keyLenError(got, want int) error {
	return fmt.Errorf("%w: generator returned a %d-byte key, want %d", ErrKey, got, want)
}

// Generate draws n keys from gens in round robin: key i comes from writer
// i mod len(gens), as K app instances inserting into one table at the same
// pace. step, if not nil, is called every so often with the keys so far.
func Generate(gens []Generator, keyLen, n int, step func(done int)) (engine.KeySet, error) {
	k := engine.KeySet{Len: keyLen, Data: make([]byte, 0, n*keyLen)}
	for i := range n {
		before := len(k.Data)
		var err error
		k.Data, err = gens[i%len(gens)].Next(k.Data)
		if err != nil {
			return engine.KeySet{}, fmt.Errorf("compare: writer %d, key %d: %w", i%len(gens), i, err)
		}
		if got := len(k.Data) - before; got != keyLen {
			return engine.KeySet{}, keyLenError(got, keyLen)
		}
		if step != nil && i%4096 == 4095 {
			step(i + 1)
		}
	}
	return k, nil
}

// Order is how far generation order is from key order.
type Order struct {
	// Appends is the fraction of keys greater than every key before them:
	// the inserts that land at the right edge of a B+tree.
	Appends float64 `json:"append_fraction"`
	// Inversions is the number of pairs i < j with key i > key j, and
	// InversionFraction that number over all n(n-1)/2 pairs: 0 for sorted
	// input, about 0.5 for random input.
	Inversions        int64   `json:"inversions"`
	InversionFraction float64 `json:"inversion_fraction"`
	// Duplicates is the number of keys equal to an earlier key; any is a
	// uniqueness failure of the scheme (or its simulation).
	Duplicates int `json:"duplicates"`
}

// Size is what the keys cost to store.
type Size struct {
	// KeyBytes is the length of one key.
	KeyBytes int `json:"key_bytes"`
	// PackedBytesPerID is bytes per ID after sorting the keys, replacing
	// each by its difference from the previous one and writing the
	// differences as unsigned LEB128 varints (what a sorted column or an
	// index with prefix compression approaches).
	PackedBytesPerID float64 `json:"packed_bytes_per_id"`
	// MaxBits is the bit length of the largest key of the run: at most 53
	// means every ID issued fits a JavaScript number exactly.
	MaxBits int `json:"max_bits"`
}

// Analyze measures order and size of keys.
func Analyze(k engine.KeySet) (Order, Size) {
	n := k.N()
	var o Order
	sorted, inv := sortCount(k)
	o.Inversions = inv
	if n > 1 {
		o.InversionFraction = float64(inv) / (float64(n) * float64(n-1) / 2)
	}
	o.Appends = appendFraction(k)
	for i := 1; i < n; i++ {
		if bytes.Equal(k.At(int(sorted[i-1])), k.At(int(sorted[i]))) {
			o.Duplicates++
		}
	}
	s := Size{KeyBytes: k.Len}
	if n > 0 {
		s.PackedBytesPerID = float64(packedSize(k, sorted)) / float64(n)
		s.MaxBits = bitLen(k.At(int(sorted[n-1])))
	}
	return o, s
}

// appendFraction returns the fraction of keys greater than all before
// them; the first key counts as an append to the empty tree.
func appendFraction(k engine.KeySet) float64 {
	n := k.N()
	if n == 0 {
		return 0
	}
	appends := 1
	maxI := 0
	for i := 1; i < n; i++ {
		if bytes.Compare(k.At(i), k.At(maxI)) > 0 {
			appends++
			maxI = i
		}
	}
	return float64(appends) / float64(n)
}

// sortCount returns the indexes of k in key order (stable) and the number
// of inversions, counted by merge sort in O(n log n).
func sortCount(k engine.KeySet) ([]int32, int64) {
	n := k.N()
	a := make([]int32, n)
	for i := range a {
		a[i] = int32(i)
	}
	tmp := make([]int32, n)
	var inv int64
	for width := 1; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid := min(lo+width, n)
			hi := min(lo+2*width, n)
			i, j, o := lo, mid, lo
			for i < mid && j < hi {
				if bytes.Compare(k.At(int(a[j])), k.At(int(a[i]))) < 0 {
					inv += int64(mid - i)
					tmp[o] = a[j]
					j++
				} else {
					tmp[o] = a[i]
					i++
				}
				o++
			}
			o += copy(tmp[o:], a[i:mid])
			copy(tmp[o:], a[j:hi])
		}
		a, tmp = tmp, a
	}
	return a, inv
}

// packedSize returns the bytes needed to store the keys in sorted order as
// varint deltas: the first key's delta is from zero.
func packedSize(k engine.KeySet, sorted []int32) int {
	prev := make([]byte, k.Len)
	delta := make([]byte, k.Len)
	total := 0
	for _, i := range sorted {
		cur := k.At(int(i))
		subtract(delta, cur, prev)
		total += varintLen(delta)
		copy(prev, cur)
	}
	return total
}

// subtract sets d = a - b for equal-length big-endian unsigned integers
// with a >= b.
func subtract(d, a, b []byte) {
	borrow := 0
	for i := len(a) - 1; i >= 0; i-- {
		v := int(a[i]) - int(b[i]) - borrow
		borrow = 0
		if v < 0 {
			v += 256
			borrow = 1
		}
		d[i] = byte(v)
	}
}

// bitLen returns the bit length of the big-endian integer b.
func bitLen(b []byte) int {
	for i, c := range b {
		if c != 0 {
			return (len(b)-i-1)*8 + bits.Len8(c)
		}
	}
	return 0
}

// varintLen returns the length of the unsigned LEB128 encoding of the
// big-endian integer b: one byte per started 7 bits, at least one.
func varintLen(b []byte) int {
	return max(1, (bitLen(b)+6)/7)
}

// appendVarint appends the unsigned LEB128 encoding of the big-endian
// integer b; packedSize counts what it would write.
func appendVarint(dst, b []byte) []byte {
	// Walk the bits from least significant upwards, 7 at a time.
	n := varintLen(b)
	for g := range n {
		var v byte
		for bit := range 7 {
			pos := g*7 + bit // bit position from the least significant end
			byteI := len(b) - 1 - pos/8
			if byteI >= 0 && b[byteI]>>(pos%8)&1 == 1 {
				v |= 1 << bit
			}
		}
		if g < n-1 {
			v |= 0x80
		}
		dst = append(dst, v)
	}
	return dst
}

// packKeys encodes keys of keyLen bytes, sorted, as LEB128 varint deltas:
// the encoding whose size PackedBytesPerID reports. Keys must be sorted
// and of length keyLen.
func packKeys(sorted [][]byte, keyLen int) []byte {
	prev := make([]byte, keyLen)
	delta := make([]byte, keyLen)
	var out []byte
	for _, cur := range sorted {
		subtract(delta, cur, prev)
		out = appendVarint(out, delta)
		copy(prev, cur)
	}
	return out
}

// unpackKeys reverses packKeys.
func unpackKeys(b []byte, keyLen int) ([][]byte, error) {
	prev := make([]byte, keyLen)
	var out [][]byte
	for len(b) > 0 {
		delta := make([]byte, keyLen)
		pos := 0
		for {
			if len(b) == 0 {
				return nil, fmt.Errorf("%w: truncated varint", ErrKey)
			}
			c := b[0]
			b = b[1:]
			for bit := range 7 {
				if c>>bit&1 == 1 {
					p := pos + bit
					byteI := keyLen - 1 - p/8
					if byteI < 0 {
						return nil, fmt.Errorf("%w: varint longer than %d bytes", ErrKey, keyLen)
					}
					delta[byteI] |= 1 << (p % 8)
				}
			}
			pos += 7
			if c&0x80 == 0 {
				break
			}
		}
		cur := make([]byte, keyLen)
		carry := 0
		for i := keyLen - 1; i >= 0; i-- {
			v := int(prev[i]) + int(delta[i]) + carry
			cur[i] = byte(v)
			carry = v >> 8
		}
		if carry != 0 {
			return nil, fmt.Errorf("%w: delta overflows %d bytes", ErrKey, keyLen)
		}
		out = append(out, cur)
		prev = cur
	}
	return out, nil
}
