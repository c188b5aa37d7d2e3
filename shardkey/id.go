package shardkey

import (
	"database/sql/driver"
	"math/bits"
	"strconv"

	"github.com/idkit/idkit/internal/intid"
	"github.com/idkit/idkit/snowflake"
)

// ID is a key issued by a Reversed or Sharded generator: a value from 1
// to 2^63-1. The zero ID means "no ID": no generator issues it, Parse
// rejects it, and it encodes as empty text, an empty JSON string and SQL
// NULL, which decode to it.
//
// Parse, UnmarshalText, UnmarshalJSON and Scan accept canonical decimal
// text (no sign, no leading zero); JSON also takes a bare number.
// Marshalling a negative value is an error.
type ID int64

// IsZero reports whether id is the zero (invalid) ID.
func (id ID) IsZero() bool { return id == 0 }

// Reverse returns the 63-bit reversal of v: bit i of v becomes bit 62-i,
// and bit 63 of the result is 0. Bit 63 of v is ignored, so for v from 0
// to 2^63-1 Reverse is its own inverse: Reverse(Reverse(v)) == v. It maps
// 1 to 2^62 and 3 to 0x6000000000000000, as Spanner's
// bit_reversed_positive sequences do.
func Reverse(v int64) int64 { return int64(bits.Reverse64(uint64(v)) >> 1) }

// Sequence returns the counter an ID of a Reversed generator was issued
// for: Reverse(id). For other IDs it means nothing.
func (id ID) Sequence() int64 { return Reverse(int64(id)) }

// Shard returns the top bits bits of id below bit 63: the shard of an ID
// of a Sharded generator whose Bits is bits. It is 0 for an id that is not
// positive and for bits outside 1 to MaxBits.
func (id ID) Shard(bits int) int64 {
	if id <= 0 || bits < 1 || bits > MaxBits {
		return 0
	}
	return int64(id) >> (63 - bits)
}

// Inner returns the Snowflake ID in the low 63-bits bits of id, for an ID
// of a Sharded generator whose Bits is bits. It is 0 for an id that is not
// positive and for bits outside 1 to MaxBits.
func (id ID) Inner(bits int) snowflake.ID {
	if id <= 0 || bits < 1 || bits > MaxBits {
		return 0
	}
	return snowflake.ID(int64(id) & (1<<(63-bits) - 1))
}

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

// Value implements driver.Valuer: an ID is stored as an int64, the zero ID
// as NULL. A negative value is an error.
func (id ID) Value() (driver.Value, error) { return text.SQLValue(int64(id)) }

// Scan implements sql.Scanner. It accepts an int64, or decimal text as
// string or []byte; NULL, 0 and empty text scan as the zero ID, so that a
// column may use 0 for "no ID" instead of NULL.
func (id *ID) Scan(src any) error { return text.SQLScan((*int64)(id), src) }

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
