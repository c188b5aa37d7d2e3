package scheme

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/idkit/idkit/publicid"
	"github.com/idkit/idkit/traceid"
)

func init() { register(publicID63Scheme, publicID53Scheme) }

// newCodec returns a codec for d under a fresh random key, as a service
// would hold one.
func newCodec(d publicid.Domain) (*publicid.Codec, error) {
	key, err := publicid.NewKey(1)
	if err != nil {
		return nil, err
	}
	return publicid.New(d, key)
}

// publicID63Scheme is what customers see of TraceIds: each writer a
// TraceId node, each ID shown as its public number under one key. The keys
// are those public numbers; a service keeps the TraceIds as its keys and
// maps at its edge.
var publicID63Scheme = Scheme{
	Name:    "publicid-63",
	Kind:    Ours,
	Module:  "github.com/idkit/idkit/publicid",
	Summary: "public IDs of TraceIds: a keyed permutation of 1..2^63-1 (FF1, NIST SP 800-38G), one TraceId node per writer",
	KeyLen:  8,
	New: func(writers int) ([]Generator, error) {
		codec, err := newCodec(publicid.Domain63)
		if err != nil {
			return nil, fmt.Errorf("compare: publicid-63: %w", err)
		}
		return Each(writers, func(k int) (Generator, error) {
			g, err := traceid.New(context.Background(), traceid.Options{Node: k})
			if err != nil {
				return nil, fmt.Errorf("compare: publicid-63 writer %d: %w", k, err)
			}
			return GenFunc(func(dst []byte) ([]byte, error) {
				id, err := g.Next()
				if err != nil {
					return dst, err
				}
				v, err := codec.Permute(int64(id))
				return appendUint64(dst, uint64(v)), err
			}), nil
		})
	},
	Design: func() Design {
		return FromMaxBits(Design{
			Bits:      64,
			MaxBits:   63,
			PerSecond: 1<<traceid.LowBits - 1,
			Note:      "what customers see: no order, no count, no time without the key; store the TraceIds themselves as keys",
		})
	},
}

// publicID53Scheme is what customers see of a database sequence's IDs
// when they must fit a JavaScript number: the public number under one key
// of the shared counter's next value.
var publicID53Scheme = Scheme{
	Name:    "publicid-53",
	Kind:    Ours,
	Module:  "github.com/idkit/idkit/publicid",
	Summary: "public IDs of a shared counter, JavaScript-safe: a keyed permutation of 1..2^53-1",
	KeyLen:  8,
	New: func(writers int) ([]Generator, error) {
		codec, err := newCodec(publicid.Domain53)
		if err != nil {
			return nil, fmt.Errorf("compare: publicid-53: %w", err)
		}
		seq := new(atomic.Int64)
		g := GenFunc(func(dst []byte) ([]byte, error) {
			v, err := codec.Permute(seq.Add(1))
			return appendUint64(dst, uint64(v)), err
		})
		return Each(writers, func(int) (Generator, error) { return g, nil })
	},
	Design: func() Design {
		return FromMaxBits(Design{
			Bits:     64,
			MaxBits:  53,
			Capacity: publicid.Domain53.Max(),
			Note:     "what customers see of a sequence's IDs, as JSON numbers; store the sequence's values as keys",
		})
	},
}
