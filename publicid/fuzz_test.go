package publicid

import (
	"strings"
	"testing"
)

// FuzzDecode checks that every text Decode accepts is a public ID of the
// codec read through Crockford's rules: encoding the ID it decodes to
// gives the text back in canonical form.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"72FW5FNTKGS1WJ", "71FCJ5Z1XSXGTE", "7o1l1ZZZZZZZZZ", "70000000000000", "77ZZZZZZZZZZZZ", "Y8000000000000", "7G000000000001", "75NG5RWK9DKM"} {
		f.Add(s)
	}
	codecs := map[Domain]*Codec{}
	for _, d := range []Domain{Domain63, Domain53} {
		c, err := New(d, testKey(7, 0x5c), testKey(2, 0x11))
		if err != nil {
			f.Fatal(err)
		}
		codecs[d] = c
	}
	canonical := strings.NewReplacer("O", "0", "I", "1", "L", "1")
	f.Fuzz(func(t *testing.T, s string) {
		for d, c := range codecs {
			id, err := c.Decode(s)
			if err != nil {
				continue
			}
			if id < 1 || id > d.Max() {
				t.Fatalf("Decode(%q) = %d, outside the domain", s, id)
			}
			want := canonical.Replace(strings.ToUpper(s))
			var back string
			if want[0] == '2' {
				c2, _ := New(d, testKey(2, 0x11))
				back, err = c2.Encode(id)
			} else {
				back, err = c.Encode(id)
			}
			if err != nil || back != want {
				t.Fatalf("domain %d: Decode(%q) = %d, which encodes to %q, %v", d, s, id, back, err)
			}
		}
	})
}
