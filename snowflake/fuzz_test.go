package snowflake

import (
	"encoding/json"
	"strconv"
	"testing"
)

// FuzzParse checks Parse against strconv, the reference parser, and the
// text, JSON and SQL round trips of every ID it accepts, and that every
// preset decodes what it accepts without panicking and composes it back.
func FuzzParse(f *testing.F) {
	for _, v := range vectors {
		f.Add(strconv.FormatInt(v.id, 10))
	}
	for _, s := range []string{"", "0", "-1", "+1", "9223372036854775808", "1e3", " 1", "00", "-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		ref, refErr := strconv.ParseInt(s, 10, 64)
		refOK := refErr == nil && ref > 0 && strconv.FormatInt(ref, 10) == s
		if (err == nil) != refOK {
			t.Fatalf("Parse(%q) = %v, %v; strconv says %d, %v", s, id, err, ref, refErr)
		}
		if err != nil {
			return
		}
		if int64(id) != ref {
			t.Fatalf("Parse(%q) = %d, want %d", s, id, ref)
		}
		if back := MustParse(id.String()); back != id {
			t.Fatalf("String round trip: %d -> %q -> %d", id, id.String(), back)
		}
		b, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		var j ID
		if err := json.Unmarshal(b, &j); err != nil || j != id {
			t.Fatalf("JSON round trip of %d via %s: %d, %v", id, b, j, err)
		}
		v, _ := id.Value()
		var q ID
		if err := q.Scan(v); err != nil || q != id {
			t.Fatalf("SQL round trip of %d: %d, %v", id, q, err)
		}
		for _, name := range PresetNames() {
			l, _ := Preset(name)
			p, err := l.Decode(id)
			if err != nil {
				if l.Bits() == 63 {
					t.Fatalf("%s: Decode(%d): %v", name, id, err)
				}
				continue
			}
			back, err := l.Compose(p)
			if err != nil || back != id {
				t.Fatalf("%s: Compose(Decode(%d)) = %d, %v", name, id, back, err)
			}
		}
	})
}

// FuzzUnmarshalJSON feeds arbitrary bytes to UnmarshalJSON and Scan: no
// panic, and anything accepted is a valid ID or the zero ID.
func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range []string{`"1"`, `1`, `null`, `""`, `"-1"`, `"9223372036854775807"`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var id ID
		if err := id.UnmarshalJSON(b); err == nil && id < 0 {
			t.Fatalf("UnmarshalJSON(%q) accepted %d", b, id)
		}
		var s ID
		if err := s.Scan(b); err == nil && s < 0 {
			t.Fatalf("Scan(%q) accepted %d", b, s)
		}
	})
}
