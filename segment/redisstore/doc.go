// Package redisstore keeps segment blocks in Redis: one integer key per
// tag, advanced by INCRBY step, so that the reply v names the block
// v-step+1 through v. It also offers [Counter], the plain Redis scheme of
// one INCR per ID, which costs a round trip for every ID.
//
// # Durability
//
// Redis answers INCRBY from memory. Whether the new value survives a
// restart depends on the server's persistence:
//
//   - with appendonly yes and appendfsync always, Redis writes and fsyncs
//     the command to its append-only file before it replies, so a block
//     it returned is never handed out again;
//   - with appendfsync everysec the last second of commands may be lost,
//     and with RDB snapshots alone (or no persistence) everything since
//     the last snapshot: after a restart the counters are back where they
//     were, and the blocks issued since are issued again.
//
// So [New] reads CONFIG GET appendonly and appendfsync and refuses a
// server that is not on appendonly yes with appendfsync always, with an
// error wrapping [ErrNotDurable], unless Options.AllowVolatile says that
// the caller accepts repeated IDs after a restart of Redis (for tests, or
// IDs whose uniqueness a database constraint enforces anyway). A server
// that forbids CONFIG cannot be checked and is refused the same way. The
// check runs once: a later CONFIG SET on the server is not noticed.
//
// Replication does not help: a replica promoted after a failover may not
// have the last increments of its primary.
package redisstore
