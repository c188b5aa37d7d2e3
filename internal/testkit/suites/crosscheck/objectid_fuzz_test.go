package crosscheck

import (
	"encoding/json"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/idkit/idkit/objectid"
)

// FuzzObjectIDParse checks objectid.Parse against the MongoDB driver's
// ObjectIDFromHex, the reference parser, and the text, JSON and SQL round
// trips of every ID it accepts.
func FuzzObjectIDParse(f *testing.F) {
	for _, s := range []string{"507f1f77bcf86cd799439011", "507F1F77BCF86CD799439011", "ffffffffffffffffffffffff", "", "000000000000000000000000", "507f1f77bcf86cd79943901", "507f1f77bcf86cd79943901g", "0x7f1f77bcf86cd799439011"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := objectid.Parse(s)
		ref, refErr := bson.ObjectIDFromHex(s)
		if refErr == nil && ref.IsZero() {
			refErr = objectid.ErrRange // the driver parses its NilObjectID; the zero ID is not an ID here
		}
		if (err == nil) != (refErr == nil) {
			t.Fatalf("objectid.Parse(%q) = %v, %v; the driver says %v, %v", s, id, err, ref, refErr)
		}
		if err != nil {
			return
		}
		if id != objectid.ID(ref) {
			t.Fatalf("objectid.Parse(%q) = %v, the driver %v", s, id, ref)
		}
		if got := id.String(); got != strings.ToLower(s) {
			t.Fatalf("String() = %q, want %q", got, strings.ToLower(s))
		}
		if id.IsZero() {
			return
		}
		if back := objectid.MustParse(id.String()); back != id {
			t.Fatalf("String round trip: %v -> %v", id, back)
		}
		b, err := json.Marshal(id)
		if err != nil {
			t.Fatal(err)
		}
		var j objectid.ID
		if err := json.Unmarshal(b, &j); err != nil || j != id {
			t.Fatalf("JSON round trip of %v via %s: %v, %v", id, b, j, err)
		}
		v, _ := id.Value()
		var q objectid.ID
		if err := q.Scan(v); err != nil || q != id {
			t.Fatalf("SQL round trip of %v: %v, %v", id, q, err)
		}
		c, err := objectid.Compose(id.Timestamp(), id.Process(), id.Counter())
		if err != nil || c != id {
			t.Fatalf("Compose of %v's parts = %v, %v", id, c, err)
		}
	})
}
