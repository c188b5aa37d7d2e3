package flake128

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"time"

	"github.com/idkit/idkit/internal/intid"
)

// ID is a 128-bit Flake: big-endian milliseconds, worker and sequence. The
// zero ID means "no ID": no generator issues it, Parse rejects it, and it
// encodes as empty text, an empty JSON string and SQL NULL, which decode
// to it.
type ID [16]byte

// Sizes of the parts of an ID.
const (
	TimeLen     = 8 // bytes of big-endian Unix milliseconds
	WorkerLen   = 6 // bytes of worker
	SequenceLen = 2 // bytes of sequence

	// MaxWorker is the largest worker, 2^48-1.
	MaxWorker = 1<<48 - 1
	// MaxSequence is the largest sequence, 2^16-1: a worker issues at most
	// 65,536 IDs a millisecond.
	MaxSequence = 1<<16 - 1
)

// Milliseconds returns the ID's time as unsigned milliseconds since 1970.
func (id ID) Milliseconds() uint64 { return binary.BigEndian.Uint64(id[:TimeLen]) }

// Time returns the millisecond the ID was made in, in UTC.
func (id ID) Time() time.Time { return msTime(id.Milliseconds()) }

func msTime(ms uint64) time.Time {
	return time.Unix(int64(ms/1000), int64(ms%1000)*int64(time.Millisecond)).UTC()
}

// Worker returns the 48-bit worker.
func (id ID) Worker() uint64 { return binary.BigEndian.Uint64(id[8:]) >> 16 }

// Sequence returns the sequence number within the millisecond.
func (id ID) Sequence() uint16 { return binary.BigEndian.Uint16(id[14:]) }

// IsZero reports whether id is the zero (invalid) ID.
func (id ID) IsZero() bool { return id == ID{} }

// Compare returns -1, 0 or +1 as id sorts before, with or after other:
// byte order, which is time order to the millisecond.
func (id ID) Compare(other ID) int { return bytes.Compare(id[:], other[:]) }

// Parts are the fields of an ID.
type Parts struct {
	Milliseconds uint64    // since 1970-01-01 UTC
	Time         time.Time // Milliseconds as a time, UTC
	Worker       uint64
	Sequence     uint16
}

// Decode returns the parts of id. The zero ID is not an ID: ErrRange.
func Decode(id ID) (Parts, error) {
	if id.IsZero() {
		return Parts{}, fmt.Errorf("%w: the zero ID", ErrRange)
	}
	return Parts{Milliseconds: id.Milliseconds(), Time: id.Time(), Worker: id.Worker(), Sequence: id.Sequence()}, nil
}

// Compose returns the ID with the given parts: ms milliseconds since 1970,
// worker 0 to MaxWorker. It is meant for tests and tools (and, with worker
// 0 and sequence 0, for the lowest ID of a millisecond, to query a range
// by time); only a Generator guarantees unique IDs.
func Compose(ms, worker uint64, sequence uint16) (ID, error) {
	if worker > MaxWorker {
		return ID{}, fmt.Errorf("%w: worker %d, want 0 to %d", ErrInvalid, worker, uint64(MaxWorker))
	}
	id := compose(ms, worker<<16|uint64(sequence))
	if id.IsZero() {
		return ID{}, fmt.Errorf("%w: every part is 0, the zero ID", ErrInvalid)
	}
	return id, nil
}

func compose(ms, low uint64) ID {
	var id ID
	binary.BigEndian.PutUint64(id[:8], ms)
	binary.BigEndian.PutUint64(id[8:], low)
	return id
}

// FromBytes returns the ID whose 16 raw bytes are b.
func FromBytes(b []byte) (ID, error) {
	if len(b) != len(ID{}) {
		return ID{}, fmt.Errorf("%w: %d bytes, want 16", ErrInvalid, len(b))
	}
	return ID(b), nil
}

const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// maxLen62 is the length of 2^128-1 in base 62.
const maxLen62 = 22

// pow62x10 is 62^10, the largest power of 62 below 2^64.
const pow62x10 = 839299365868340224

// String returns the base-62 text of id ("0" for the zero ID).
func (id ID) String() string {
	if id.IsZero() {
		return "0"
	}
	b, _ := id.AppendText(make([]byte, 0, maxLen62))
	return string(b)
}

// Hex returns the 32 lowercase hexadecimal digits of id's bytes.
func (id ID) Hex() string {
	var b [32]byte
	hex.Encode(b[:], id[:])
	return string(b[:])
}

