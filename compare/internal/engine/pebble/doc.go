// Package pebble is compare's LSM engine in the process, Pebble with its
// defaults: the bytes each row is written as it moves down the levels, the
// blocks a lookup reads, and the bytes an expiry of the oldest rows
// writes. It imports package engine alone of compare.
package pebble
