// Package traceid generates TraceIds: positive 63-bit integers for keys of
// tracing and log entries, unique per node without coordination, about
// ordered by time, and cheap enough to mint millions a second.
//
// # Layout
//
// From the most significant bit down:
//
//	63 | 62 ........ 38 | 37 ........ 22 | 21 ................ 0
//	 0 | second (25)    | node (16)      | thread (T) | counter (22-T)
//
// The fields:
//
//   - second: Unix seconds modulo 2^25. It wraps every 2^25 s, about 388
//     days ([Period]), so IDs are periodically monotonic: they increase for
//     388 days, then start again from the bottom of the domain. Decoding
//     takes a reference time and returns the latest matching second not
//     after it ([ID.Time]).
//   - node: 0 to 65535, from deployment configuration. Two processes that run
//     at the same time must never share a node; a launch log refuses the
//     second one on a host (see One holder per node).
//   - thread and counter share 22 bits; [Options.ThreadBits] (T, 0 to 16)
//     says how many name the thread. A thread is a chunk of counters that a
//     [Shard] claims for one second; the counter runs from 1, so no ID is 0.
//
// A node issues at most 2^T * (2^(22-T) - 1) IDs a second: 4,194,303 with
// T = 0. Every ID lies in 1 to 2^63-1; the zero ID is invalid.
//
// # Generating
//
// A [Generator] is safe for concurrent use: [Generator.Next] costs one
// atomic add and is strictly increasing for each goroutine that calls it;
// [Generator.Fill] claims a whole batch with one atomic add. A [Shard]
// belongs to one goroutine and takes IDs from a claimed chunk without any
// synchronisation.
//
// Time is read from a coarse clock refreshed every millisecond, not once
// per ID. The generator's logical second never moves backwards: when the
// wall clock steps back, IDs continue under the last second until the clock
// catches up. When a second's IDs run out, Next waits for the next second,
// or returns [ErrExhausted] if [Options.NoWait] is set.
//
// # Restarts
//
// A new Generator never reuses an ID an earlier run of the same node issued.
// Without a store it issues nothing in the second it was created in, which
// is safe as long as the wall clock was not stepped back while no generator
// ran. With a store.HighWater (launchlog.Log) it leases seconds ahead in the
// store and, on start, waits until the wall clock has passed the stored
// mark, which holds even across a clock stepped back between runs. Either
// way the first IDs of a new generator may take up to a second (plus the
// lease) to arrive.
//
// # One holder per node
//
// A Generator whose store holds keys (a [store.Holder], as launchlog.Log
// is) holds its node in the store from New to Close, and [Reserve] holds
// it for the call: a second Generator or Reserve for the node, in any
// process of the host, fails at once with an error of kind
// [idkit.ErrHeld] that names the holder. The hold dies with its process,
// so a crashed holder frees the node at once. What is safe, then: one
// process per node per host through the launch log, or nodes claimed in
// etcd (store.NodeClaim) across hosts. Without a store nothing can tell two
// processes with the same node apart, and they issue the same IDs.
//
// # Text
//
// An ID prints as its decimal value. In JSON it is a string, since
// JavaScript numbers lose integers above 2^53; decoding accepts a string or
// a bare number. In SQL it is an int64.
//
// # Against the generator contract
//
// *Generator is an [idkit.Generator] of [ID]; the contract is written
// there, once. What is particular to traceid:
//
//   - A ctx bounds the wait for the next second and the lease's store
//     write.
//   - Stats counts Waits, ClockBackward, Exhausted, StoreWrites and
//     StoreErrors.
//   - Close ends the calls of its [PerCore] and [Shard] values too, and
//     releases the node's hold once the store write in flight has ended.
//   - The store, if any, is a store.HighWater or a store.NodeClaim.
//   - [ErrSyntax], [ErrRange] and [ErrInvalid] are of kind
//     idkit.ErrInvalid, [ErrExhausted] of idkit.ErrExhausted, [ErrStore]
//     of idkit.ErrUnavailable, [ErrNodeLost] of idkit.ErrNodeLost and
//     [ErrClosed] of idkit.ErrClosed.
package traceid
