// Package contract holds the rules that every ID scheme's edges follow,
// as one table run against each scheme:
//
//   - Parse, UnmarshalText, UnmarshalJSON and Scan accept exactly the same
//     texts: the canonical texts of IDs that decode;
//   - everything else fails with the scheme's ErrSyntax (not canonical) or
//     ErrRange (not an ID), and the message names the package once and
//     quotes the input;
//   - the zero value is "no ID": empty text, an empty JSON string, SQL NULL,
//     and back; SQL also reads 0 and "0" as it, the one non-canonical form
//     any edge takes (besides ObjectID's uppercase hex, which the MongoDB
//     driver accepts too);
//   - marshalling a value that is not an ID fails.
package contract_test

import (
	"database/sql"
	"database/sql/driver"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/shardkey"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// id is what the table needs of an ID type.
type id interface {
	encoding.TextMarshaler
	json.Marshaler
	driver.Valuer
}

// scheme describes one scheme to the table.
type scheme struct {
	name                string
	errSyntax, errRange error
	parse               func(string) (id, error)
	newZero             func() ptr // a pointer to a new zero value
	decodes             func(id) error
	valid               []string // canonical texts of IDs
	invalid             []id     // values that are not IDs, nonzero
	rejects             []string // texts no method may accept, beyond the common ones
}

// ptr is what the table needs of a pointer to an ID.
type ptr interface {
	encoding.TextUnmarshaler
	json.Unmarshaler
	sql.Scanner
	value() id
}

type traceidPtr struct{ *traceid.ID }
type snowflakePtr struct{ *snowflake.ID }
type decimalidPtr struct{ *decimalid.ID }
type objectidPtr struct{ *objectid.ID }
type flake128Ptr struct{ *flake128.ID }
type segmentPtr struct{ *segment.ID }
type shardkeyPtr struct{ *shardkey.ID }

func (p traceidPtr) value() id   { return *p.ID }
func (p snowflakePtr) value() id { return *p.ID }
func (p decimalidPtr) value() id { return *p.ID }
func (p objectidPtr) value() id  { return *p.ID }
func (p flake128Ptr) value() id  { return *p.ID }
func (p segmentPtr) value() id   { return *p.ID }
func (p shardkeyPtr) value() id  { return *p.ID }

// rejectedByAll is text that no int64 scheme takes: signs, spaces, leading
// zeros, other number syntaxes, other digits, out of range.
var rejectedByAll = []string{
	"0", "00", "007", "+1", "-1", " 1", "1 ", "1\n", "1_000", "1e3", "0x1F", "1.0", "１",
	"9223372036854775808", "18446744073709551616", "-9223372036854775808",
}

var schemes = []scheme{
	{
		name: "traceid", errSyntax: traceid.ErrSyntax, errRange: traceid.ErrRange,
		parse:   func(s string) (id, error) { return traceid.Parse(s) },
		newZero: func() ptr { return traceidPtr{new(traceid.ID)} },
		decodes: func(v id) error { _, err := traceid.Decode(v.(traceid.ID), 0); return err },
		valid:   []string{"1", "4649612572545253377", "9223372036854775807", "4194305"},
		invalid: []id{traceid.ID(-1), traceid.ID(4194304), traceid.ID(-9223372036854775808)},
		rejects: append([]string{"4194304", "8388608"}, rejectedByAll...),
	},
	{
		name: "snowflake", errSyntax: snowflake.ErrSyntax, errRange: snowflake.ErrRange,
		parse:   func(s string) (id, error) { return snowflake.Parse(s) },
		newZero: func() ptr { return snowflakePtr{new(snowflake.ID)} },
		// A Snowflake decodes under the layout that issued it; every
		// positive value is an ID of the layout with all 63 bits in use.
		decodes: func(v id) error {
			l := snowflake.Layout{Name: "full", Epoch: snowflake.Twitter().Epoch, Unit: 1e6, TimeBits: 51, SequenceBits: 12}
			_, err := l.Decode(v.(snowflake.ID))
			return err
		},
		valid:   []string{"1", "1541815603606036480", "9223372036854775807"},
		invalid: []id{snowflake.ID(-1)},
		rejects: rejectedByAll,
	},
	{
		name: "decimalid", errSyntax: decimalid.ErrSyntax, errRange: decimalid.ErrRange,
		parse:   func(s string) (id, error) { return decimalid.Parse(s) },
		newZero: func() ptr { return decimalidPtr{new(decimalid.ID)} },
		decodes: func(v id) error {
			d := v.(decimalid.ID)
			_, err := decimalid.Compose(d.Counter(), d.Generator(), d.Launch())
			return err
		},
		valid:   []string{"10000000000", "14150009200065", "1415-00092-00065", "9223372029999999999", "922337202-99999-99999"},
		invalid: []id{decimalid.ID(5), decimalid.ID(-14150009200065), decimalid.ID(9223372036854775807)},
		rejects: append([]string{"9999999999", "0-00092-00065", "01415-00092-00065", "1415-92-65", "9223372036854775807"}, rejectedByAll...),
	},
	{
		name: "segment", errSyntax: segment.ErrSyntax, errRange: segment.ErrRange,
		parse:   func(s string) (id, error) { return segment.Parse(s) },
		newZero: func() ptr { return segmentPtr{new(segment.ID)} },
		// A segment ID is a number in its tag's sequence, nothing more.
		decodes: func(v id) error {
			if !v.(segment.ID).IsValid() {
				return fmt.Errorf("segment ID %d is not positive", v)
			}
			return nil
		},
		valid:   []string{"1", "1001", "9223372036854775807"},
		invalid: []id{segment.ID(-1), segment.ID(-9223372036854775808)},
		rejects: rejectedByAll,
	},
	{
		name: "shardkey", errSyntax: shardkey.ErrSyntax, errRange: shardkey.ErrRange,
		parse:   func(s string) (id, error) { return shardkey.Parse(s) },
		newZero: func() ptr { return shardkeyPtr{new(shardkey.ID)} },
		// Every positive value is a key: Reverse(n) of counter n, and a
		// shard over a Snowflake ID for each number of shard bits.
		decodes: func(v id) error {
			k := v.(shardkey.ID)
			if k <= 0 || shardkey.Reverse(k.Sequence()) != int64(k) {
				return fmt.Errorf("shardkey ID %d is no reversed counter", k)
			}
			for bits := 1; bits <= shardkey.MaxBits; bits++ {
				if k.Shard(bits)<<(63-bits)|int64(k.Inner(bits)) != int64(k) {
					return fmt.Errorf("shardkey ID %d does not split into %d shard bits and a Snowflake ID", k, bits)
				}
			}
			return nil
		},
		valid:   []string{"1", "4611686018427387904", "6917529027641081856", "9223372036854775807"},
		invalid: []id{shardkey.ID(-1), shardkey.ID(-9223372036854775808)},
		rejects: rejectedByAll,
	},
	{
		name: "objectid", errSyntax: objectid.ErrSyntax, errRange: objectid.ErrRange,
		parse:   func(s string) (id, error) { return objectid.Parse(s) },
		newZero: func() ptr { return objectidPtr{new(objectid.ID)} },
		decodes: func(v id) error {
			o := v.(objectid.ID)
			_, err := objectid.Compose(o.Timestamp(), o.Process(), o.Counter())
			return err
		},
		valid: []string{"507f1f77bcf86cd799439011", "000000000000000000000001", "ffffffffffffffffffffffff"},
		rejects: []string{"000000000000000000000000", "507f1f77bcf86cd79943901", "507f1f77bcf86cd7994390111",
			" 07f1f77bcf86cd799439011", "0x7f1f77bcf86cd799439011", "507f1f77-bcf86cd7994390", "1"},
	},
	{
		// Boundary's base-62 text (an ID of its README) and the 32-digit hex.
		name: "flake128", errSyntax: flake128.ErrSyntax, errRange: flake128.ErrRange,
		parse:   func(s string) (id, error) { return flake128.Parse(s) },
		newZero: func() ptr { return flake128Ptr{new(flake128.ID)} },
		decodes: func(v id) error { _, err := flake128.Decode(v.(flake128.ID)); return err },
		valid:   []string{"8HFaR8qWtRlGDHnO57", "00000134d4235a10109add5e0e8f0005", "1", "7n42DGM5Tflk9n8mt7Fhc7", "ffffffffffffffffffffffffffffffff"},
		rejects: []string{"0", "00", "01", "7n42DGM5Tflk9n8mt7Fhc8", "00000000000000000000000000000000", "00000134D4235A10109ADD5E0E8F0005",
			"00000134-d423-5a10-109a-dd5e0e8f0005", " 1", "1 ", "+1", "-1", "1.0", "0x1F", "１", "8HFaR8qWtRlGDHnO5_"},
	},
}

func TestZeroIsNoID(t *testing.T) {
	for _, s := range schemes {
		t.Run(s.name, func(t *testing.T) {
			zero := s.newZero().value()
			text, err := zero.MarshalText()
			require.NoError(t, err)
			assert.Empty(t, text, "the zero value's text is empty")
			j, err := zero.MarshalJSON()
			require.NoError(t, err)
			assert.Equal(t, `""`, string(j), "the zero value's JSON is an empty string")
			v, err := zero.Value()
			require.NoError(t, err)
			assert.Nil(t, v, "the zero value is SQL NULL")

			valid := s.valid[0]
			for name, decode := range map[string]func(p ptr) error{
				"empty text":        func(p ptr) error { return p.UnmarshalText(nil) },
				"empty JSON string": func(p ptr) error { return p.UnmarshalJSON([]byte(`""`)) },
				"NULL":              func(p ptr) error { return p.Scan(nil) },
			} {
				p := s.newZero()
				require.NoError(t, p.UnmarshalText([]byte(valid)))
				require.NoError(t, decode(p), name)
				assert.Equal(t, zero, p.value(), "%s decodes to the zero value", name)
			}
			if s.name != "objectid" {
				// The one non-canonical form: SQL columns that use 0 for "no
				// ID" scan as the zero value, as integer or text.
				for _, src := range []any{int64(0), "0", []byte("0")} {
					p := s.newZero()
					require.NoError(t, p.UnmarshalText([]byte(valid)))
					require.NoError(t, p.Scan(src), "Scan(%#v)", src)
					assert.Equal(t, zero, p.value(), "Scan(%#v) is the zero value", src)
				}
			}
			p := s.newZero()
			require.NoError(t, p.UnmarshalText([]byte(valid)))
			want := p.value()
			require.NoError(t, p.UnmarshalJSON([]byte("null")))
			assert.Equal(t, want, p.value(), "JSON null leaves the value unchanged")
		})
	}
}

func TestCanonicalTextsDecode(t *testing.T) {
	for _, s := range schemes {
		t.Run(s.name, func(t *testing.T) {
			for _, text := range s.valid {
				v, err := s.parse(text)
				require.NoError(t, err, text)
				require.NoError(t, s.decodes(v), "%s parses, so it decodes", text)
				for method, decode := range decoders(text) {
					p := s.newZero()
					require.NoError(t, decode(p), "%s(%q)", method, text)
					assert.Equal(t, v, p.value(), "%s(%q)", method, text)
				}
				out, err := v.MarshalText()
				require.NoError(t, err)
				back, err := s.parse(string(out))
				require.NoError(t, err)
				assert.Equal(t, v, back, "the text written parses to the same ID")
			}
		})
	}
}

func TestEveryEdgeRejectsAlike(t *testing.T) {
	for _, s := range schemes {
		t.Run(s.name, func(t *testing.T) {
			for _, text := range s.rejects {
				_, err := s.parse(text)
				require.Error(t, err, "Parse(%q)", text)
				assert.True(t, errors.Is(err, s.errSyntax) || errors.Is(err, s.errRange), "Parse(%q): %v wraps ErrSyntax or ErrRange", text, err)
				assert.Equal(t, 1, strings.Count(err.Error(), s.name+":"), "one package prefix: %v", err)
				assert.Contains(t, err.Error(), fmt.Sprintf("%q", text), "the error quotes the input")
				for method, decode := range decoders(text) {
					if method == "Scan" && text == "0" {
						continue // SQL's "0" is the zero value: see TestZeroIsNoID
					}
					assert.Error(t, decode(s.newZero()), "%s(%q) accepts what Parse rejects", method, text)
				}
			}
		})
	}
}

func TestMarshalRejectsNonIDs(t *testing.T) {
	for _, s := range schemes {
		t.Run(s.name, func(t *testing.T) {
			for _, v := range s.invalid {
				_, err := v.MarshalText()
				assert.ErrorIs(t, err, s.errRange, "MarshalText of %v", v)
				_, err = json.Marshal(v)
				assert.ErrorIs(t, err, s.errRange, "MarshalJSON of %v", v)
				_, err = v.Value()
				assert.ErrorIs(t, err, s.errRange, "Value of %v", v)
			}
		})
	}
}

// decoders are the ways text reaches an ID besides Parse: as text, as a
// JSON string (plain and with every character escaped) and from SQL.
func decoders(text string) map[string]func(p ptr) error {
	var escaped strings.Builder
	for _, r := range text {
		fmt.Fprintf(&escaped, `\u%04x`, r)
	}
	return map[string]func(p ptr) error{
		"UnmarshalText":         func(p ptr) error { return p.UnmarshalText([]byte(text)) },
		"UnmarshalJSON":         func(p ptr) error { return p.UnmarshalJSON([]byte(strconv.Quote(text))) },
		"UnmarshalJSON escaped": func(p ptr) error { return p.UnmarshalJSON([]byte(`"` + escaped.String() + `"`)) },
		"Scan":                  func(p ptr) error { return p.Scan(text) },
	}
}
