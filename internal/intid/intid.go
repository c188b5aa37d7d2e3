// Package intid is the text, JSON and SQL plumbing that the int64 ID
// schemes (traceid, snowflake, decimalid) share, so that their edges follow
// one rule:
//
//   - Parse, UnmarshalText, UnmarshalJSON and Scan accept exactly the IDs
//     that decode, in canonical text only: decimal digits without sign,
//     spaces or leading zeros (decimalid also takes its split form, which is
//     canonical too).
//   - JSON carries an ID as a string; decoding also takes a bare number
//     (JavaScript-safe producers) and unescapes the string as encoding/json
//     does.
//   - The zero ID is "no ID": it encodes as empty text, an empty JSON string
//     and SQL NULL, and those decode to it; JSON null leaves the value
//     unchanged, as encoding/json does for other types. SQL also reads the
//     integer 0 and the text "0" as the zero ID, so that a column may use 0
//     for "no ID".
//   - Marshalling a value that is neither zero nor an ID is an error.
//
// A scheme describes itself in a Scheme: its sentinel errors and what makes
// a value an ID.
package intid

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strconv"
)

// Scheme is what the plumbing needs to know of one scheme.
type Scheme struct {
	// ErrSyntax and ErrRange are the scheme's sentinels: text that is not
	// an ID's canonical form, and a number that is not an ID.
	ErrSyntax, ErrRange error
	// Check returns "" if v is an ID, else what an ID would be, such as
	// "want 1 to 9223372036854775807".
	Check func(v int64) string
	// ParseOther, if set, parses text that is not canonical decimal, such
	// as decimalid's split form, and says what is wrong with the rest.
	ParseOther func(s string) (int64, error)
}

// AppendText appends the canonical text of v, or nothing for zero.
func (s *Scheme) AppendText(b []byte, v int64) ([]byte, error) {
	if v == 0 {
		return b, nil
	}
	if err := s.check(v); err != nil {
		return b, err
	}
	return strconv.AppendInt(b, v, 10), nil
}

// AppendJSON appends v as a JSON string.
func (s *Scheme) AppendJSON(b []byte, v int64) ([]byte, error) {
	b = append(b, '"')
	b, err := s.AppendText(b, v)
	if err != nil {
		return nil, err
	}
	return append(b, '"'), nil
}

// ParseString is Parse for a string, without copying it.
func (s *Scheme) ParseString(str string) (int64, error) { return parse(s, str) }

// Parse parses canonical text; empty text is an error.
func (s *Scheme) Parse(b []byte) (int64, error) { return parse(s, b) }

func parse[T string | []byte](s *Scheme, b T) (int64, error) {
	v, kind := decimal(b)
	switch {
	case kind == canonical:
		if want := s.Check(v); want != "" {
			return 0, fmt.Errorf("%w: %q, %s", s.ErrRange, b, want)
		}
		return v, nil
	case s.ParseOther != nil && kind == notCanonical:
		return s.ParseOther(string(b))
	case kind == outOfRange:
		return 0, fmt.Errorf("%w: %q, %s", s.ErrRange, b, s.Check(0)) // 0 is never an ID: Check says what is
	}
	return 0, s.syntax(string(b))
}

// ParseText parses canonical text, or empty text as zero.
func (s *Scheme) ParseText(dst *int64, b []byte) error {
	if len(b) == 0 {
		*dst = 0
		return nil
	}
	v, err := s.Parse(b)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// JSONString returns the text of JSON string b, unescaped as encoding/json
// does, and true; or false if b is not a string. A string with a bad escape
// is an error wrapping errSyntax.
func JSONString(b []byte, errSyntax error) (text []byte, ok bool, err error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return nil, false, nil
	}
	text = b[1 : len(b)-1]
	if bytes.IndexByte(text, '\\') >= 0 {
		var u string
		if err := json.Unmarshal(b, &u); err != nil {
			return nil, true, fmt.Errorf("%w: JSON %s is not a valid string", errSyntax, b)
		}
		text = []byte(u)
	}
	return text, true, nil
}

// ParseJSON decodes a JSON string (unescaped) or a bare number; null
// leaves dst unchanged.
func (s *Scheme) ParseJSON(dst *int64, b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if text, ok, err := JSONString(b, s.ErrSyntax); ok {
		if err != nil {
			return err
		}
		return s.ParseText(dst, text)
	}
	if len(b) == 0 || b[0] != '-' && (b[0] < '0' || b[0] > '9') {
		return fmt.Errorf("%w: JSON %q, want a string or a number", s.ErrSyntax, b)
	}
	if bytes.ContainsFunc(b[1:], func(r rune) bool { return r < '0' || r > '9' }) {
		return s.syntax(string(b)) // the split form and fractions are not JSON integers
	}
	v, err := s.Parse(b)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// SQLValue returns v for database/sql: an int64, or NULL for zero.
func (s *Scheme) SQLValue(v int64) (driver.Value, error) {
	if v == 0 {
		return nil, nil
	}
	if err := s.check(v); err != nil {
		return nil, err
	}
	return v, nil
}

// SQLScan reads an int64 or canonical text (string or []byte); NULL, 0, "0"
// and empty text are zero.
func (s *Scheme) SQLScan(dst *int64, src any) error {
	var b []byte
	switch v := src.(type) {
	case nil:
		*dst = 0
		return nil
	case int64:
		if v != 0 {
			if err := s.check(v); err != nil {
				return err
			}
		}
		*dst = v
		return nil
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("%w: scan %T, want int64, string or []byte", s.ErrSyntax, src)
	}
	if string(b) == "0" {
		*dst = 0
		return nil
	}
	return s.ParseText(dst, b)
}

// check returns an error wrapping ErrRange if v is not an ID.
func (s *Scheme) check(v int64) error {
	if want := s.Check(v); want != "" {
		return fmt.Errorf("%w: %d, %s", s.ErrRange, v, want)
	}
	return nil
}

func (s *Scheme) syntax(b string) error {
	return fmt.Errorf("%w: %q, want decimal digits without sign or leading zero", s.ErrSyntax, b)
}

// decimal reads canonical decimal text: digits without a leading zero. A
// number that is not a positive int64 ("0", "-5", more than 2^63-1) is
// outOfRange; anything else that is not canonical is notCanonical.
func decimal[T string | []byte](b T) (int64, textKind) {
	digits, negative := b, len(b) > 1 && b[0] == '-'
	if negative {
		digits = b[1:]
	}
	if len(digits) == 0 || digits[0] == '0' && len(digits) > 1 {
		return 0, notCanonical
	}
	var v uint64
	overflow := false
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, notCanonical
		}
		if v > (1<<63-1)/10 {
			overflow = true
		}
		v = v*10 + uint64(c-'0')
	}
	if overflow || v > 1<<63-1 || v == 0 || negative {
		return 0, outOfRange
	}
	return int64(v), canonical
}

type textKind int

const (
	canonical textKind = iota
	notCanonical
	outOfRange
)

// Positive is the Check of a scheme whose every positive int64 is an ID.
func Positive(v int64) string {
	if v <= 0 {
		return "want 1 to 9223372036854775807"
	}
	return ""
}
