// Package pgstore keeps segment blocks in PostgreSQL, as Meituan's Leaf
// keeps them in its leaf_alloc table: one row per tag, advanced by one
// UPDATE ... RETURNING per block.
//
//	CREATE TABLE idkit_segment (
//	    biz_tag     text PRIMARY KEY,
//	    max_id      bigint NOT NULL,   -- the last ID of the last block
//	    step        bigint NOT NULL,   -- the size of the last block
//	    update_time timestamptz NOT NULL
//	);
//	UPDATE idkit_segment SET max_id = max_id + $2, step = $2, update_time = now()
//	 WHERE biz_tag = $1 RETURNING max_id;
//
// The block is max_id-step+1 through max_id. A tag's first block inserts
// its row (max_id 0) and runs the UPDATE again. Every UPDATE is a
// transaction of its own that has committed when ReserveBlock returns, so
// a crash of the client or the server loses at most the unused rest of a
// block; the row lock orders processes and hosts that share the table.
//
// Package instagram has the other way PostgreSQL hands out IDs without
// a separate service: Instagram's next_id() function.
//
// # Caveats
//
//   - Durability is PostgreSQL's: with synchronous_commit off a committed
//     block can be lost in a server crash and handed out again, so [New]
//     refuses a session where it is off, and [Open] turns it on. With fsync
//     off on the server nothing is durable; no client can detect that.
//   - A block never exceeds 2^63-1: past it ReserveBlock returns
//     [ErrExhausted].
package pgstore
