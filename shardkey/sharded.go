package shardkey

import (
	"context"
	"fmt"
	"time"
	"unsafe"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/snowflake"
)

// Limits and defaults of ShardBitsOptions.Bits.
const (
	// DefaultBits is the number of shard bits when Bits is zero: TiDB's
	// AUTO_RANDOM(5).
	DefaultBits = 5
	// MaxBits is the most shard bits: TiDB's limit for AUTO_RANDOM.
	MaxBits = 15
)

// DefaultLayout is the Snowflake layout of ShardBitsOptions whose
// Snowflake.Layout is zero: 41 bits of milliseconds since Twitter's epoch
// (2010-11-04T01:42:54.657Z), a 5-bit worker and a 12-bit sequence, 58
// bits in all, which leaves room for DefaultBits shard bits. It expires in
// 2080, as Twitter's does.
func DefaultLayout() snowflake.Layout {
	return snowflake.Layout{
		Name:         "shardkey",
		Epoch:        snowflake.Twitter().Epoch,
		Unit:         time.Millisecond,
		TimeBits:     41,
		Fields:       []snowflake.Field{{Name: "worker", Bits: 5}},
		SequenceBits: 12,
	}
}

// ShardBitsOptions configure a Sharded generator, of either form.
type ShardBitsOptions struct {
	// Bits is the number of shard bits S, 1 to MaxBits. Zero means
	// DefaultBits.
	Bits int
	// Snowflake configures the generator of the Snowflake IDs under the
	// shard bits, with its node, clock, policies and store. Its Layout
	// must use at most 63-Bits bits; the zero Layout means
	// DefaultLayout(), which uses 58 (so a Bits above 5 needs a layout of
	// its own).
	Snowflake snowflake.Options
}

// Sharded issues Snowflake IDs with shard bits on top: from NewShardBits,
// a hash of the ID's tick; from NewHashPrefixed, a hash of the whole ID.
// It is safe for concurrent use.
type Sharded struct {
	g         *snowflake.Generator
	layout    snowflake.Layout
	bits      int
	used      uint   // the bits of the layout: inner IDs are below 2^used
	shift     uint   // of the shard in an ID: 63 - bits
	mask      uint32 // of the shard in a hash: 2^bits - 1
	tickShift uint   // of the tick in an inner ID
	seqShift  uint   // of the sequence in an inner ID
	whole     bool   // the shard hashes the whole inner ID, not its tick
}

// Parts are what Sharded.Decode reads from an ID: its shard, its Snowflake
// ID and that ID's parts.
type Parts struct {
	// Shard is the top Bits bits below bit 63.
	Shard int64
	// Inner is the Snowflake ID in the bits below the shard.
	Inner snowflake.ID
	// Parts are Inner's time, tick, node and sequence.
	snowflake.Parts
}

// NewShardBits returns a generator of TiDB's AUTO_RANDOM layout: o.Bits
// shard bits on top of a Snowflake ID, the shard a hash of the ID's tick.
// The IDs of one tick share a shard and increase within it; consecutive
// ticks spread over the shards. It starts the snowflake.Generator as
// snowflake.New does, under ctx. An invalid option is an error naming it
// and its range.
func NewShardBits(ctx context.Context, o ShardBitsOptions) (*Sharded, error) {
	return newSharded(ctx, o, false)
}

// NewHashPrefixed returns a generator of CockroachDB's hash-sharded
// layout: o.Bits bits of a hash of the Snowflake ID on top of it, so that
// every ID falls into a bucket of its own (see HashPrefix). It starts the
// snowflake.Generator as snowflake.New does, under ctx. An invalid option
// is an error naming it and its range.
func NewHashPrefixed(ctx context.Context, o ShardBitsOptions) (*Sharded, error) {
	return newSharded(ctx, o, true)
}

func newSharded(ctx context.Context, o ShardBitsOptions, whole bool) (*Sharded, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	g, err := snowflake.New(ctx, o.Snowflake)
	if err != nil {
		return nil, err
	}
	l := g.Layout()
	return &Sharded{
		g:         g,
		layout:    l,
		bits:      o.Bits,
		used:      uint(l.Bits()),
		shift:     uint(63 - o.Bits),
		mask:      1<<o.Bits - 1,
		tickShift: uint(l.Bits() - l.TimeBits),
		seqShift:  seqShift(l),
		whole:     whole,
	}, nil
}

