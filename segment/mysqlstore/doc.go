// Package mysqlstore keeps segment blocks in MariaDB or MySQL as Flickr's
// ticket servers keep their sequences: a table with an AUTO_INCREMENT key
// and a unique stub, in which each reservation replaces the one row,
//
//	CREATE TABLE idkit_tickets_<hash of tag> (
//	    id   bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
//	    stub varchar(64) NOT NULL,     -- the tag
//	    UNIQUE KEY stub (stub)
//	) ENGINE=InnoDB COMMENT='idkit segment tickets: tag=orders unit=1000';
//	REPLACE INTO idkit_tickets_... (stub) VALUES ('orders');
//	SELECT LAST_INSERT_ID();  -- read from the OK packet, no round trip
//
// and ticket t stands for the block of Unit IDs (t-1)*Unit+1 through
// t*Unit. Each tag has a table of its own, as Flickr has one per sequence
// (Tickets32, Tickets64), so that a tag's tickets, and so its blocks,
// follow each other without gaps. The table's comment records the unit,
// and a store whose Options.Unit differs refuses the table: two units on
// one table would overlap.
//
// A store takes step/Unit tickets at once (at least one): the REPLACE
// takes the first, and a second statement under the same lock writes the
// last as the row's id, which moves AUTO_INCREMENT past the ones between.
// The block says what was reserved, so an allocator's step is the real
// one.
//
// Concurrent REPLACEs of one row can deadlock in InnoDB, and a statement
// rolled back still uses up its AUTO_INCREMENT value, which would leave a
// ticket, and a block, that nobody holds. So each REPLACE runs under
// GET_LOCK on the tag's table name (two more short round trips); the
// server releases the lock when the session ends, so a client that dies
// holding it blocks nobody.
//
// # Two servers
//
// Flickr runs two ticket servers, one with auto_increment_increment = 2
// and auto_increment_offset = 1 (odd tickets), one with offset 2 (even
// tickets), and sends each request to either, so that one of them may be
// down. [OpenPair] does that, on two servers or two schemas of one
// server: each connection sets the two variables for its session. A
// [Pair] hands out unique blocks, but not ascending ones: one server may
// be ahead of the other, so a block from the second may lie below one
// from the first. It is not a segment.BlockStore for that reason (an
// Allocator requires ascending blocks); use it where only uniqueness
// matters, as Flickr did. A side takes one ticket per block, since its
// tickets are not consecutive.
//
// A table records the increment and offset of the sessions that take its
// tickets, beside its tag and unit, and a store with other settings
// refuses it: a plain Store opened on one of a Pair's servers, or a Pair
// with its servers swapped, would take the other side's tickets and hand
// out its blocks again.
//
// # Durability
//
// Every statement is a transaction of its own, committed before
// ReserveBlock returns. InnoDB makes a commit durable only with
// innodb_flush_log_at_trx_commit = 1, so [New] refuses a server with
// another setting unless Options.AllowLazyFlush accepts that a crash of
// the server may hand out the last blocks again. The ticket row itself
// holds the last ticket, so a restart of the server resumes above it
// whatever the version's handling of AUTO_INCREMENT on restart.
package mysqlstore
