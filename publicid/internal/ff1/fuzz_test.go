package ff1

import (
	"testing"
)

// FuzzCipher checks that Decrypt inverts Encrypt for any radix, string and
// tweak the cipher accepts, that every numeral stays below the radix, and
// that Binary agrees with Cipher on radix-2 strings it takes.
func FuzzCipher(f *testing.F) {
	f.Add(uint8(0), uint16(10), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{})
	f.Add(uint8(1), uint16(36), []byte("0123456789abcdefghi"), []byte("7777pqrs777"))
	f.Add(uint8(2), uint16(2), make([]byte, 63), []byte{})
	f.Add(uint8(0), uint16(0), []byte{1, 2, 3}, []byte{1})
	keys := [][]byte{make([]byte, 16), make([]byte, 24), make([]byte, 32)}
	for i, k := range keys {
		for j := range k {
			k[j] = byte(i*7 + j)
		}
	}
	f.Fuzz(func(t *testing.T, keyIndex uint8, radix16 uint16, raw []byte, tweak []byte) {
		radix := int(radix16)
		if radix == 0 {
			radix = 1 << 16
		}
		key := keys[int(keyIndex)%len(keys)]
		c, err := New(key, radix)
		if err != nil {
			if radix >= MinRadix {
				t.Fatalf("New(radix %d): %v", radix, err)
			}
			return
		}
		x := make([]uint16, len(raw))
		for i, b := range raw {
			x[i] = uint16(int(b) % radix)
		}
		y, err := c.Encrypt(x, tweak)
		if err != nil {
			if len(x) >= c.MinLen() {
				t.Fatalf("Encrypt of %d numerals of radix %d: %v", len(x), radix, err)
			}
			return
		}
		for _, d := range y {
			if int(d) >= radix {
				t.Fatalf("numeral %d of radix %d", d, radix)
			}
		}
		back, err := c.Decrypt(y, tweak)
		if err != nil || !equal(back, x) {
			t.Fatalf("Decrypt(Encrypt(%v)) = %v, %v", x, back, err)
		}
		if radix != 2 || len(x) > MaxBinaryLen || len(tweak) != 0 {
			return
		}
		bin, err := NewBinary(key, len(x))
		if err != nil {
			t.Fatal(err)
		}
		var v, want uint64
		for i := range x {
			v = v<<1 | uint64(x[i])
			want = want<<1 | uint64(y[i])
		}
		if got, err := bin.Encrypt(v); err != nil || got != want {
			t.Fatalf("Binary.Encrypt(%#x) = %#x, %v; Cipher gives %#x", v, got, err, want)
		}
	})
}

func equal(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
