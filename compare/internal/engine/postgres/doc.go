// Package postgres is compare's PostgreSQL engine: the loads into a
// schema of the run's own, their pages, WAL and key index; the reads
// back; the concurrent loads; the rights a run needs, checked before it
// creates anything; and a --like run's copies of the user's table. It
// imports package engine alone of compare.
package postgres
