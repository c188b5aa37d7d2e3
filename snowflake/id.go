package snowflake

import (
	"strconv"
	"time"

	"github.com/idkit/idkit/internal/intid"
)

// ID is a Snowflake ID: a positive 63-bit integer whose fields a Layout
// explains. The zero ID means "no ID": no generator issues it, Parse
// rejects it, and it encodes as empty text, an empty JSON string and SQL
// NULL, which decode to it.
//
// Parse, UnmarshalText, UnmarshalJSON and Scan accept every value from 1 to
// 2^63-1, as canonical decimal text (no sign, no leading zero); JSON also
// takes a bare number. Which of these a given layout decodes depends on the
// layout (its bits above the fields must be 0), so check with
// Layout.Decode where the layout is known. Marshalling a negative value is
// an error.
type ID int64

// IsZero reports whether id is the zero (invalid) ID.
func (id ID) IsZero() bool { return id == 0 }

// Time returns the start of the tick id was issued in, read with layout l
// (the zero Layout is Twitter's). It is the zero time if id is not an ID
// of l; Layout.Decode says why.
func (id ID) Time(l Layout) time.Time { return id.parts(l).Time }

// Tick returns id's tick, the number of l.Units since l.Epoch, or 0 if id
// is not an ID of l.
func (id ID) Tick(l Layout) int64 { return id.parts(l).Tick }

// Node returns id's node fields by name, read with l, or nil if id is not
// an ID of l.
func (id ID) Node(l Layout) map[string]int64 { return id.parts(l).Node }

// Sequence returns id's position within its tick, or 0 if id is not an ID
// of l.
func (id ID) Sequence(l Layout) int64 { return id.parts(l).Sequence }

func (id ID) parts(l Layout) Parts {
	p, err := l.Decode(id)
	if err != nil {
		return Parts{}
	}
	return p
}

// String returns the decimal form of id.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// text is the text, JSON and SQL plumbing shared with the other int64
// schemes.
var text = intid.Scheme{ErrSyntax: ErrSyntax, ErrRange: ErrRange, Check: intid.Positive}

// AppendText appends the decimal form of id to b, or nothing for the zero
// ID. It fails for a negative ID.
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
