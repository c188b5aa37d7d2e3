package segment

import (
	"strconv"

	"github.com/idkit/idkit/internal/intid"
)

// ID is an ID issued by an Allocator: a value from 1 to 2^63-1, dense and
// increasing within its tag. The zero ID means "no ID": no allocator
// issues it, Parse rejects it, and it encodes as empty text, an empty JSON
// string and SQL NULL, which decode to it.
//
// Parse, UnmarshalText, UnmarshalJSON and Scan accept canonical decimal
// text (no sign, no leading zero); JSON also takes a bare number.
// Marshalling a negative value is an error.
type ID int64

// IsZero reports whether id is the zero (invalid) ID.
func (id ID) IsZero() bool { return id == 0 }

// IsValid reports whether id is an ID: positive.
func (id ID) IsValid() bool { return id > 0 }

// String returns the decimal form of id.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// text is the text, JSON and SQL plumbing shared with the other int64
// schemes.
var text = intid.Scheme{ErrSyntax: ErrSyntax, ErrRange: ErrRange, Check: intid.Positive}

// AppendText appends the decimal form of id to b, or nothing for the zero
// ID. It fails for a negative id.
func (id ID) AppendText(b []byte) ([]byte, error) { return text.AppendText(b, int64(id)) }

// MarshalText implements encoding.TextMarshaler.
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(nil) }

// UnmarshalText implements encoding.TextUnmarshaler. Empty text decodes to
// the zero ID.
func (id *ID) UnmarshalText(b []byte) error { return text.ParseText((*int64)(id), b) }

// MarshalJSON encodes id as a JSON string, since JavaScript numbers lose
// integers above 2^53.
func (id ID) MarshalJSON() ([]byte, error) { return text.AppendJSON(make([]byte, 0, 21), int64(id)) }

// UnmarshalJSON accepts a JSON string or a bare JSON number. null leaves id
// unchanged, as encoding/json does for other types.
func (id *ID) UnmarshalJSON(b []byte) error { return text.ParseJSON((*int64)(id), b) }

// Parse parses the decimal form of an ID.
func Parse(s string) (ID, error) {
	v, err := text.ParseString(s)
	return ID(v), err
}

// MustParse is like Parse but panics on error. It is meant for tests and
// examples with hard-coded IDs.
func MustParse(s string) ID {
	id, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return id
}