// check validates o and fills in its defaults.
func (o *ShardBitsOptions) check() error {
	if o.Bits == 0 {
		o.Bits = DefaultBits
	}
	if err := checkBits("ShardBitsOptions.Bits", o.Bits); err != nil {
		return err
	}
	if isZero(o.Snowflake.Layout) {
		o.Snowflake.Layout = DefaultLayout()
	}
	l := o.Snowflake.Layout
	if err := l.Validate(); err != nil {
		return fmt.Errorf("ShardBitsOptions.Snowflake: %w", err)
	}
	if limit := 63 - o.Bits; l.Bits() > limit {
		return fmt.Errorf("%w: ShardBitsOptions.Snowflake.Layout uses %d bits (time %d + node %d + sequence %d), want at most %d, 63 - Bits (%d)",
			ErrInvalid, l.Bits(), l.TimeBits, l.NodeBits(), l.SequenceBits, limit, o.Bits)
	}
	return nil
}

func checkBits(name string, bits int) error {
	if bits < 1 || bits > MaxBits {
		return fmt.Errorf("%w: %s = %d, want 1 to %d", ErrInvalid, name, bits, MaxBits)
	}
	return nil
}

// isZero reports whether l is the zero Layout.
func isZero(l snowflake.Layout) bool {
	return l.Name == "" && l.Epoch.IsZero() && l.Unit == 0 && l.TimeBits == 0 &&
		len(l.Fields) == 0 && !l.NodeLow && l.SequenceBits == 0
}

// HashPrefix returns the key of a hash-prefixed generator with the given
// bits for the Snowflake ID inner: FNV-1a 32 of inner's 8 big-endian
// bytes modulo 2^bits, above inner. bits outside 1 to MaxBits, or an inner
// outside 1 to 2^(63-bits)-1, is an error wrapping ErrInvalid.
func HashPrefix(inner snowflake.ID, bits int) (ID, error) {
	if err := checkBits("bits", bits); err != nil {
		return 0, err
	}
	if inner <= 0 || uint64(inner)>>(63-bits) != 0 {
		return 0, fmt.Errorf("%w: Snowflake ID %d, want 1 to %d for %d shard bits", ErrInvalid, int64(inner), int64(1)<<(63-bits)-1, bits)
	}
	return ID(uint64(fnv32(uint64(inner))&(1<<bits-1))<<(63-bits) | uint64(inner)), nil
}

// fnv32 is FNV-1a 32-bit over the 8 big-endian bytes of v, as hash/fnv's
// New32a computes it, without allocating.
func fnv32(v uint64) uint32 {
	const (
		offset = 2166136261
		prime  = 16777619
	)
	h := uint32(offset)
	for shift := 56; shift >= 0; shift -= 8 {
		h ^= uint32(byte(v >> shift))
		h *= prime
	}
	return h
}

// seqShift is the position of the sequence in an ID of layout l.
func seqShift(l snowflake.Layout) uint {
	if l.NodeLow {
		return uint(l.NodeBits())
	}
	return 0
}

// prefix returns the shard of inner, in place: a hash of inner, or the
// hash of its tick plus its sequence (the tick's IDs take the shards in
// turn).
func (s *Sharded) prefix(inner uint64) uint64 {
	if s.whole {
		return uint64(fnv32(inner)&s.mask) << s.shift
	}
	return s.turn(fnv32(inner>>s.tickShift), inner)
}

// turn is the shard of inner in place, from the hash h of its tick.
func (s *Sharded) turn(h uint32, inner uint64) uint64 {
	return uint64((h+uint32(inner>>s.seqShift))&s.mask) << s.shift
}

