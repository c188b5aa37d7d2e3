// Package compare measures ID schemes side by side, in one run, on the
// machine it runs on: idkit's own schemes, the real peer libraries pulled as
// Go modules, and a plain sequential counter as the ideal. It is the
// library behind "idkit compare", and a team may call it from its own
// programs or CI: [RunContext] returns the [Report] the command prints,
// and [Report.Decide] its verdict.
//
// # Basics
//
// A [Scheme] is one registry entry: its name, a constructor that returns a
// [Generator] for each of K writers (distinct nodes or generators, as K app
// instances sharing one table), the length of its binary key (big-endian
// for integer IDs, so that byte order is numeric order; the library's own
// binary form for the others), and a [Design] computed from its layout
// constants. [Run] puts the selected schemes through the same pipeline and
// returns a [Report], which writes itself as text tables, JSON, or a
// self-contained HTML page with charts:
//
//	Scheme ──New(1)──► Generator ──► speed: ns/ID, 1 goroutine and GOMAXPROCS, allocs/ID
//	   │
//	   ├──New(1)──► N keys ───────────┬─► order: appends, inversions; size: bytes/key, packed
//	   └──New(K)──► N keys, round ────┘      │  the same keys, in generation order, into
//	               robin over K writers      ├─► bbolt, fill 0.5 and 0.9: pages written, splits, leaf fill
//	                                         ├─► SQLite: WAL frames, pages, leaf density
//	                                         ├─► Pebble (an LSM tree): write amplification, bytes moved
//	                                         │   unwritten, space; reads: blocks and bloom filter hits
//	                                         │   per lookup; expiry of the oldest tenth of the rows
//	                                         ├─► PostgreSQL: pages dirtied, WAL and full-page images,
//	                                         │   index and heap size, leaf density and fragmentation;
//	                                         │   reads: pages per lookup, newest 1% by range scan and its leaves
//	                                         └─► InnoDB: pages written, redo, page splits,
//	                                             clustered index size, leaf pages and density;
//	                                             reads: pages per lookup, newest 1% by range scan
//
// bbolt, SQLite (modernc.org/sqlite, pure Go) and Pebble (CockroachDB's
// LSM tree, pure Go) are embedded and run unless switched off;
// PostgreSQL (pgx) and MariaDB/MySQL (go-sql-driver/mysql) run when
// [Options.PostgresDSN] or [Options.MySQLDSN] names a server, where the run
// creates a schema or database of its own and drops it at the end. Each
// database stores the key in the column a user would choose (bigint, uuid,
// BINARY(n), INTEGER PRIMARY KEY, a BLOB key WITHOUT ROWID) with a payload.
//
// Every figure of a Report is either measured in that run or computed from
// the scheme's layout (Design, DesignText), and the report says which.
// [Report.Columns] describes every figure once; the text tables, the HTML
// tables and the JSON all take their columns from it. [Report.Decide]
// turns the figures into a [Verdict]: the schemes that meet a [Need],
// ranked, and one line for each that does not.
//
// # Shards
//
// With [Options.Spider] (or Engine "spider") the run starts a MariaDB
// Spider cluster of its own on the machine, a front and Options.Shards
// InnoDB backends on Unix sockets under the run's directory, loads every
// key set into a Spider table partitioned by range of the key and into one
// partitioned by its hash, and adds a verdict per topology
// ([Report.Topologies]): a key that grows with time puts every insert on
// the last range, which one server's verdict cannot show. It adds the
// schemes made for such stores (package shardkey). Every run, with Spider
// or not, models its keys in a store that splits its ranges by size (the
// report's RANGES section, [WriterRun.Ranges]).
//
// # Locality
//
// The headline figure is pages written per 1,000 inserts: a key that lands
// on a random leaf dirties a page per insert, while a key appended at the
// right edge shares its page with the keys before it. Split counts alone
// mislead: at bbolt's default fill (0.5) an append-only load splits its
// last page every time it is half full, so it splits more often than a
// random one, yet writes an order of magnitude fewer pages.
//
// # Reads
//
// After each load into a server the table is read back: point lookups of
// keys spread over it and of its newest 1% of rows, counting the pages
// each touches, a range scan through the key that reads the newest 1%
// (from the least key among them up: the pages, and the rows read per
// newest row), and on PostgreSQL the leaf pages of the key index that
// hold the newest 1% (the working set an application that reads its
// newest rows keeps in cache). The keys are drawn with a fixed seed, so
// these are counts that do not change from run to run.
//
// # Engine families
//
// The B-trees (bbolt, SQLite, PostgreSQL, InnoDB) update pages in place:
// a key's order decides how many pages each insert dirties. An LSM tree
// (Pebble) appends sorted tables and merges them down its levels: a key's
// order decides how often a row is rewritten on its way down, and whether
// its oldest rows go by one range deletion, which drops or trims whole
// tables, or row by row, by tombstones that wait for a compaction. Logs and
// traces expire, so the Pebble load ends by deleting its oldest tenth the
// way the scheme's keys allow (see sortsByAge) and counting the bytes
// written until the space is reclaimed. [Report.Families] ranks the
// schemes on each family and says what changes between the two, from
// the run's figures.
//
// # Growth
//
// [GrowContext] runs the measurement at each of several sizes
// ([GrowSizes]: 10,000 and each power of ten up to a largest), a run of
// its own from empty tables at each, and [Growth] writes how every
// scheme's verdict figures change with N and whether the ranking does.
//
// # Concurrent writers
//
// [Options.Concurrent] also loads the K-writer keys into each server
// through K connections at once, each inserting its own writer's keys,
// and reports the insert rate, the batches' p99 latency and what the
// sessions waited on ([ConcurrentLoad]). The interleaved load through one
// connection stays: its counts repeat from run to run, the concurrent
// load's timings do not.
//
// # Caveats
//
// Keys are generated back to back, far faster than an application issues
// them, so time-based schemes see few clock ticks per run. The bbolt loads
// skip fsync unless [Options.Sync] is set, so inserts per second measure
// the B+tree and the page cache rather than the disk; being wall-clock time
// on a possibly shared machine, they are the noisiest figure, while pages
// written, splits and fill do not depend on the machine. A database
// writes a page when it checkpoints or flushes it, so the database loads
// checkpoint at a fixed interval of inserts ([Options.CheckpointEvery]),
// by default after every batch: a long-lived table is far larger than
// the inserts between two checkpoints, and a small N with a checkpoint
// per batch puts the same ratio of pages to inserts in front of the
// engine. InnoDB's pages written, redo bytes and split counter are
// server-wide, so other writers on the server add to them. A rate-capped scheme
// is timed with its real library, but may build its locality keys over a
// simulated clock ([Scheme.Keys]); sonyflake, at 25,600 IDs per second,
// does, and the report says so.
package compare
