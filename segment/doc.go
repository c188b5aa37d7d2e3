// Package segment issues dense IDs, 1, 2, 3, ..., per tag (a business key
// such as "order"), from blocks reserved in a shared store, as Meituan's
// Leaf does in its segment mode. IDs of a tag are unique across every
// process and host that shares the store; each process's IDs strictly
// increase; IDs of different processes interleave by block.
//
//	store   tag "order": last ID reserved = 3000
//	           │ ReserveBlock("order", 1000) ⇒ [3001, 4000]
//	process A: current [2001, 3000] ──10% used──▶ next [3001, 4000] (in the background)
//	process B: current [1001, 2000]
//
// # Double buffer
//
// An [Allocator] holds two blocks: the current one, from which Next and
// Fill hand out IDs with one atomic add each and no allocation, and the
// next one, which it reserves in the background as soon as a tenth of the
// current block is issued. Callers wait for the store only when both
// blocks are used up, that is when a block lasts less than the store takes
// to answer; [Allocator.Stats] counts those waits.
//
// # Adaptive step
//
// The step (the size of a block) adapts to the load as Leaf's does: a
// reservation less than [GrowBelow] (15 minutes) after the one before
// doubles it, one more than [ShrinkAbove] (30 minutes) after it halves it,
// within Options.MinStep and Options.MaxStep. A busy tag thus reserves
// large blocks rarely, a quiet one small blocks, and a block lasts about
// 15 to 30 minutes whatever the load, within the bounds.
//
// Doubling alone makes a burst wait for one block per doubling: from 1,000
// to 128,000 is seven. So the step also grows at once to what the rate
// asks for: the rate the current block is used at, times the last
// reservation's latency, times [FetchesPerBlock] (10), so that a block
// lasts several reservations and the next one is ready before it is used
// up. A burst stops waiting after one or two blocks. Leaf's rule alone
// shrinks the step.
//
// # Crashes leave gaps, never repeats
//
// A block is durable in the store before any ID of it is handed out: the
// store's ReserveBlock returns only once the reservation is committed, and
// an ID is issued only from a block that ReserveBlock returned without
// error. A process that stops (a crash, a kill, Close, a restart) loses
// the rest of its two blocks: IDs are dense while a process runs, with
// gaps of up to two blocks per restart, and are never issued twice. So
// IDs fit keys and counters, not numbering that must have no holes
// (invoices).
//
// When the store fails (down, unreachable, locked, a timeout), the
// allocator keeps issuing from the blocks it holds; once both are used up,
// Next and Fill fail with an error wrapping [ErrUnavailable] and the
// store's own error, naming the tag and the store, and try the store
// again on the next call. A reservation that fails in the background is
// tried again in the background, after 100 ms and then backing off up to
// Options.Timeout, so that a store that fails for a moment costs callers
// nothing while the current block lasts.
//
// # Stores
//
// A [BlockStore] keeps the last ID reserved per tag and moves it up by one
// block in one atomic, durable write, so that blocks of a tag never
// overlap and each starts above every block before it, for any number of
// allocators in any number of processes. The stores are:
//
//   - launchlog.Log: a bbolt file shared by the processes of one host;
//   - fleet.Log: etcd, one guarded transaction per block;
//   - segment/pgstore: PostgreSQL, one UPDATE ... RETURNING per block;
//   - segment/mysqlstore: MariaDB and MySQL, as Flickr's ticket servers
//     (REPLACE INTO, LAST_INSERT_ID);
//   - segment/redisstore: Redis INCRBY, durable only with appendfsync
//     always, which it checks.
//
// Each imports its driver, so a program builds only the one it uses. A
// store of your own must keep the contract that BlockStore's doc states;
// internal/testkit/suites/storetest runs the same conformance suite against all of them.
//
// IDs are positive int64 values (see [ID]): text, JSON (as a string) and
// SQL forms follow the rules of idkit's other 63-bit schemes.
//
// # Against the generator contract
//
// *Allocator is an [idkit.Generator] of [ID]; the contract is written
// there, once. What is particular to segment:
//
//   - [New] takes a ctx as well as [Options], since it reserves the first
//     block before it returns; ctx bounds only that reservation.
//   - The ctx of a call bounds the wait for a block; the reservation itself
//     goes on for later calls.
//   - Stats counts Waits, StoreWrites and StoreErrors; [Allocator.State]
//     tells the steps and blocks, after Close too.
//   - Close cancels the reservation in flight and waits for it.
//   - The store is a [BlockStore].
//   - [ErrSyntax], [ErrRange] and [ErrInvalid] are of kind
//     idkit.ErrInvalid, [ErrUnavailable] of idkit.ErrUnavailable,
//     [ErrExhausted] of idkit.ErrExhausted and [ErrClosed] of
//     idkit.ErrClosed; [ErrBadBlock] is of no kind (a bad block reaches
//     callers wrapped in ErrUnavailable).
package segment
