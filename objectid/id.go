package objectid

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/idkit/idkit/internal/intid"
)

// ID is a MongoDB ObjectID: 12 bytes, the same as the MongoDB Go driver's
// bson.ObjectID (convert with bson.ObjectID(id) and ID(oid)). The zero ID
// means "no ID": no generator issues it, Parse rejects it, and it encodes as
// empty text, an empty JSON string and SQL NULL, which decode to it.
//
// Parse, UnmarshalText, UnmarshalJSON and Scan accept every nonzero ID as 24
// hexadecimal digits. The canonical text is lowercase, which is what every
// method writes; uppercase digits are accepted too, because the MongoDB
// driver's ObjectIDFromHex accepts them and hex case carries no meaning.
// JSON also takes MongoDB Extended JSON, {"$oid": "..."}.
type ID [12]byte

// Sizes of the parts of an ID, in bytes.
const (
	TimeLen    = 4 // big-endian Unix seconds
	ProcessLen = 5 // random, once per process (per Generator)
	CounterLen = 3 // big-endian counter from a random start

	// MaxCounter is the largest counter; the counter wraps to 0 after it.
	MaxCounter = 1<<24 - 1
)

// Timestamp returns the second the ID was made in, in UTC, reading the 4
// time bytes as unsigned seconds since 1970 (so the range ends in 2106).
func (id ID) Timestamp() time.Time {
	return time.Unix(int64(binary.BigEndian.Uint32(id[:TimeLen])), 0).UTC()
}

// Process returns the 5 random bytes that tell processes apart.
func (id ID) Process() [ProcessLen]byte { return [ProcessLen]byte(id[TimeLen : TimeLen+ProcessLen]) }

// Counter returns the 3-byte counter, 0 to MaxCounter.
func (id ID) Counter() uint32 { return uint32(id[9])<<16 | uint32(id[10])<<8 | uint32(id[11]) }

// IsZero reports whether id is the zero (invalid) ID.
func (id ID) IsZero() bool { return id == ID{} }

// Compare returns -1, 0 or +1 as id sorts before, with or after other:
// byte order, which is time order to the second.
func (id ID) Compare(other ID) int { return bytes.Compare(id[:], other[:]) }

// Compose builds the ID with the given parts: t truncated to the second,
// which must lie in 1970..2106, and counter in 0 to MaxCounter. It is meant
// for tests and tools; only a Generator guarantees unique IDs.
func Compose(t time.Time, process [ProcessLen]byte, counter uint32) (ID, error) {
	sec := t.Unix()
	if sec < 0 || sec > 1<<32-1 {
		return ID{}, fmt.Errorf("%w: time %v, want 1970-01-01T00:00:00Z to 2106-02-07T06:28:15Z", ErrInvalid, t.UTC())
	}
	if counter > MaxCounter {
		return ID{}, fmt.Errorf("%w: counter %d, want 0 to %d", ErrInvalid, counter, MaxCounter)
	}
	return compose(uint32(sec), &process, counter), nil
}

func compose(sec uint32, process *[ProcessLen]byte, counter uint32) ID {
	var id ID
	binary.BigEndian.PutUint32(id[:TimeLen], sec)
	copy(id[TimeLen:], process[:])
	id[9], id[10], id[11] = byte(counter>>16), byte(counter>>8), byte(counter)
	return id
}

// FromBytes returns the ID whose 12 raw bytes are b, as BSON stores it.
func FromBytes(b []byte) (ID, error) {
	if len(b) != len(ID{}) {
		return ID{}, fmt.Errorf("%w: %d bytes, want 12", ErrInvalid, len(b))
	}
	return ID(b), nil
}

// String returns the 24 lowercase hexadecimal digits of id.
func (id ID) String() string {
	var b [24]byte
	hex.Encode(b[:], id[:])
	return string(b[:])
}

// AppendText appends the text form of id to b: its 24 lowercase
// hexadecimal digits, or nothing for the zero ID.
func (id ID) AppendText(b []byte) ([]byte, error) {
	if id.IsZero() {
		return b, nil
	}
	return hex.AppendEncode(b, id[:]), nil
}

// MarshalText implements encoding.TextMarshaler.
func (id ID) MarshalText() ([]byte, error) { return id.AppendText(make([]byte, 0, 24)) }

// UnmarshalText implements encoding.TextUnmarshaler. Empty text decodes to
// the zero ID.
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

// MarshalJSON encodes id as a JSON string of its hexadecimal digits.
func (id ID) MarshalJSON() ([]byte, error) {
	b := append(make([]byte, 0, 26), '"')
	b, _ = id.AppendText(b)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts a JSON string (unescaped as encoding/json does), or
// MongoDB Extended JSON {"$oid": "..."}. null leaves id unchanged, as
// encoding/json does for other types.
func (id *ID) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if text, ok, err := intid.JSONString(b, ErrSyntax); ok {
		if err != nil {
			return err
		}
		return id.UnmarshalText(text)
	}
	var ext struct {
		OID *string `json:"$oid"`
	}
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &ext) != nil || ext.OID == nil {
		return fmt.Errorf("%w: JSON %q, want a string or {\"$oid\": ...}", ErrSyntax, b)
	}
	v, err := Parse(*ext.OID)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

// Parse parses 24 hexadecimal digits, in either case. The all-zero text is
// the zero ObjectID (the driver's NilObjectID), which is not an ID.
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
	var id ID
	if len(s) != 2*len(id) {
		return ID{}, fmt.Errorf("%w: %q, want 24 hexadecimal digits", ErrSyntax, s)
	}
	for i := range id {
		hi, ok1 := fromHex(s[2*i])
		lo, ok2 := fromHex(s[2*i+1])
		if !ok1 || !ok2 {
			return ID{}, fmt.Errorf("%w: %q, want 24 hexadecimal digits", ErrSyntax, s)
		}
		id[i] = hi<<4 | lo
	}
	if id.IsZero() {
		return ID{}, fmt.Errorf("%w: %q is the zero ObjectID", ErrRange, s)
	}
	return id, nil
}

func fromHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
