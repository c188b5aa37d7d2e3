package publicid

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrSyntax reports text that is not a public ID: the wrong length or
	// a character outside the alphabet.
	ErrSyntax = errkind.New(idkit.ErrInvalid, "publicid: invalid syntax")
	// ErrRange reports a number outside the codec's domain.
	ErrRange = errkind.New(idkit.ErrInvalid, "publicid: out of range")
	// ErrUnknownKey reports a public ID whose key id is not among the
	// codec's keys: made under another key, or not a public ID of this
	// service.
	ErrUnknownKey = errkind.New(idkit.ErrInvalid, "publicid: unknown key")
	// ErrUnknownConstruction reports a public ID made by another
	// construction than the codec's: by the one publicid used before FF1,
	// or by a later one.
	ErrUnknownConstruction = errkind.New(idkit.ErrInvalid, "publicid: unknown construction")
	// ErrInvalid reports a key or option outside its allowed range; the
	// wrapping error names it and the range.
	ErrInvalid = errkind.New(idkit.ErrInvalid, "publicid: invalid")
)
