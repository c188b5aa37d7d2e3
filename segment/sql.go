package segment

import "database/sql/driver"

// Value implements driver.Valuer: an ID is stored as an int64, the zero ID
// as NULL. A negative value is an error.
func (id ID) Value() (driver.Value, error) { return text.SQLValue(int64(id)) }

// Scan implements sql.Scanner. It accepts an int64, or decimal text as
// string or []byte; NULL, 0 and empty text scan as the zero ID, so that a
// column may use 0 for "no ID" instead of NULL.
func (id *ID) Scan(src any) error { return text.SQLScan((*int64)(id), src) }
