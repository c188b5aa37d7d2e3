package snowflake

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// ID is a Snowflake ID: a positive 63-bit integer whose fields a Layout
// explains. The zero ID is invalid: no generator issues it, Parse rejects
// it, and it encodes as empty text, an empty JSON string and SQL NULL.
type ID int64

// IsZero reports whether id is the zero (invalid) ID.
func (id ID) IsZero() bool { return id == 0 }

// Time returns the start of the tick id was issued in, read with layout l.
// It is the zero time if id is not a valid ID for l.
func (id ID) Time(l Layout) time.Time {
	p, err := l.Decode(id)
	if err != nil {
		return time.Time{}
	}
	return p.Time
}

// String returns the decimal form of id.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// AppendText appends the text form of id to b: its decimal value, or
// nothing for the zero ID.
func (id ID) AppendText(b []byte) ([]byte, error) {
	if id == 0 {
		return b, nil
	}
	return strconv.AppendInt(b, int64(id), 10), nil
}

// MarshalText implements encoding.TextMarshaler.
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(nil) }

// UnmarshalText implements encoding.TextUnmarshaler. Empty text decodes to
// the zero ID.
func (id *ID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = 0
		return nil
	}
	v, err := parse(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// MarshalJSON encodes id as a JSON string, since JavaScript numbers lose
// integers above 2^53.
func (id ID) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 22), '"')
	b, _ = id.AppendText(b)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string or a bare JSON number. null leaves id
// unchanged, as encoding/json does for other types.
func (id *ID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
		return id.UnmarshalText(b[1 : len(b)-1])
	}
	v, err := parse(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// Parse parses the decimal form of an ID.
func Parse(s string) (ID, error) { return parse([]byte(s)) }

// MustParse is like Parse but panics on error. It is meant for tests and
// examples with hard-coded IDs.
func MustParse(s string) ID {
	id, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return id
}

func parse(b []byte) (ID, error) {
	negative := len(b) > 1 && b[0] == '-'
	digits := b
	if negative {
		digits = b[1:]
	}
	if len(digits) == 0 || bytes.ContainsFunc(digits, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, fmt.Errorf("snowflake: parse %q: %w", b, ErrSyntax)
	}
	v, err := strconv.ParseUint(string(digits), 10, 63)
	if err != nil || v == 0 || negative {
		return 0, fmt.Errorf("snowflake: parse %q: %w", b, ErrRange)
	}
	return ID(v), nil
}
