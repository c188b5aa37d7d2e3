// Package decimalid generates DecimalIds: positive 63-bit integers that a
// person can read, because their fields sit in separate decimal places.
//
// # Layout
//
//	decimal_id = counter * 10^10 + generator * 10^5 + launch
//
//	ID 14150009200065          split form 1415-00092-00065
//	   ccccggggglllll
//	      │    │    └── launch (65)       0 to 99999       from the launch log; 0 only in tests
//	      │    └─────── generator (92)    0 to 99999       from a persistent, system-wide source
//	      └──────────── counter (1415)    1 to 922337202   in memory, per generator id
//
// The counter stops at 922,337,202 rather than 922,337,203 so that the
// generator field may use all five digits: the largest ID,
// 9,223,372,029,999,999,999 ([Max]), stays below 2^63-1. The counter starts
// at 1, so every ID is at least 10^10 ([Min]); the zero ID is invalid.
//
// # Generating
//
// A [Generator] serves one launch. When it starts, and again each time its
// counter passes 922,337,202, it takes a fresh generator id from a
// a store.Generators, which persists the increment before handing the id
// out (launchlog.Log does, with an fsync): a crash may lose IDs, never
// repeat them. A launch holds at most 100,000 generator ids of 922,337,202
// IDs each.
//
// [Generator.Next] costs one atomic add; [Generator.Fill] claims up to
// 65,536 IDs with one atomic add. A Generator is safe for concurrent use.
//
// # Caveats
//
// DecimalIds have sharded monotonicity: the IDs of one generator id
// increase, but a generator's IDs drop when it moves to a new generator id
// (the counter restarts at 1), and the IDs of generators running at the
// same time interleave. An index on them takes inserts at as many places
// as there are live generator ids.
//
// Launch 0 marks IDs made by tests: [New] refuses it unless
// [Options.TestLaunch] is set. IDs do not carry a time.
//
// # Text
//
// An ID prints as its decimal value ([ID.String]) or in the split form
// ([ID.SplitString]); [Parse] accepts both, and nothing else, so each ID
// has exactly one text of each form. In JSON it is a string of the decimal
// form, since JavaScript numbers lose integers above 2^53; decoding accepts
// a string in either form or a bare number. In SQL it is an int64.
//
// # Against the generator contract
//
// *Generator is an [idkit.Generator] of [ID]; the contract is written
// there, once. What is particular to decimalid:
//
//   - A ctx bounds the source call for a new generator id, or the wait for
//     another call's.
//   - Stats counts Exhausted, StoreWrites and StoreErrors.
//   - Close cancels the source call in flight.
//   - The source is a store.Generators.
//   - [ErrSyntax], [ErrRange] and [ErrInvalid] are of kind
//     idkit.ErrInvalid, [ErrSource] of idkit.ErrUnavailable and
//     [ErrClosed] of idkit.ErrClosed.
package decimalid
