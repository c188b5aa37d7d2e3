package decimalid

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ID is a DecimalId: counter*10^10 + generator*10^5 + launch. The zero ID
// is invalid: no generator issues it, Parse rejects it, and it encodes as
// empty text, an empty JSON string and SQL NULL.
type ID int64

// Field ranges and the ID domain.
const (
	MaxCounter   = 922_337_202 // the largest counter; the smallest is 1
	MaxGenerator = 99_999      // the largest generator id; the smallest is 0
	MaxLaunch    = 99_999      // the largest launch id; the smallest is 1, or 0 in tests

	// Min is the smallest ID: counter 1, generator 0, launch 0.
	Min ID = counterUnit
	// Max is the largest ID: counter 922337202, generator and launch 99999.
	Max ID = MaxCounter*counterUnit + MaxGenerator*generatorUnit + MaxLaunch

	counterUnit   = 10_000_000_000
	generatorUnit = 100_000
)

// Compose returns the ID of counter (1..=922337202), generator (0..=99999)
// and launch (0..=99999; 0 is the test launch).
func Compose(counter, generator, launch int) (ID, error) {
	if err := checkField("counter", counter, 1, MaxCounter); err != nil {
		return 0, err
	}
	if err := checkField("generator", generator, 0, MaxGenerator); err != nil {
		return 0, err
	}
	if err := checkField("launch", launch, 0, MaxLaunch); err != nil {
		return 0, err
	}
	return compose(uint64(counter), uint64(generator), uint64(launch)), nil
}

func compose(counter, generator, launch uint64) ID {
	return ID(counter*counterUnit + generator*generatorUnit + launch)
}

func checkField(name string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%w: %s = %d, want %d..=%d", ErrInvalid, name, v, lo, hi)
	}
	return nil
}

// Counter returns the counter field: the digits above the lowest ten.
func (id ID) Counter() int { return int(id / counterUnit) }

// Generator returns the generator id field: digits 6 to 10 from the right.
func (id ID) Generator() int { return int(id / generatorUnit % 100_000) }

// Launch returns the launch id field: the lowest five digits.
func (id ID) Launch() int { return int(id % 100_000) }

// IsZero reports whether id is the zero (invalid) ID.
func (id ID) IsZero() bool { return id == 0 }

// IsValid reports whether id lies in the domain Min..=Max, that is,
// whether its counter is 1..=922337202.
func (id ID) IsValid() bool { return id >= Min && id <= Max }

// String returns the decimal form of id, such as 14150009200065.
func (id ID) String() string { return strconv.FormatInt(int64(id), 10) }

// SplitString returns the split form of id, counter-ggggg-lllll, such as
// 1415-00092-00065, in which a person reads the three fields. An invalid ID
// prints as its decimal value.
func (id ID) SplitString() string {
	if !id.IsValid() {
		return id.String()
	}
	return string(id.appendSplit(make([]byte, 0, 21)))
}

// AppendSplitText appends the split form of id to b, or nothing for the
// zero ID, and fails for another invalid ID.
func (id ID) AppendSplitText(b []byte) ([]byte, error) {
	if err := id.check(); err != nil || id == 0 {
		return b, err
	}
	return id.appendSplit(b), nil
}

func (id ID) appendSplit(b []byte) []byte {
	b = strconv.AppendInt(b, int64(id.Counter()), 10)
	b = append(b, '-')
	b = appendFive(b, id.Generator())
	b = append(b, '-')
	return appendFive(b, id.Launch())
}

// appendFive appends v, 0..=99999, as exactly five digits.
func appendFive(b []byte, v int) []byte {
	return append(b, byte('0'+v/10000), byte('0'+v/1000%10), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

// check reports an ID that is neither zero nor valid.
func (id ID) check() error {
	if id != 0 && !id.IsValid() {
		return fmt.Errorf("decimalid: ID %d: %w", int64(id), ErrRange)
	}
	return nil
}

// AppendText appends the decimal form of id to b, or nothing for the zero
// ID. It fails for an ID outside the domain.
func (id ID) AppendText(b []byte) ([]byte, error) {
	if err := id.check(); err != nil || id == 0 {
		return b, err
	}
	return strconv.AppendInt(b, int64(id), 10), nil
}

// MarshalText implements encoding.TextMarshaler with the decimal form.
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(nil) }

// UnmarshalText implements encoding.TextUnmarshaler. It accepts both forms;
// empty text decodes to the zero ID.
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

// MarshalJSON encodes id as a JSON string of its decimal form, since
// JavaScript numbers lose integers above 2^53.
func (id ID) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 21), '"')
	b, err := id.AppendText(b)
	if err != nil {
		return nil, err
	}
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string in either form, or a bare JSON
// number. null leaves id unchanged, as encoding/json does for other types.
func (id *ID) UnmarshalJSON(b []byte) error {
	switch {
	case string(b) == "null":
		return nil
	case len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"':
		s := b[1 : len(b)-1]
		if bytes.IndexByte(s, '\\') >= 0 {
			var u string
			if err := json.Unmarshal(b, &u); err != nil {
				return fmt.Errorf("decimalid: parse JSON %s: %w", string(b), ErrSyntax)
			}
			s = []byte(u)
		}
		return id.UnmarshalText(s)
	}
	if bytes.IndexByte(b, '-') >= 0 {
		return fmt.Errorf("decimalid: parse %q: %w", string(b), ErrSyntax) // the split form is not a JSON number
	}
	v, err := parse(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// Parse parses an ID in either text form: decimal (14150009200065) or
// split (1415-00092-00065). It rejects signs, spaces, leading zeros of the
// decimal form and of the counter, and split fields of other widths, so
// that each ID has exactly one text of each form.
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
	if i := bytes.IndexByte(b, '-'); i >= 0 {
		return parseSplit(b, i)
	}
	v, ok := digits(b, 19)
	if !ok {
		return 0, fmt.Errorf("decimalid: parse %q: %w", string(b), ErrSyntax)
	}
	if v < uint64(Min) || v > uint64(Max) {
		return 0, fmt.Errorf("decimalid: parse %q: %w", string(b), ErrRange)
	}
	return ID(v), nil
}

// parseSplit parses counter-ggggg-lllll; b[i] is the first '-'.
func parseSplit(b []byte, i int) (ID, error) {
	rest := b[i+1:]
	if len(rest) != 11 || rest[5] != '-' {
		return 0, fmt.Errorf("decimalid: parse %q: %w", string(b), ErrSyntax)
	}
	c, okC := digits(b[:i], 9)
	g, okG := fixed5(rest[:5])
	l, okL := fixed5(rest[6:])
	if !okC || !okG || !okL {
		return 0, fmt.Errorf("decimalid: parse %q: %w", string(b), ErrSyntax)
	}
	if c < 1 || c > MaxCounter {
		return 0, fmt.Errorf("decimalid: parse %q: counter %d, want 1..=%d: %w", string(b), c, MaxCounter, ErrRange)
	}
	return compose(c, g, l), nil
}

// digits parses 1 to max decimal digits without a leading zero.
func digits(b []byte, max int) (uint64, bool) {
	if len(b) == 0 || len(b) > max || b[0] == '0' && len(b) > 1 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// fixed5 parses exactly five decimal digits.
func fixed5(b []byte) (uint64, bool) {
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}
