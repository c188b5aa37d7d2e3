// Package shardkey issues int64 keys for range-sharded stores (Spanner,
// CockroachDB, TiDB, Vitess range sharding), where a time-ordered or
// sequential key sends every insert to the last range. Each of its three
// forms spreads consecutive keys over the key space, and keeps the
// uniqueness and restart safety of the scheme underneath.
//
// # Bit-reversed sequence
//
// [Reversed] issues [Reverse](n) for the dense counter n of a
// segment.Allocator, as Spanner's bit_reversed_positive sequences do: bit
// i of n becomes bit 62-i, so that consecutive counters differ in their
// top bits.
//
//	counter  0 | 0 ................................ 0 | b2 b1 b0
//	ID       0 | b0 b1 b2 | 0 ................................ 0
//	        63 | 62 61 60 | 59 ............................... 0
//
// Counter 1 is 2^62, 2 is 2^61, 3 is 0x6000000000000000. Reverse is its
// own inverse, so [ID.Sequence] gives the counter back. Crashes leave gaps
// in the counter, never repeats: the blocks come from a segment.BlockStore
// (launchlog.Log, fleet.Log, segment/pgstore ...), durable before they are
// issued.
//
// # Shard bits
//
// [NewShardBits] puts S shard bits on top of a Snowflake ID, TiDB's
// AUTO_RANDOM layout (S is 5 by default, as AUTO_RANDOM(5)):
//
//	63 | 62 ...... 58 | 57 .............. 17 | 16 ...... 12 | 11 ...... 0
//	 0 | shard (5)    | milliseconds (41)    | worker (5)   | sequence (12)
//	   | tick's hash  | since 2010-11-04     |              |
//	   | + sequence   |                      |              |
//
// TiDB hashes the transaction's start time into the shard. Here the shard
// is the hash of the Snowflake ID's tick plus its sequence, modulo 2^S:
// the IDs of one tick take the shards in turn, starting where the tick's
// hash says, so that a tick's IDs spread however many it holds (a tick
// of 4,096 IDs on one shard would be a burst on one range), and the IDs
// in each shard increase with time.
//
// # Hash prefix
//
// [NewHashPrefixed] has the same layout, but its prefix is a hash of the
// whole Snowflake ID, as CockroachDB's hash-sharded indexes prefix a key
// with a hash of its columns. Each ID's bucket depends on the whole ID, so
// the IDs of one tick spread over the buckets too, and anyone who holds
// the Snowflake ID computes the key with [HashPrefix].
//
// Both hashes are FNV-1a 32-bit over the 8 big-endian bytes of the value
// (the tick, or the Snowflake ID), and the shard is taken modulo 2^S, the
// low S bits, as CockroachDB takes fnv32 modulo the bucket count.
// With S up to 8, FNV-1a's low S bits are a permutation of the value's
// low S bits while its other bits stay the same, so every aligned run of
// 2^S consecutive ticks (or IDs) covers every shard once. (With S = 5 the
// top 5 bits of the hash would put about 7 in 10 consecutive values into
// the shard of the one before.)
//
// The Snowflake ID sits unchanged in the low 63-S bits, so keys are
// unique as the Snowflake IDs are, and a restart is as safe as the
// snowflake.Generator's own Store or Claim makes it. [ID.Shard] and
// [ID.Inner] split a key; [Sharded.Decode] explains one.
//
// # Text
//
// IDs are positive int64 values from 1 to 2^63-1: text, JSON (as a
// string) and SQL forms follow the rules of idkit's other 63-bit schemes.
//
// # Against the generator contract
//
// *Reversed and *Sharded are [idkit.Generator]s of [ID]; the contract is
// written there, once. What is particular to shardkey:
//
//   - Each generator delegates to the generator underneath, a
//     segment.Allocator or a snowflake.Generator: its waits, its Stats and
//     its errors (segment's or snowflake's sentinels, of idkit's kinds; a
//     call after Close fails with segment.ErrClosed or
//     snowflake.ErrClosed, of kind idkit.ErrClosed).
//   - Next and Fill add one transform per ID to the generator underneath
//     and allocate nothing.
//   - [ErrSyntax], [ErrRange] and [ErrInvalid] are of kind
//     idkit.ErrInvalid.
package shardkey
