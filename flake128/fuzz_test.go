package flake128

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// FuzzParse checks Parse against math/big as the reference base-62 and
// hexadecimal parser, and the text, JSON and SQL round trips of every ID
// it accepts.
func FuzzParse(f *testing.F) {
	for _, v := range boundaryText {
		f.Add(v.text)
	}
	for _, s := range []string{"", "0", "01", "z", "7n42DGM5Tflk9n8mt7Fhc7", "7n42DGM5Tflk9n8mt7Fhc8", boundaryBinary.Hex(), "00000000000000000000000000000000"} {
		f.Add(s)
	}
	limit := new(big.Int).Lsh(big.NewInt(1), 128)
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		var ref *big.Int
		ok := false
		switch {
		case len(s) == 32:
			ref, ok = new(big.Int).SetString(s, 16)
			for _, c := range s {
				ok = ok && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f')
			}
		case len(s) > 0 && (len(s) == 1 || s[0] != '0'):
			// math/big's base 62 uses 0-9, a-z, A-Z: lowercase before
			// uppercase, the other way round from Boundary's.
			ref, ok = new(big.Int).SetString(swapCase(s), 62)
			for _, c := range s {
				ok = ok && (c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
			}
		}
		ok = ok && ref.Sign() > 0 && ref.Cmp(limit) < 0
		if (err == nil) != ok {
			t.Fatalf("Parse(%q) = %v, %v; math/big says valid=%v (%v)", s, id, err, ok, ref)
		}
		if err != nil {
			return
		}
		if got := new(big.Int).SetBytes(id[:]); got.Cmp(ref) != 0 {
			t.Fatalf("Parse(%q) = %x, want %x", s, got, ref)
		}
		if back := MustParse(id.String()); back != id {
			t.Fatalf("String round trip: %v -> %v", id, back)
		}
		if back := MustParse(id.Hex()); back != id {
			t.Fatalf("Hex round trip: %v -> %v", id, back)
		}
		b, _ := json.Marshal(id)
		var j ID
		if err := json.Unmarshal(b, &j); err != nil || j != id {
			t.Fatalf("JSON round trip of %v via %s: %v, %v", id, b, j, err)
		}
		v, _ := id.Value()
		var q ID
		if err := q.Scan(v); err != nil || q != id {
			t.Fatalf("SQL round trip of %v: %v, %v", id, q, err)
		}
	})
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
}
