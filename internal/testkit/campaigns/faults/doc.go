// Package faults holds idkit's fault campaigns, as tests: generators
// killed with SIGKILL and restarted on a clock stepped back, a concurrency
// soak checked for duplicates with bounded memory. It has no code of its
// own; docs/reliability.md lists the campaigns, how to run them and their
// results.
package faults
