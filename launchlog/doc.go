// Package launchlog keeps the persistent counters that idkit's generators
// rest on, in one bbolt file shared by the processes of a host:
//
//	bucket      key                   value                                      bucket sequence
//	launches    launch id (4 B, BE)   {"id","started_at","ticket","by","note"}   last launch id
//	generators  launch id (4 B, BE)   next generator id (4 B, BE) | CRC-32C      XOR of the CRCs
//	highwater   key (string)          Unix nanoseconds (8 B, BE) | CRC-32C       XOR of the CRCs
//	blocks      tag (string)          last ID reserved (8 B, BE) | CRC-32C       XOR of the CRCs
//
// It offers five things:
//
//   - Launches: [Log.Begin] records a launch and hands out the next launch
//     id, 1..=99999; [Log.Current], [Log.Get] and [Log.List] read them.
//   - Generator ids: [Log.NextGenerator] hands out 0..=99999 per launch,
//     to decimalid generators.
//   - High-water marks: [Log.HighWater] and [Log.AdvanceHighWater] keep a
//     time per key that only moves forward, for time-based generators such
//     as traceid's. A mark makes one node's runs safe one after another.
//   - Holds: [Log.Hold] lets one live process of the host at a time hold a
//     key, such as a node's mark, so that two runs of one node cannot
//     overlap. Generators on the log hold their node while they run, and
//     Reserve calls for the call; a second holder fails at once with a
//     [HeldError] that names the first (pid, command, since when). On
//     Linux a hold locks a byte of the log file itself, which every name,
//     link and mount of the file reaches; the kernel releases it when the
//     holding process ends, however it ends, so a crashed holder frees
//     its node at once, and no file that could be removed holds it.
//     Each hold also takes the next fencing token of its key in the log,
//     and its writes check it, so that a holder that got past the lock
//     stops with [ErrNodeLost] at the marks it wrote itself. A hold is
//     lost at once, for good, when its file is removed or replaced under
//     it: it looks at the log's path before its generator enters each new
//     unit of time (store.Revocable), and every 100 ms. Holds reach the
//     processes of one host; across hosts, claim nodes in etcd (package
//     fleet), whose claims fence the marks.
//   - A home: the log knows the file it lives in (its file system and
//     inode, in the log, and a stamp on the file outside its contents),
//     and refuses every write with a [DisplacedError] through another
//     file (a copy, a backup restored as a new file, another disk) or
//     through contents older than the file (a backup written back in
//     place), until [Log.Adopt] records what a person says happened. A
//     process that writes to a log registers the file it writes through
//     at the log's path, until it ends: a new log made where the one it
//     uses was removed or replaced is refused while it lives.
//   - Blocks of IDs: [Log.ReserveBlock] reserves the next block of a tag
//     for a segment.Allocator, which issues dense IDs from it.
//
// *Log satisfies store.Generators, store.Holder (and so store.HighWater)
// and segment.BlockStore; its holds are store.Revocable.
//
// # Basics
//
// A [Log] is a handle on a path, not an open file. Every method opens the
// file, takes its lock (exclusive to write, shared to read, waiting at most
// Options.Timeout), runs exactly one transaction and closes the file, so
// that any number of processes on a host can share it. A method that
// changes the file commits with fsync before it returns: a value handed
// out survives a crash, and a crash before the commit hands out nothing, so
// no value is ever handed out twice. The first write of a process also
// fsyncs the file's directory, so that a power cut cannot take away the
// file's name (and every value in it). Reading a file that does not exist
// yet sees an empty log and does not create it.
//
// Errors are wrapped sentinels: [ErrLocked] (with bbolt's ErrTimeout) when
// the lock is not free in time, [ErrOpen] (with the os error) for a missing
// directory or an unwritable path, [ErrWrite] (with the os error) when
// the disk fails a write or an fsync (ENOSPC, EIO), [ErrCorrupt] for a
// file that is not a sound launch log, [ErrLaunchesExhausted],
// [ErrGeneratorsExhausted], [ErrNoLaunch], [ErrInvalid], [ErrDisplaced]
// (a [DisplacedError]) for a file that is not the log's home, and for
// holds [ErrHeld] (a [HeldError]) and [ErrNetworkFS].
//
// # Damage
//
// bbolt trusts its file: on a damaged page it may panic, fault, loop, or
// commit garbage. So before each transaction the log reads and checks the
// structure bbolt is about to use, page by page (meta page, every page
// reachable from it, the freelist; package internal/boltcheck, held to
// bbolt's own Tx.Check by a fuzz test), in memory bounded by the pages
// read, and refuses with ErrCorrupt a file whose data below its high
// water mark exceeds 1 GiB (boltcheck.MaxSize); and inside the transaction it checks
// its own records: the CRC of every generator counter, mark and block, the
// digest of each bucket (a lost record changes it), that no launch lies
// beyond the last launch id, and that the file holds no unknown bucket. A
// damaged file gives ErrCorrupt instead of a value that was handed out
// before. Should bbolt panic or fault all the same, the method recovers
// and returns ErrCorrupt.
//
// # Caveats
//
// Each operation costs an open, a read of the pages in use and, for
// writes, an fsync: a fraction of a millisecond to milliseconds. The log is meant
// for rare events: a launch, a generator's start, a lease renewal.
//
// Lock waits poll (every few milliseconds on Unix, where the log locks the
// file itself before bbolt does; every 50 ms elsewhere), so waiters are not
// served in order; Options.Timeout bounds each wait. Operations of one
// process on one path take turns in the process first.
//
// After a recovered panic the memory map of the damaged file may stay in
// the process. File locks do not reach across machines on network file
// systems: Hold refuses a log on one (NFS, SMB, Ceph, sshfs and other
// network FUSE file systems, by the type Linux gives; elsewhere the type
// is not checked) with ErrNetworkFS, and fleets larger than one host need
// another backend behind the same interfaces.
//
// A log belongs to one host: two hosts that each hold a clone of one disk
// (the same file system id and inode) cannot tell their logs apart, nor
// can a backup written back in place with its extended attributes, or
// onto a file system that keeps none; docs/reliability.md lists what the
// home cannot know. Restoring a log from a backup: stop every process
// that uses it, put the file back, and adopt it with the last values the
// data holds (Log.Adopt, the command "idkit launch adopt --restored")
// before anything uses it again.
//
// Outside Linux, a hold is an flock of a file in the directory named by
// the log's path and HoldersSuffix: it reaches only the processes that
// name the log by one path, and removing the directory under a live
// holder lets a second one in, whose fencing token then stops the first
// at its next write. Copies of a log are not found there.
package launchlog
