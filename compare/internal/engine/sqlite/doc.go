// Package sqlite is compare's SQLite engine (modernc.org/sqlite, pure Go,
// in the process): the pages its write-ahead log takes per insert and the
// leaves of the key's B-tree. It imports package engine alone of compare.
package sqlite
