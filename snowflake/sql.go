package snowflake

import (
	"database/sql/driver"
	"fmt"
)

// Value implements driver.Valuer: an ID is stored as an int64 (BIGINT),
// the zero ID as NULL.
func (id ID) Value() (driver.Value, error) {
	if id == 0 {
		return nil, nil
	}
	return int64(id), nil
}

// Scan implements sql.Scanner. It accepts an int64, or decimal text as
// string or []byte; NULL, 0 and empty text scan as the zero ID, so that a
// column may use 0 for "no ID" instead of NULL.
func (id *ID) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*id = 0
	case int64:
		if v < 0 {
			return fmt.Errorf("snowflake: scan %d: %w", v, ErrRange)
		}
		*id = ID(v)
	case string:
		return id.scanText([]byte(v))
	case []byte:
		return id.scanText(v)
	default:
		return fmt.Errorf("snowflake: scan %T: want int64, string or []byte: %w", src, ErrSyntax)
	}
	return nil
}

func (id *ID) scanText(b []byte) error {
	if string(b) == "0" {
		*id = 0
		return nil
	}
	return id.UnmarshalText(b)
}
