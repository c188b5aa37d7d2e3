package objectid

import (
	"strings"
	"testing"
)

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
