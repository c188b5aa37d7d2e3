package ff1

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

var (
	// ErrKey reports a key that is not an AES key: 16, 24 or 32 bytes.
	ErrKey = errkind.New(idkit.ErrInvalid, "ff1: invalid key")
	// ErrRadix reports a radix outside MinRadix to MaxRadix.
	ErrRadix = errkind.New(idkit.ErrInvalid, "ff1: invalid radix")
	// ErrLength reports a numeral string shorter or longer than
	// SP 800-38G Rev. 1 allows for its radix.
	ErrLength = errkind.New(idkit.ErrInvalid, "ff1: invalid length")
	// ErrNumeral reports a numeral not below the radix, or a binary value
	// not below 2^n.
	ErrNumeral = errkind.New(idkit.ErrInvalid, "ff1: invalid numeral")
	// ErrTweak reports a tweak longer than MaxTweakLen bytes.
	ErrTweak = errkind.New(idkit.ErrInvalid, "ff1: invalid tweak")
)
