package segment

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrSyntax reports text that is not the canonical decimal form of an
	// ID.
	ErrSyntax = errkind.New(idkit.ErrInvalid, "segment: invalid syntax")
	// ErrRange reports a number that is not an ID (see ID).
	ErrRange = errkind.New(idkit.ErrInvalid, "segment: not an ID")
	// ErrInvalid reports an option or argument outside its allowed range:
	// a tag or step that CheckTag or CheckStep refuses, or bounds of the
	// adaptive step that do not hold the first step. Stores wrap it for a
	// bad tag or step too.
	ErrInvalid = errkind.New(idkit.ErrInvalid, "segment: invalid")
	// ErrUnavailable reports that the store did not reserve a block: both
	// buffers of the allocator are used up and no ID can be issued until
	// the store answers. The error also wraps the store's own error and
	// names the tag and the store.
	ErrUnavailable = errkind.New(idkit.ErrUnavailable, "segment: block store unavailable")
	// ErrBadBlock reports a block that breaks the BlockStore contract: not
	// within 1..=2^63-1, Last below First, or not above a block reserved
	// before. No ID of it is issued.
	ErrBadBlock = errkind.New(idkit.ErrCorrupt, "segment: store returned a bad block")
	// ErrExhausted reports that a tag's IDs ran out: the next block would
	// pass 2^63-1. Stores return it wrapped.
	ErrExhausted = errkind.New(idkit.ErrExhausted, "segment: IDs of the tag exhausted")
	// ErrClosed reports a call on a closed Allocator.
	ErrClosed = errkind.New(idkit.ErrClosed, "segment: allocator closed")
)