// AppendText appends the base-62 text of id to b, or nothing for the zero
// ID.
func (id ID) AppendText(b []byte) ([]byte, error) {
	if id.IsZero() {
		return b, nil
	}
	hi, lo := binary.BigEndian.Uint64(id[:8]), binary.BigEndian.Uint64(id[8:])
	var buf [maxLen62]byte
	i := len(buf)
	// Split off ten digits at a time with one 128-by-64-bit division (62^10
	// fits 64 bits), then write each chunk with divisions by the constant
	// 62, which compile to multiplications.
	for hi != 0 || lo >= pow62x10 {
		var r uint64
		hi, r = bits.Div64(0, hi, pow62x10)
		lo, r = bits.Div64(r, lo, pow62x10)
		for range 10 {
			i--
			buf[i] = digits[r%62]
			r /= 62
		}
	}
	for {
		i--
		buf[i] = digits[lo%62]
		lo /= 62
		if lo == 0 {
			break
		}
	}
	return append(b, buf[i:]...), nil
}

// MarshalText implements encoding.TextMarshaler: the base-62 text.
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(make([]byte, 0, maxLen62)) }

// UnmarshalText implements encoding.TextUnmarshaler. It accepts what Parse
// accepts; empty text decodes to the zero ID.
func (id *ID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = ID{}
		return nil
	}
	v, err := parse(b)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// MarshalJSON encodes id as a JSON string of its base-62 text.
func (id ID) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, maxLen62+2), '"')
	b, _ = id.AppendText(b)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string holding either text form, as
// encoding/json unescapes it. null leaves id unchanged, as encoding/json
// does for other types.
func (id *ID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	text, ok, err := intid.JSONString(b, ErrSyntax)
	if !ok {
		return fmt.Errorf("%w: JSON %q, want a string", ErrSyntax, b)
	}
	if err != nil {
		return err
	}
	return id.UnmarshalText(text)
}

// Parse parses an ID from Boundary's base-62 text (digits 0-9, A-Z, a-z,
// no leading zeros, at most 2^128-1) or from 32 lowercase hexadecimal
// digits. Zero in either form is not an ID.
func Parse(s string) (ID, error) { return parse(s) }

// MustParse is like Parse but panics on error. It is meant for tests and
// examples with hard-coded IDs.
func MustParse(s string) ID {
	id, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return id
}

func parse[T string | []byte](s T) (ID, error) {
	if len(s) == 32 {
		return parseHex(s)
	}
	if len(s) == 0 || len(s) > maxLen62 || (s[0] == '0' && len(s) > 1) {
		return ID{}, syntaxError(s)
	}
	var hi, lo uint64
	for i := range len(s) {
		d, ok := digit62(s[i])
		if !ok {
			return ID{}, syntaxError(s)
		}
		// (hi, lo) = (hi, lo)*62 + d, failing past 128 bits.
		over, h := bits.Mul64(hi, 62)
		c, l := bits.Mul64(lo, 62)
		h, carry := bits.Add64(h, c, 0)
		l, c2 := bits.Add64(l, uint64(d), 0)
		h, carry2 := bits.Add64(h, 0, c2)
		if over != 0 || carry != 0 || carry2 != 0 {
			return ID{}, fmt.Errorf("%w: %q is above 2^128-1", ErrRange, s)
		}
		hi, lo = h, l
	}
	if hi == 0 && lo == 0 {
		return ID{}, fmt.Errorf("%w: %q is the zero ID", ErrRange, s)
	}
	var id ID
	binary.BigEndian.PutUint64(id[:8], hi)
	binary.BigEndian.PutUint64(id[8:], lo)
	return id, nil
}

func syntaxError[T string | []byte](s T) error {
	return fmt.Errorf("%w: %q, want base-62 text (0-9, A-Z, a-z, no leading zeros, at most %d characters) or 32 lowercase hexadecimal digits",
		ErrSyntax, s, maxLen62)
}

func parseHex[T string | []byte](s T) (ID, error) {
	var id ID
	for i := range id {
		hi, ok1 := fromHex(s[2*i])
		lo, ok2 := fromHex(s[2*i+1])
		if !ok1 || !ok2 {
			return ID{}, syntaxError(s)
		}
		id[i] = hi<<4 | lo
	}
	if id.IsZero() {
		return ID{}, fmt.Errorf("%w: %q is the zero ID", ErrRange, s)
	}
	return id, nil
}

func fromHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func digit62(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'Z':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'z':
		return c - 'a' + 36, true
	}
	return 0, false
}
