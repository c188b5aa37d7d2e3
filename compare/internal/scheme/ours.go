package scheme

import (
	"context"
	"fmt"
	"math/bits"
	"time"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// Our schemes, each registered from its package's public API: keys in
// big-endian int64 form (so that byte order is numeric order), one node or
// generator per writer, and a Design computed from the package's layout
// constants.
func init() {
	register(traceidScheme, decimalidScheme, twitterScheme, jsSafeScheme, objectidScheme)
}

// ours is an idkit generator as a compare Generator: key appends an ID's
// key bytes, and Close closes the generator with the row.
type ours[ID any] struct {
	g   idkit.Generator[ID]
	key func(dst []byte, id ID) []byte
}

func (o ours[ID]) Next(dst []byte) ([]byte, error) {
	id, err := o.g.Next()
	return o.key(dst, id), err
}

func (o ours[ID]) Close() error { return o.g.Close() }

// int64Key is the key of an int64 ID: big-endian, so that byte order is
// numeric order for the IDs' nonnegative values.
func int64Key[ID ~int64](dst []byte, id ID) []byte { return appendUint64(dst, uint64(id)) }

var traceidScheme = Scheme{
	Name:    "traceid",
	Kind:    Ours,
	Module:  "github.com/idkit/idkit/traceid",
	Summary: "TraceId: wrapping second | node | counter, one node per writer",
	KeyLen:  8,
	New: func(writers int) ([]Generator, error) {
		return Each(writers, func(k int) (Generator, error) {
			g, err := traceid.New(context.Background(), traceid.Options{Node: k})
			if err != nil {
				return nil, fmt.Errorf("compare: traceid writer %d: %w", k, err)
			}
			return ours[traceid.ID]{g, int64Key[traceid.ID]}, nil
		})
	},
	Design: func() Design {
		return FromMaxBits(Design{
			Bits:      64,
			MaxBits:   63,
			Ordered:   true,
			TimeUnit:  traceid.Period >> traceid.SecondBits,
			TimeBits:  traceid.SecondBits,
			Epoch:     time.Unix(0, 0).UTC(),
			Wraps:     true,
			NodeBits:  traceid.NodeBits,
			PerSecond: 1<<traceid.LowBits - 1,
			Waits:     true,
			Note:      "the second wraps every 2^25 s, so keys sort by time within a wrap; a new generator starts in a fresh second",
		})
	},
}

// decimalidScheme gives writer k generator id k of launch 1, as K app
// instances of one launch would get from the launch log.
var decimalidScheme = Scheme{
	Name:    "decimalid",
	Kind:    Ours,
	Module:  "github.com/idkit/idkit/decimalid",
	Summary: "DecimalId: counter | generator | launch in decimal digits, one generator id per writer",
	KeyLen:  8,
	New: func(writers int) ([]Generator, error) {
		return Each(writers, func(k int) (Generator, error) {
			g, err := decimalid.New(context.Background(), decimalid.Options{Launch: 1, Source: fixedGenerator(k)})
			if err != nil {
				return nil, fmt.Errorf("compare: decimalid writer %d: %w", k, err)
			}
			return ours[decimalid.ID]{g, int64Key[decimalid.ID]}, nil
		})
	},
	Design: func() Design {
		return FromMaxBits(Design{
			Bits:    64,
			MaxBits: bits.Len64(uint64(decimalid.Max)),
			Ordered: true,
			Note:    "no time field: the counter leads, so K generators insert at K places; a generator rolls to a new generator id every 922,337,202 IDs",
		})
	},
}

// fixedGenerator is a store.Generators that hands out one id,
// standing in for the launch log.
type fixedGenerator int

func (g fixedGenerator) NextGenerator(context.Context, int) (int, error) { return int(g), nil }

// twitterScheme is our snowflake package with the Twitter preset, and
// jsSafeScheme with the preset whose IDs fit a JavaScript number.
var (
	twitterScheme = snowflakeScheme("snowflake", snowflake.Twitter,
		"Snowflake, Twitter preset: ms | datacenter | worker | sequence, one node per writer")
	jsSafeScheme = snowflakeScheme("snowflake-jssafe", snowflake.JSSafe,
		"Snowflake, JS-safe preset: 41-bit ms since 2025 | 5-bit worker | 7-bit sequence, 53 bits in all, one worker per writer")
)

// snowflakeScheme is our snowflake package with a layout.
func snowflakeScheme(name string, layout func() snowflake.Layout, summary string) Scheme {
	return Scheme{
		Name:    name,
		Kind:    Ours,
		Module:  "github.com/idkit/idkit/snowflake",
		Summary: summary,
		KeyLen:  8,
		New: func(writers int) ([]Generator, error) {
			l := layout()
			return Each(writers, func(k int) (Generator, error) {
				g, err := snowflake.New(context.Background(), snowflake.Options{Layout: l, Node: nodeFields(l, k)})
				if err != nil {
					return nil, fmt.Errorf("compare: %s writer %d: %w", name, k, err)
				}
				return ours[snowflake.ID]{g, int64Key[snowflake.ID]}, nil
			})
		},
		Design: func() Design {
			l := layout()
			return FromMaxBits(Design{
				Bits:      64,
				MaxBits:   l.Bits(),
				Ordered:   true,
				TimeUnit:  l.Unit,
				TimeBits:  l.TimeBits,
				Epoch:     l.Epoch,
				NodeBits:  l.NodeBits(),
				PerSecond: int64(l.Rate()),
				Waits:     true,
				Note:      "when a millisecond's sequence runs out the generator waits for the next one",
			})
		},
	}
}

// objectidScheme gives each writer its own generator, and so its own random
// process bytes, as each app instance has.
var objectidScheme = Scheme{
	Name:    "objectid",
	Kind:    Ours,
	Module:  "github.com/idkit/idkit/objectid",
	Summary: "MongoDB ObjectID: seconds | process random | counter, 12 bytes",
	KeyLen:  len(objectid.ID{}),
	New: func(writers int) ([]Generator, error) {
		return Each(writers, func(int) (Generator, error) {
			g, _ := objectid.New(objectid.Options{}) // never fails
			return ours[objectid.ID]{g, func(dst []byte, id objectid.ID) []byte { return append(dst, id[:]...) }}, nil
		})
	},
	Design: func() Design {
		n := len(objectid.ID{}) * 8
		return FromMaxBits(Design{
			Bits:      n,
			MaxBits:   n,
			TimeUnit:  time.Second,
			TimeBits:  objectid.TimeLen * 8,
			Epoch:     time.Unix(0, 0).UTC(),
			NodeBits:  objectid.ProcessLen * 8,
			PerSecond: 1 << (objectid.CounterLen * 8),
			Waits:     true,
			Note:      "the 24-bit counter starts at random and wraps, so a second's IDs are ordered except across the wrap; the generator waits rather than issue more than 2^24 in a second",
		})
	},
}

// nodeFields spreads writer k over a layout's node fields, the last field
// taking the lowest bits.
func nodeFields(l snowflake.Layout, k int) map[string]int64 {
	node := map[string]int64{}
	for i := len(l.Fields) - 1; i >= 0; i-- {
		f := l.Fields[i]
		node[f.Name] = int64(k) & (1<<f.Bits - 1)
		k >>= f.Bits
	}
	return node
}
