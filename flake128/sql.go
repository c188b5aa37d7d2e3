package flake128

import (
	"database/sql/driver"
	"fmt"
)

// Value implements driver.Valuer: an ID is stored as its 16 raw bytes
// (BINARY(16), bytea), which sort like the IDs; the zero ID as NULL.
func (id ID) Value() (driver.Value, error) {
	if id.IsZero() {
		return nil, nil
	}
	return id[:], nil
}

// Scan implements sql.Scanner. It reads 16 raw bytes ([]byte), or either
// text form as string or []byte of another length. NULL, empty text, 16
// zero bytes and the number or text 0 (a column's "no ID") scan as the
// zero ID.
//
// A []byte of 16 is always taken as raw bytes: base-62 text is 16
// characters long only for IDs of January 1970.
func (id *ID) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*id = ID{}
		return nil
	case int64:
		if v == 0 {
			*id = ID{}
			return nil
		}
		return fmt.Errorf("%w: scan integer %d, want 16 bytes or text", ErrSyntax, v)
	case string:
		return id.scanText([]byte(v))
	case []byte:
		if len(v) == len(ID{}) {
			*id = ID(v)
			return nil
		}
		return id.scanText(v)
	default:
		return fmt.Errorf("%w: scan %T, want []byte or string", ErrSyntax, src)
	}
}

func (id *ID) scanText(b []byte) error {
	if string(b) == "0" {
		*id = ID{}
		return nil
	}
	return id.UnmarshalText(b)
}
