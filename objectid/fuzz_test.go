package objectid

import (
	"encoding/json"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FuzzParse checks Parse against the MongoDB driver's ObjectIDFromHex, the
// reference parser, and the text, JSON and SQL round trips of every ID it
// accepts.
func FuzzParse(f *testing.F) {
	for _, v := range vectors {
		f.Add(v.hex)
		f.Add(strings.ToUpper(v.hex))
	}
	for _, s := range []string{"", "000000000000000000000000", "507f1f77bcf86cd79943901", "507f1f77bcf86cd79943901g", "0x7f1f77bcf86cd799439011"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := Parse(s)
		ref, refErr := bson.ObjectIDFromHex(s)
		if refErr == nil && ref.IsZero() {
			refErr = ErrRange // the driver parses its NilObjectID; the zero ID is not an ID here
		}
		if (err == nil) != (refErr == nil) {
			t.Fatalf("Parse(%q) = %v, %v; the driver says %v, %v", s, id, err, ref, refErr)
		}
		if err != nil {
			return
		}
		if id != ID(ref) {
			t.Fatalf("Parse(%q) = %v, the driver %v", s, id, ref)
		}
		if got := id.String(); got != strings.ToLower(s) {
			t.Fatalf("String() = %q, want %q", got, strings.ToLower(s))
		}
		if id.IsZero() {
			return
		}
		if back := MustParse(id.String()); back != id {
			t.Fatalf("String round trip: %v -> %v", id, back)
		}
		b, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		var j ID
		if err := json.Unmarshal(b, &j); err != nil || j != id {
			t.Fatalf("JSON round trip of %v via %s: %v, %v", id, b, j, err)
		}
		v, _ := id.Value()
		var q ID
		if err := q.Scan(v); err != nil || q != id {
			t.Fatalf("SQL round trip of %v: %v, %v", id, q, err)
		}
		c, err := Compose(id.Timestamp(), id.Process(), id.Counter())
		if err != nil || c != id {
			t.Fatalf("Compose of %v's parts = %v, %v", id, c, err)
		}
	})
}

// FuzzUnmarshalJSON feeds arbitrary bytes to UnmarshalJSON and Scan: no
// panic, and an accepted value matches its text.
func FuzzUnmarshalJSON(f *testing.F) {
	for _, s := range []string{`"507f1f77bcf86cd799439011"`, `null`, `""`, `{"$oid":"507f1f77bcf86cd799439011"}`, `{}`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var id ID
		if err := id.UnmarshalJSON(b); err == nil && !id.IsZero() && !strings.Contains(strings.ToLower(string(b)), id.String()) {
			t.Fatalf("UnmarshalJSON(%q) = %v, not in the input", b, id)
		}
		var s ID
		_ = s.Scan(b)
		_ = s.Scan(string(b))
	})
}