// Key returns the ID of the generator's form for the Snowflake ID inner,
// which must be one of its layout. Another inner is an error wrapping
// ErrInvalid.
func (s *Sharded) Key(inner snowflake.ID) (ID, error) {
	if inner <= 0 || uint64(inner)>>s.used != 0 {
		return 0, fmt.Errorf("%w: Snowflake ID %d, want 1 to %d for layout %s", ErrInvalid, int64(inner), int64(1)<<s.used-1, s.layout)
	}
	return ID(s.prefix(uint64(inner)) | uint64(inner)), nil
}

// Decode splits id into its shard and Snowflake ID, and that ID into its
// parts. An id that the generator's form does not issue (not positive,
// bits above the layout's set, or a shard that is not the hash the form
// takes) is an error wrapping ErrRange.
func (s *Sharded) Decode(id ID) (Parts, error) {
	if id <= 0 {
		return Parts{}, fmt.Errorf("%w: %d, want 1 to 9223372036854775807", ErrRange, int64(id))
	}
	inner := id.Inner(s.bits)
	p, err := s.layout.Decode(inner)
	if err != nil {
		return Parts{}, fmt.Errorf("%w: %d: Snowflake ID %d: %w", ErrRange, int64(id), int64(inner), err)
	}
	shard, want := id.Shard(s.bits), int64(s.prefix(uint64(inner))>>s.shift)
	if shard != want {
		return Parts{}, fmt.Errorf("%w: %d: shard %d, want %d for Snowflake ID %d", ErrRange, int64(id), shard, want, int64(inner))
	}
	return Parts{Shard: shard, Inner: inner, Parts: p}, nil
}

// Bits returns the number of shard bits.
func (s *Sharded) Bits() int { return s.bits }

// Layout returns the layout of the Snowflake IDs under the shard bits.
func (s *Sharded) Layout() snowflake.Layout { return s.g.Layout() }

// Node returns the Snowflake generator's node field values by name.
func (s *Sharded) Node() map[string]int64 { return s.g.Node() }

// Next returns a new ID. It waits and fails as snowflake.Generator.Next
// does.
func (s *Sharded) Next() (ID, error) { return s.NextContext(context.Background()) }

// NextContext is Next under ctx, which bounds its waits as
// snowflake.Generator.NextContext's.
func (s *Sharded) NextContext(ctx context.Context) (ID, error) {
	v, err := s.g.NextContext(ctx)
	if err != nil {
		return 0, err
	}
	return ID(s.prefix(uint64(v)) | uint64(v)), nil
}

// Fill fills dst with new IDs and returns len(dst), or fewer with the
// error that stopped it (see Next).
func (s *Sharded) Fill(dst []ID) (int, error) { return s.FillContext(context.Background(), dst) }

// FillContext is Fill under ctx, which bounds its waits as NextContext's.
// A call whose ctx ends returns the IDs filled so far and ctx's error.
func (s *Sharded) FillContext(ctx context.Context, dst []ID) (int, error) {
	n, err := s.g.FillContext(ctx, asSnowflake(dst))
	out := dst[:n]
	if s.whole {
		for i, v := range out {
			out[i] = ID(s.prefix(uint64(v)) | uint64(v))
		}
		return n, err
	}
	// The IDs of a run share their tick: hash each tick once.
	tick, h := ^uint64(0), uint32(0)
	for i, v := range out {
		if t := uint64(v) >> s.tickShift; t != tick {
			tick, h = t, fnv32(t)
		}
		out[i] = ID(s.turn(h, uint64(v)) | uint64(v))
	}
	return n, err
}

// asSnowflake returns dst as a []snowflake.ID over the same memory, so
// that the generator fills the caller's slice without a copy: both ID
// types are int64 underneath.
func asSnowflake(dst []ID) []snowflake.ID {
	return unsafe.Slice((*snowflake.ID)(unsafe.SliceData(dst)), len(dst))
}

// Stats returns the Snowflake generator's counts of events (see
// snowflake.Generator.Stats). It works after Close too.
func (s *Sharded) Stats() idkit.Stats { return s.g.Stats() }

// Close closes the Snowflake generator: later calls fail at once with an
// error wrapping snowflake.ErrClosed, of kind idkit.ErrClosed. It returns
// nil; calling it again does nothing.
func (s *Sharded) Close() error { return s.g.Close() }
