// Package snowflake generates Snowflake IDs in any of the classic layouts:
// positive 63-bit integers made of a timestamp, a node number and a
// per-tick sequence, unique per node without coordination and ordered by
// time.
//
// # Layouts
//
// A [Layout] names the widths, from the most significant bit down. The
// Twitter layout, the default:
//
//	63 | 62 ............ 22 | 21 ..... 17 | 16 ..... 12 | 11 ...... 0
//	 0 | milliseconds (41)  | datacenter  | worker (5)  | sequence (12)
//	   | since 2010-11-04   | (5)         |             |
//
// Sonyflake puts the node below the sequence ([Layout.NodeLow]):
//
//	63 | 62 ............ 24 | 23 ...... 16 | 15 ................ 0
//	 0 | 10 ms units (39)   | sequence (8) | machine (16)
//
// Presets: [Twitter], [Discord], [ShardingSphere], [CustomUUID],
// [Instagram], [Baidu], [Sonyflake], [Simpleflake] and [JSSafe], whose IDs
// never exceed 2^53-1 and so survive JavaScript numbers; [Preset] finds one
// by name. Each preset's comment cites where its widths and epoch come
// from. A layout's timestamp runs out at [Layout.Expires]: a generator
// refuses to start on an expired layout (Baidu's default ran out in
// November 2024) and stops with [ErrExpired] when it runs out, rather than
// wrap. [Layout.Decode] and [Layout.Compose] convert between an [ID] and
// its [Parts].
//
// # Basics
//
// A [Generator] issues IDs for one node; it is safe for concurrent use,
// and the IDs one goroutine gets from it strictly increase. [Generator.Next]
// costs one atomic add on a coarse clock reading: it never reads the
// precise clock for an ID unless a tick changes, a tick's sequence runs
// out, or the clock looks wrong. Every ID lies in 1 to 2^63-1; the zero ID
// is invalid.
//
// The generator's logical tick never moves backwards, so no policy can
// issue an ID twice. The policies are named options:
//
//   - [ClockPolicy], for a wall clock stepped back: [ClockHybrid] (the
//     default: wait below 5 ms, continue below 100 ms, fail beyond),
//     [ClockReject], [ClockWait] up to a tolerance, [ClockContinue] on the
//     last tick.
//   - [ExhaustPolicy], for a tick whose sequence ran out: [ExhaustWait] for
//     the next tick (the default), [ExhaustBorrow] the next tick up to a
//     bounded lead, [ExhaustError].
//   - [SequenceStart]: [StartZero], or [StartRandom] 0 to 9 per tick.
//
// [Generator.Stats] counts backward clock steps, waits, borrowed ticks,
// rejections and exhausted ticks; an optional [log/slog.Logger] gets one
// record per clock anomaly.
//
// # Restarts
//
// A new Generator never reuses an ID an earlier run of the same node
// issued. Without a store it issues nothing in the tick it was created in
// (nor, under ExhaustBorrow, in the lead an earlier run may have borrowed).
// With a store.HighWater (launchlog.Log) it leases ticks ahead in the
// store, renewing in the background before the lease runs out, and on start
// waits until the wall clock has passed the stored mark, which holds even
// across a clock stepped back while the process was down.
//
// # Text
//
// An ID prints as its decimal value. In JSON it is a string, since
// JavaScript numbers lose integers above 2^53; decoding accepts a string or
// a bare number. In SQL it is an int64 (BIGINT), the zero ID NULL.
//
// # Caveats
//
//   - Node values must be unique among the generators that run at the same
//     time. A Generator whose store holds keys (a store.Holder, as
//     launchlog.Log is) holds its node from New to Close, and [Reserve] for
//     the call, so that a second one on the host fails with an error of
//     kind [idkit.ErrHeld] naming the first; without a store nothing
//     checks, and across hosts nodes are claimed in etcd (store.NodeClaim).
//   - Time comes from a coarse clock refreshed every millisecond, so an ID's
//     timestamp may lag the wall clock by about that much, and a clock
//     stepped back by less than that may go unnoticed until the next tick
//     (IDs stay unique either way).
//   - Without a store, restarts are safe only if the clock was not stepped
//     back while no generator ran, and if an earlier run was not continuing
//     on a tick ahead of the clock when it stopped.
//   - Presets of systems that fill all 64 bits (Discord, CustomUUID,
//     Instagram, Simpleflake) keep the system's field positions and give the
//     timestamp one bit less, so their IDs match the system's until those
//     would leave the signed range.
//   - Simpleflake fills its low bits at random; a Generator fills them with
//     its sequence, which never collides.
//   - On the system clock a wait of 1.2 ms or less (such as a
//     millisecond layout's wait for the next tick at full rate) spins on the
//     precise clock instead of sleeping, since sleeps last at least about a
//     millisecond and sometimes two; a node at its cap keeps a processor
//     busy while it waits.
//   - Without a store, a generator under ExhaustBorrow starts MaxLead ahead
//     of the clock (an earlier run may have borrowed that far), so it can
//     borrow further only once the clock has caught up.
//
// # Against the generator contract
//
// *Generator is an [idkit.Generator] of [ID]; the contract is written
// there, once. What is particular to snowflake:
//
//   - A ctx bounds the waits for the next tick and for the clock to catch
//     up, and the lease's store write.
//   - Stats fills every count.
//   - The store, if any, is a store.HighWater or a store.NodeClaim.
//   - [ErrSyntax], [ErrRange] and [ErrInvalid] are of kind
//     idkit.ErrInvalid, [ErrExpired] and [ErrExhausted] of
//     idkit.ErrExhausted, [ErrStore] of idkit.ErrUnavailable, [ErrNodeLost]
//     of idkit.ErrNodeLost and [ErrClosed] of idkit.ErrClosed;
//     [ErrClockBackwards] is of no kind.
package snowflake
