package idkit

import "context"

// Generator is the shape every idkit generator has: traceid, snowflake,
// decimalid, objectid and flake128 Generators and segment Allocators, each
// with its own ID type.
//
//   - Next returns one ID, Fill fills dst and returns how many it filled
//     (len(dst), or fewer with the error that stopped it).
//   - NextContext and FillContext are Next and Fill under ctx, which bounds
//     their slow paths: a wait for the clock, for the store or for a
//     block. The fast path, one atomic add, never looks at ctx. A call
//     whose ctx ends returns the ctx's error and has issued nothing it
//     did not return. Next and Fill are these under
//     context.Background().
//   - Stats returns the generator's counts of events, after Close too.
//   - Close stops background work (a lease renewal, a block reservation)
//     and waits for it. Every later call of Next, NextContext, Fill and
//     FillContext, and every call waiting for the clock, the store or a
//     block, fails at once with an error of kind ErrClosed and issues
//     nothing. Close returns nil, and a second Close does nothing.
type Generator[ID any] interface {
	Next() (ID, error)
	NextContext(ctx context.Context) (ID, error)
	Fill(dst []ID) (int, error)
	FillContext(ctx context.Context, dst []ID) (int, error)
	Stats() Stats
	Close() error
}

// Stats counts the events a generator has met since it was created. Every
// generator returns this one shape; a count of an event its scheme never
// meets stays zero.
type Stats struct {
	// Waits counts the calls that waited: for the next unit of time (a
	// second, a tick), for a clock stepped back to catch up, or for a
	// block of IDs.
	Waits uint64
	// ClockBackward counts the times the wall clock was found behind the
	// unit the generator issues in, that is, stepped back.
	ClockBackward uint64
	// Exhausted counts the units whose IDs ran out: a second's or a tick's
	// counter, a generator id's counters.
	Exhausted uint64
	// Rejected counts the calls refused by a policy rather than served
	// late (snowflake's ClockBackwardError and ExhaustError policies).
	Rejected uint64
	// Borrowed counts the units taken ahead of the clock (snowflake's
	// ExhaustBorrow).
	Borrowed uint64
	// StoreWrites counts the successful store writes: high-water marks,
	// generator ids, blocks.
	StoreWrites uint64
	// StoreErrors counts the store calls that failed.
	StoreErrors uint64
}
