package publicid

import (
	"strings"
	"testing"
)

// FuzzDecode checks that every text Decode accepts is a public ID of the
// codec read through Crockford's rules: encoding the ID it decodes to
// gives the text back in canonical form. Texts of other constructions
// never decode.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"7EGSJCREQ9RJ9Y", "7D9Q98X7KMBRV1", "79GNPDVTZWAR", "7CS0KJYXHNF1", "2FZZZZZZZZZZZZ",
		"7eGSJcREQ9RJ9y", "7FoIlZZZZZZZZZ", "78000000000000", "7G000000000001", "Y8000000000000",
		"72FW5FNTKGS1WJ", "71FCJ5Z1XSXGTE", "75NG5RWK9DKM", "77ZZZZZZZZZZZZ",
	} {
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
			if first, _ := digit(s[1]); first>>d.topBits() != construction {
				t.Fatalf("domain %d: Decode(%q) = %d: a text of construction %d decoded", d, s, id, first>>d.topBits())
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

// FuzzPermute checks round trips of any int64: Unpermute inverts Permute
// and Decode inverts Encode on the domain, and both refuse the rest.
func FuzzPermute(f *testing.F) {
	for _, id := range []int64{1, 2, 0, -1, 1<<53 - 1, 1 << 53, 1<<63 - 1, -1 << 63} {
		f.Add(id)
	}
	codecs := map[Domain]*Codec{}
	for _, d := range []Domain{Domain63, Domain53} {
		c, err := New(d, testKey(7, 0x5c))
		if err != nil {
			f.Fatal(err)
		}
		codecs[d] = c
	}
	f.Fuzz(func(t *testing.T, id int64) {
		for d, c := range codecs {
			v, err := c.Permute(id)
			if id < 1 || id > d.Max() {
				if err == nil {
					t.Fatalf("domain %d: Permute(%d) = %d, want an error", d, id, v)
				}
				continue
			}
			if err != nil || v < 1 || v > d.Max() {
				t.Fatalf("domain %d: Permute(%d) = %d, %v", d, id, v, err)
			}
			if back, err := c.Unpermute(v); err != nil || back != id {
				t.Fatalf("domain %d: Unpermute(Permute(%d)) = %d, %v", d, id, back, err)
			}
			s, err := c.Encode(id)
			if err != nil {
				t.Fatal(err)
			}
			if back, err := c.Decode(s); err != nil || back != id {
				t.Fatalf("domain %d: Decode(Encode(%d)) = %d, %v", d, id, back, err)
			}
		}
	})
}
