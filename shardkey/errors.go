package shardkey

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrSyntax reports text that is not the canonical decimal form of an
	// ID.
	ErrSyntax = errkind.New(idkit.ErrInvalid, "shardkey: invalid syntax")
	// ErrRange reports a number that is not an ID: not from 1 to 2^63-1,
	// or, for a generator's Decode and Key, not one of its IDs.
	ErrRange = errkind.New(idkit.ErrInvalid, "shardkey: not an ID")
	// ErrInvalid reports an option or argument outside its allowed range;
	// the wrapping error names it and the range.
	ErrInvalid = errkind.New(idkit.ErrInvalid, "shardkey: invalid")
)
