// Package flake128 generates 128-bit Flake IDs in the layout of Boundary's
// flake (github.com/boundary/flake, Erlang), and reads and writes its text
// forms.
//
// # Layout
//
// Sixteen bytes, most significant first:
//
//	byte 0 ............ 7 | 8 ........... 13 | 14 .. 15
//	milliseconds (64)     | worker (48)      | sequence (16)
//
// From the first byte:
//
//   - milliseconds: unsigned milliseconds since 1970-01-01 UTC, so IDs
//     sort by time to the millisecond and never run out in practice.
//   - worker: 48 bits that tell generators apart: a configured value, or
//     the MAC address of a network interface, as Boundary's flake takes it.
//   - sequence: 0 for the first ID of a millisecond, counting up for each
//     further ID of that millisecond.
//
// # Text and storage
//
// An ID prints as Boundary's base-62 text: the 128-bit number in the
// digits 0-9, A-Z, a-z, without leading zeros: 18 characters for IDs made
// from 1975-01-29 to 2284-10-19, which therefore sort as text like the
// bytes. [Parse]
// also reads the 32-digit lowercase hexadecimal form that [ID.Hex] writes
// (the bytes in order, as a UUID without dashes). In JSON an ID is its
// base-62 string. In SQL it is 16 raw bytes (BINARY(16), bytea), which
// sort like the IDs; Scan also reads either text form. The zero ID is
// invalid: it encodes as empty text, an empty JSON string and SQL NULL.
//
// # Generators
//
// A [Generator] is safe for concurrent use. Next claims the next
// (millisecond, sequence) pair with one atomic add; everything else (a new
// millisecond, a sequence run out, the store) takes a mutex. A generator's
// logical clock never moves backwards: if the wall clock steps back, IDs
// continue after the last one issued, and when the 65,536 sequence values
// of a millisecond run out, the next millisecond is taken, at most
// [Options.MaxLead] ahead of the latest clock reading; beyond that Next
// waits for the clock, at most [Options.MaxWait], then fails with
// [ErrClockBackwards]. Boundary's flake refuses IDs while its clock runs
// backwards; this package keeps issuing unique ones.
//
// # Restarts
//
// With [Options.Store] (launchlog.Log, fleet.Log), a generator leases
// milliseconds ahead in a high-water mark, as traceid and snowflake do,
// and a new generator for the same worker starts after the stored mark, so
// no run reuses a millisecond an earlier run may have issued IDs in, even
// if the clock was stepped back while the process was down. Without a
// store, a new generator starts MaxLead after the clock.
//
// # Caveats
//
//   - Flake IDs are predictable by design and show the worker (often a
//     MAC address) and the time they were made: never use them as secrets.
//     Package publicid turns 63-bit IDs into values that cannot be counted;
//     a 128-bit Flake is not one of them.
//   - Two generators with the same worker at the same time may issue the
//     same ID: workers must be distinct. A Generator whose store holds keys
//     (launchlog.Log) holds its worker from New to Close, so that a second
//     one on the host fails with an error of kind [idkit.ErrHeld] naming
//     the first; without a store nothing checks.
//
// # Against the generator contract
//
// *Generator is an [idkit.Generator] of [ID]; the contract is written
// there, once. What is particular to flake128:
//
//   - A ctx bounds the wait for the clock to catch up and the lease's
//     store write.
//   - Stats counts Waits, Rejected, StoreWrites and StoreErrors.
//   - The store, if any, is a store.HighWater; on a store.Holder (a
//     launch log) the generator holds its worker's key, and fails with
//     [ErrNodeLost] once another holder has taken it over.
//   - [ErrSyntax], [ErrRange] and [ErrInvalid] are of kind
//     idkit.ErrInvalid, [ErrStore] of idkit.ErrUnavailable, [ErrNodeLost]
//     of idkit.ErrNodeLost and [ErrClosed] of idkit.ErrClosed;
//     [ErrClockBackwards] is of no kind.
package flake128
