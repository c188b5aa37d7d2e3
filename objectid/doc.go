// Package objectid generates MongoDB ObjectIDs as the current ObjectID
// specification defines them, byte for byte the same as the MongoDB Go
// driver's bson.ObjectID.
//
// # Layout
//
// Twelve bytes, shown as 24 lowercase hexadecimal digits:
//
//	byte 0 ...... 3 | 4 ........... 8 | 9 ...... 11
//	seconds (4)     | process (5)     | counter (3)
//
// From the first byte:
//
//   - seconds: big-endian unsigned Unix seconds, so IDs run to 2106-02-07
//     and sort by time to the second ([ID.Timestamp]).
//   - process: 5 random bytes from crypto/rand, drawn once per Generator;
//     they replace the machine and process IDs of the old ObjectID layout.
//   - counter: 3 big-endian bytes, starting at a random value and counting
//     up by one per ID across seconds, wrapping from 0xffffff to 0
//     ([ID.Counter]).
//
// # Basics
//
// [NewID] returns an ID from the package's Generator on the system clock. A
// [Generator] with [Options.Clock] lets tests fix the time. Both are safe
// for concurrent use. Next reads a coarse clock, never the precise one, per
// ID: one atomic add for the counter.
//
// A Generator never issues an ID twice: its second never moves backwards
// when the wall clock steps back, and it issues at most 2^24 IDs a second,
// as many as the counter has values, waiting for the next second beyond
// that. Restarts are safe without any store, since each run draws new
// process bytes.
//
// # Text and storage
//
// An ID prints as 24 lowercase hexadecimal digits; [Parse] accepts either
// case. In JSON it is that string; decoding also accepts MongoDB Extended
// JSON {"$oid": "..."}. In SQL it is the same string, because no column
// type for 12 raw bytes maps alike across drivers, while the text fits
// CHAR(24) anywhere and sorts like the bytes; Scan also reads raw 12-byte
// values. Convert to and from the driver's type with bson.ObjectID(id) and
// objectid.ID(oid). The zero ID is invalid: it encodes as empty text, an
// empty JSON string and SQL NULL, and String shows it as 24 zeros.
//
// # Caveats
//
//   - IDs from one Generator increase with time only to the second: within
//     a second the counter may wrap from 0xffffff to 0.
//   - The random process bytes make IDs from different processes distinct
//     with high probability, not certainty: 5 bytes give about one chance
//     in 2^40 that two processes share them.
//   - The 4-byte seconds run out in February 2106.
//
// # Against the generator contract
//
// *Generator is an [idkit.Generator] of [ID]; the contract is written
// there, once. What is particular to objectid:
//
//   - New's error is always nil, and Next's and Fill's are nil until
//     Close.
//   - A ctx bounds the wait for the next second.
//   - Stats counts Waits.
//   - A Generator uses no store, and Close has nothing to stop.
//   - [ErrSyntax], [ErrRange] and [ErrInvalid] are of kind
//     idkit.ErrInvalid, and [ErrClosed] of idkit.ErrClosed.
package objectid
