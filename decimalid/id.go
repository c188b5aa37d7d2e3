package decimalid

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/idkit/idkit/internal/intid"
)

// ID is a DecimalId: counter*10^10 + generator*10^5 + launch. The zero ID
// means "no ID": no generator issues it, Parse rejects it, and it encodes as
// empty text, an empty JSON string and SQL NULL, which decode to it.
//
// Parse, UnmarshalText, UnmarshalJSON and Scan accept exactly the IDs from
// Min to Max (counter 1 to 922337202), in either canonical text form:
// decimal without sign or leading zero, or the split form with five-digit
// generator and launch fields. JSON also takes a bare number. Marshalling
// any other nonzero value is an error.
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

// Compose returns the ID of counter (1 to 922337202), generator (0 to 99999)
// and launch (0 to 99999; 0 is the test launch).
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
		return fmt.Errorf("%w: %s = %d, want %d to %d", ErrInvalid, name, v, lo, hi)
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

// IsValid reports whether id lies in the domain Min to Max, that is,
// whether its counter is 1 to 922337202.
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

// appendFive appends v, 0 to 99999, as exactly five digits.
func appendFive(b []byte, v int) []byte {
	return append(b, byte('0'+v/10000), byte('0'+v/1000%10), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

// check reports an ID that is neither zero nor valid.
func (id ID) check() error {
	if want := check(int64(id)); id != 0 && want != "" {
		return fmt.Errorf("%w: %d, %s", ErrRange, int64(id), want)
	}
	return nil
}

// text is the text, JSON and SQL plumbing shared with the other int64
// schemes; decimalid adds the split form.
var text = intid.Scheme{ErrSyntax: ErrSyntax, ErrRange: ErrRange, Check: check, ParseOther: parseSplit}

func check(v int64) string {
	if !ID(v).IsValid() {
		return "want 10000000000 to 9223372029999999999 (counter 1 to 922337202)"
	}
	return ""
}

// AppendText appends the decimal form of id to b, or nothing for the zero
// ID. It fails for an ID outside the domain.
func (id ID) AppendText(b []byte) ([]byte, error) { return text.AppendText(b, int64(id)) }

// MarshalText implements encoding.TextMarshaler with the decimal form.
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(nil) }

// UnmarshalText implements encoding.TextUnmarshaler. It accepts both forms;
// empty text decodes to the zero ID.
func (id *ID) UnmarshalText(b []byte) error { return text.ParseText((*int64)(id), b) }

// MarshalJSON encodes id as a JSON string of its decimal form, since
// JavaScript numbers lose integers above 2^53.
func (id ID) MarshalJSON() ([]byte, error) { return text.AppendJSON(make([]byte, 0, 21), int64(id)) }

// UnmarshalJSON accepts a JSON string in either form, or a bare JSON
// number. null leaves id unchanged, as encoding/json does for other types.
func (id *ID) UnmarshalJSON(b []byte) error { return text.ParseJSON((*int64)(id), b) }

// Parse parses an ID in either text form: decimal (14150009200065) or
// split (1415-00092-00065). It rejects signs, spaces, leading zeros of the
// decimal form and of the counter, and split fields of other widths, so
// that each ID has exactly one text of each form.
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

// parseSplit parses the split form counter-ggggg-lllll.
func parseSplit(b string) (int64, error) {
	c, g, l, ok := splitFields(b)
	if !ok {
		return 0, fmt.Errorf("%w: %q, want decimal digits without leading zero, or counter-ggggg-lllll", ErrSyntax, b)
	}
	if c < 1 || c > MaxCounter {
		return 0, fmt.Errorf("%w: %q: counter %d, want 1 to %d", ErrRange, b, c, MaxCounter)
	}
	return int64(compose(c, g, l)), nil
}

// splitFields reads the three fields of the split form.
func splitFields(b string) (c, g, l uint64, ok bool) {
	i := strings.IndexByte(b, '-')
	if i < 0 || len(b)-i-1 != 11 || b[i+6] != '-' {
		return 0, 0, 0, false
	}
	c, okC := digits(b[:i], 9)
	g, okG := fixed5(b[i+1 : i+6])
	l, okL := fixed5(b[i+7:])
	return c, g, l, okC && okG && okL
}

// digits parses 1 to max decimal digits without a leading zero.
func digits(b string, max int) (uint64, bool) {
	if len(b) == 0 || len(b) > max || b[0] == '0' && len(b) > 1 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// fixed5 parses exactly five decimal digits.
func fixed5(b string) (uint64, bool) {
	var v uint64
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}
