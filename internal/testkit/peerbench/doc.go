// Package peerbench holds benchmarks of the peer ID libraries, so that one
// `go test -bench` run measures idkit's generators and the peers side by
// side on the same machine. It has no code of its own; see BENCHMARKS.md.
package peerbench
