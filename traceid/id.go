package traceid

import (
	"strconv"
	"time"

	"github.com/idkit/idkit/internal/intid"
)

// ID is a TraceId. The zero ID means "no ID": no generator issues it, Parse
// rejects it, and it encodes as empty text, an empty JSON string and SQL
// NULL, which decode to it.
//
// An ID is a value from 1 to 2^63-1 whose low 22 bits (thread and counter)
// are not all zero: a counter of 0 is never issued, whatever the thread
// bits. Parse, UnmarshalText, UnmarshalJSON and Scan accept exactly these,
// as canonical decimal text (no sign, no leading zero); JSON also takes a
// bare number. Marshalling any other nonzero value is an error.
type ID int64

// Layout constants.
const (
	SecondBits    = 25 // width of the wrapping second
	NodeBits      = 16 // width of the node number
	LowBits       = 22 // width of thread and counter together
	MaxThreadBits = 16 // the most bits T the thread may take

	// Period is how long the second field takes to wrap.
	Period = (1 << SecondBits) * time.Second

	// MaxNode is the largest node number.
	MaxNode = 1<<NodeBits - 1

	secondShift = NodeBits + LowBits
	secondMask  = 1<<SecondBits - 1
	maxLow      = 1<<LowBits - 1
)

// IsZero reports whether id is the zero (invalid) ID.
func (id ID) IsZero() bool { return id == 0 }

// Second returns the wrapping second field: Unix seconds modulo 2^25.
func (id ID) Second() int { return int(id >> secondShift & secondMask) }

// Node returns the node field.
func (id ID) Node() int { return int(id >> LowBits & MaxNode) }

// Thread returns the thread field for T = threadBits thread bits, 0 to 16
// (the generator's Options.ThreadBits): the top T of the low 22 bits.
func (id ID) Thread(threadBits int) int {
	threadBits = min(max(threadBits, 0), MaxThreadBits)
	return int(id&maxLow) >> (LowBits - threadBits)
}

// Counter returns the counter field for T = threadBits thread bits, 0 to
// 16: the low 22-T bits.
func (id ID) Counter(threadBits int) int {
	threadBits = min(max(threadBits, 0), MaxThreadBits)
	return int(id) & (1<<(LowBits-threadBits) - 1)
}

// Time returns the latest whole second not after ref whose low 25 bits are
// id's second field, in UTC: the time id was issued if it was issued less
// than one Period before ref.
func (id ID) Time(ref time.Time) time.Time {
	r := ref.Unix()
	s := r&^secondMask | int64(id.Second())
	if s > r {
		s -= 1 << SecondBits
	}
	return time.Unix(s, 0).UTC()
}

// String returns the decimal form of id.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// IsValid reports whether id is an ID: positive, with thread and counter
// bits not all zero.
func (id ID) IsValid() bool { return id > 0 && id&maxLow != 0 }

// text is the text, JSON and SQL plumbing shared with the other int64
// schemes.
var text = intid.Scheme{ErrSyntax: ErrSyntax, ErrRange: ErrRange, Check: check}

func check(v int64) string {
	if !ID(v).IsValid() {
		return "want 1 to 9223372036854775807 with the low 22 bits (thread and counter) not all 0"
	}
	return ""
}

// AppendText appends the decimal form of id to b, or nothing for the zero
// ID. It fails for any other value that is not an ID.
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
