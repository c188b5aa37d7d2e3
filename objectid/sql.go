package objectid

import (
	"database/sql/driver"
	"fmt"
)

// Value implements driver.Valuer: an ID is stored as its 24 lowercase
// hexadecimal digits, the zero ID as NULL.
//
// database/sql has no type for 12 raw bytes that every driver maps the
// same way, while the hexadecimal text is what MongoDB's tools, logs and
// Extended JSON show, fits a CHAR(24) column in any database, and sorts in
// the same order as the bytes (and so by time), which a primary key needs.
// Scan also reads raw 12-byte values, for BINARY(12) columns.
func (id ID) Value() (driver.Value, error) {
	if id.IsZero() {
		return nil, nil
	}
	return id.String(), nil
}

// Scan implements sql.Scanner. It accepts 24 hexadecimal digits as string
// or []byte, or 12 raw bytes; NULL, empty text and 12 zero bytes scan as
// the zero ID.
func (id *ID) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*id = ID{}
		return nil
	case string:
		return id.UnmarshalText([]byte(v))
	case []byte:
		if len(v) == len(ID{}) {
			*id = ID(v)
			return nil
		}
		return id.UnmarshalText(v)
	default:
		return fmt.Errorf("%w: scan %T, want string or []byte", ErrSyntax, src)
	}
}
