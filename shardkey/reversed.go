package shardkey

import (
	"context"
	"unsafe"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/segment"
)

// ReversedOptions configure a Reversed generator: the options of the
// segment.Allocator whose counter it reverses (Store, Tag, Step, Clock
// ...), checked as segment.New checks them.
type ReversedOptions struct {
	segment.Options
}

// Reversed issues Reverse(n) for the dense counter n of a
// segment.Allocator: Spanner's bit-reversed sequence. It is safe for
// concurrent use. IDs are unique as the allocator's counters are: across
// processes sharing the store, and across restarts, which leave gaps in
// the counter and never repeat it.
type Reversed struct {
	a *segment.Allocator
}

// NewReversed returns a Reversed generator on a new segment.Allocator for
// o. It reserves the first block before it returns, under ctx, and returns
// segment.New's error if that fails or o is invalid.
func NewReversed(ctx context.Context, o ReversedOptions) (*Reversed, error) {
	a, err := segment.New(ctx, o.Options)
	if err != nil {
		return nil, err
	}
	return &Reversed{a: a}, nil
}

// Tag returns the tag of the counter.
func (r *Reversed) Tag() string { return r.a.Tag() }

// State returns the allocator's blocks and steps now, in counters.
func (r *Reversed) State() segment.State { return r.a.State() }

// Next returns the ID of the next counter. It fails as
// segment.Allocator.Next does.
func (r *Reversed) Next() (ID, error) {
	v, err := r.a.Next()
	if err != nil {
		return 0, err
	}
	return ID(Reverse(int64(v))), nil
}

// NextContext is Next, whose wait for a block ends early when ctx ends.
func (r *Reversed) NextContext(ctx context.Context) (ID, error) {
	v, err := r.a.NextContext(ctx)
	if err != nil {
		return 0, err
	}
	return ID(Reverse(int64(v))), nil
}

// Fill fills dst with the IDs of consecutive counters and returns
// len(dst). On error it returns how many IDs it issued, at the start of
// dst, and the rest of dst is zero.
func (r *Reversed) Fill(dst []ID) (int, error) { return r.FillContext(context.Background(), dst) }

// FillContext is Fill, whose wait for a block ends early when ctx ends: it
// then returns the IDs filled so far and ctx's error.
func (r *Reversed) FillContext(ctx context.Context, dst []ID) (int, error) {
	n, err := r.a.FillContext(ctx, asSegment(dst))
	for i, v := range dst[:n] {
		dst[i] = ID(Reverse(int64(v)))
	}
	return n, err
}

// asSegment returns dst as a []segment.ID over the same memory, so that
// the allocator fills the caller's slice without a copy: both ID types are
// int64 underneath.
func asSegment(dst []ID) []segment.ID {
	return unsafe.Slice((*segment.ID)(unsafe.SliceData(dst)), len(dst))
}

// Stats returns the allocator's counts of events (see
// segment.Allocator.Stats). It works after Close too.
func (r *Reversed) Stats() idkit.Stats { return r.a.Stats() }

// Close closes the allocator: later calls fail at once with an error
// wrapping segment.ErrClosed, of kind idkit.ErrClosed. The counters left
// in its blocks are lost. Close returns nil; calling it again does
// nothing.
func (r *Reversed) Close() error { return r.a.Close() }
