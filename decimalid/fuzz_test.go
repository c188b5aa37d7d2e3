package decimalid

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse checks that Parse accepts exactly the canonical texts of valid
// IDs, in either form, and that every accepted ID survives the text, JSON
// and SQL round trips.
func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.in)
	}
	for _, v := range vectors {
		f.Add(v.text)
		f.Add(v.split)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrRange) {
				t.Fatalf("Parse(%q): %v is neither ErrSyntax nor ErrRange", s, err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("Parse(%q): error %q does not carry the input", s, err)
			}
			if id != 0 {
				t.Fatalf("Parse(%q) = %d with an error", s, id)
			}
			if ref, ok := reference(s); ok {
				t.Fatalf("Parse(%q) failed, reference parser got %d", s, ref)
			}
			return
		}
		if !id.IsValid() {
			t.Fatalf("Parse(%q) = %d, outside the domain", s, id)
		}
		if s != id.String() && s != id.SplitString() {
			t.Fatalf("Parse(%q) = %d, but its texts are %q and %q", s, id, id.String(), id.SplitString())
		}
		if ref, ok := reference(s); !ok || ref != id {
			t.Fatalf("Parse(%q) = %d, reference parser got %d, %v", s, id, ref, ok)
		}
		roundTrip(t, id)
	})
}

// reference parses s the slow way: strconv, and for the split form the
// three fields put together with Compose.
func reference(s string) (ID, bool) {
	if parts := strings.Split(s, "-"); len(parts) == 3 {
		if len(parts[1]) != 5 || len(parts[2]) != 5 || strings.HasPrefix(parts[0], "0") {
			return 0, false
		}
		var f [3]int
		for i, p := range parts {
			if p == "" || strings.Trim(p, "0123456789") != "" {
				return 0, false
			}
			v, err := strconv.Atoi(p)
			if err != nil {
				return 0, false
			}
			f[i] = v
		}
		id, err := Compose(f[0], f[1], f[2])
		return id, err == nil
	}
	if s == "" || strings.Trim(s, "0123456789") != "" || s[0] == '0' {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || !ID(v).IsValid() {
		return 0, false
	}
	return ID(v), true
}

// FuzzID checks the fields and round trips of any int64.
func FuzzID(f *testing.F) {
	for _, v := range vectors {
		f.Add(int64(v.id))
	}
	f.Add(int64(0))
	f.Add(int64(-1))
	f.Add(int64(Max) + 1)
	f.Fuzz(func(t *testing.T, v int64) {
		id := ID(v)
		if !id.IsValid() {
			if _, err := id.MarshalText(); (err == nil) != (id == 0) {
				t.Fatalf("MarshalText(%d): %v", v, err)
			}
			return
		}
		c, g, l := id.Counter(), id.Generator(), id.Launch()
		back, err := Compose(c, g, l)
		if err != nil || back != id {
			t.Fatalf("Compose(%d, %d, %d) = %d, %v; want %d", c, g, l, back, err, id)
		}
		roundTrip(t, id)
	})
}

func roundTrip(t *testing.T, id ID) {
	t.Helper()
	for _, s := range []string{id.String(), id.SplitString()} {
		if got, err := Parse(s); err != nil || got != id {
			t.Fatalf("Parse(%q) = %d, %v; want %d", s, got, err, id)
		}
	}
	text, err := id.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	var fromText ID
	if err := fromText.UnmarshalText(text); err != nil || fromText != id {
		t.Fatalf("text %q → %d, %v; want %d", text, fromText, err, id)
	}
	js, err := json.Marshal(id)
	if err != nil {
		t.Fatal(err)
	}
	var fromJSON, fromNumber ID
	if err := json.Unmarshal(js, &fromJSON); err != nil || fromJSON != id {
		t.Fatalf("JSON %s → %d, %v; want %d", js, fromJSON, err, id)
	}
	if err := json.Unmarshal([]byte(id.String()), &fromNumber); err != nil || fromNumber != id {
		t.Fatalf("JSON number %s → %d, %v; want %d", id, fromNumber, err, id)
	}
	v, err := id.Value()
	if err != nil {
		t.Fatal(err)
	}
	var fromSQL ID
	if err := fromSQL.Scan(v); err != nil || fromSQL != id {
		t.Fatalf("SQL %v → %d, %v; want %d", v, fromSQL, err, id)
	}
}

// FuzzUnmarshalJSON feeds arbitrary bytes to UnmarshalJSON, UnmarshalText
// and Scan: no panic, and whatever they accept is a valid ID or the zero
// ID.
func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range []string{`"14150009200065"`, `14150009200065`, `"1415-00092-00065"`, `null`, `""`, `"-1"`, `{}`, `1e10`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := func(id ID) bool { return id == 0 || id.IsValid() }
		var j ID
		if err := j.UnmarshalJSON(b); err == nil && !valid(j) {
			t.Fatalf("UnmarshalJSON(%q) accepted %d", b, j)
		}
		var x ID
		if err := x.UnmarshalText(b); err == nil && !valid(x) {
			t.Fatalf("UnmarshalText(%q) accepted %d", b, x)
		}
		for _, src := range []any{b, string(b)} {
			var s ID
			if err := s.Scan(src); err == nil && !valid(s) {
				t.Fatalf("Scan(%q) accepted %d", b, s)
			}
		}
	})
}
