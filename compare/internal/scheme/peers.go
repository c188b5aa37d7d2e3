package scheme

import (
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/bits"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	bwsnowflake "github.com/bwmarrin/snowflake"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"
	"github.com/segmentio/ksuid"
	"github.com/sony/sonyflake"
)

// The baseline and the peers. Each peer is the real library, called as its
// users call it; keys are the library's own binary form (big-endian for
// integer IDs, so that byte order is numeric order).
func init() {
	register(counterScheme, uuidV4Scheme, uuidV7Scheme, ulidScheme, xidScheme,
		bwSnowflakeScheme, sonyflakeScheme, ksuidScheme)
}

// GenFunc adapts a function to a Generator.
type GenFunc func(dst []byte) ([]byte, error)

func (f GenFunc) Next(dst []byte) ([]byte, error) { return f(dst) }

// Each returns writers generators made by mk for writer k.
func Each(writers int, mk func(k int) (Generator, error)) ([]Generator, error) {
	gens := make([]Generator, writers)
	for k := range gens {
		g, err := mk(k)
		if err != nil {
			return nil, err
		}
		gens[k] = g
	}
	return gens, nil
}

func appendUint64(dst []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(dst, v) }

// counterScheme is the ideal: one sequence shared by every writer, as a
// database sequence or auto-increment column hands out.
var counterScheme = Scheme{
	Name:    "counter",
	Kind:    Baseline,
	Summary: "sequential int64 counter, one sequence shared by all writers (the ideal)",
	KeyLen:  8,
	New: func(writers int) ([]Generator, error) {
		seq := new(atomic.Int64)
		g := GenFunc(func(dst []byte) ([]byte, error) { return appendUint64(dst, uint64(seq.Add(1))), nil })
		return Each(writers, func(int) (Generator, error) { return g, nil })
	},
	Design: func() Design {
		return FromMaxBits(Design{
			Bits:     64,
			MaxBits:  63,
			Ordered:  true,
			Capacity: 1<<63 - 1,
			Dense:    true,
			Note:     "needs one central sequence: a round trip per ID (or per block) across a fleet",
		})
	},
}

// uuidVersionBits and uuidVariantBits are the fixed bits of every RFC 9562
// UUID; the rest of a version 4 UUID is random.
const (
	uuidVersionBits = 4
	uuidVariantBits = 2
	// uuidV7TimeBits and uuidV7SeqBits are RFC 9562's unix_ts_ms field and
	// the rand_a field that google/uuid fills with a sub-millisecond
	// sequence.
	uuidV7TimeBits = 48
	uuidV7SeqBits  = 12
)

var uuidV4Scheme = Scheme{
	Name:    "uuidv4",
	Kind:    Peer,
	Module:  "github.com/google/uuid",
	Summary: "random UUID, version 4 (uuid.NewRandom)",
	KeyLen:  len(uuid.UUID{}),
	New: func(writers int) ([]Generator, error) {
		g := GenFunc(func(dst []byte) ([]byte, error) {
			u, err := uuid.NewRandom()
			return append(dst, u[:]...), err
		})
		return Each(writers, func(int) (Generator, error) { return g, nil })
	},
	Design: func() Design {
		n := len(uuid.UUID{}) * 8
		return FromMaxBits(Design{
			Bits:       n,
			MaxBits:    n,
			RandomBits: n - uuidVersionBits - uuidVariantBits,
			Note:       "random: no order, every insert lands on a random leaf",
		})
	},
}

var uuidV7Scheme = Scheme{
	Name:    "uuidv7",
	Kind:    Peer,
	Module:  "github.com/google/uuid",
	Summary: "time-ordered UUID, version 7 (uuid.NewV7)",
	KeyLen:  len(uuid.UUID{}),
	New: func(writers int) ([]Generator, error) {
		g := GenFunc(func(dst []byte) ([]byte, error) {
			u, err := uuid.NewV7()
			return append(dst, u[:]...), err
		})
		return Each(writers, func(int) (Generator, error) { return g, nil })
	},
	Design: func() Design {
		n := len(uuid.UUID{}) * 8
		return FromMaxBits(Design{
			Bits:       n,
			MaxBits:    n,
			Ordered:    true,
			TimeUnit:   time.Millisecond,
			TimeBits:   uuidV7TimeBits,
			Epoch:      time.Unix(0, 0).UTC(),
			RandomBits: n - uuidV7TimeBits - uuidVersionBits - uuidV7SeqBits - uuidVariantBits,
			PerSecond:  int64(1) << uuidV7SeqBits * int64(time.Second/time.Millisecond),
			Note: "the library's 12-bit sub-millisecond sequence: beyond 4,096 IDs in a millisecond its time field runs ahead of the clock; " +
				"no node field, and writers in one process share the library's state",
		})
	},
}

// newULIDEntropy returns what oklog/ulid recommends for monotonic ULIDs: a
// monotonic reader over a fast seeded source, locked for concurrent use.
func newULIDEntropy() (*ulid.LockedMonotonicReader, error) {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return nil, fmt.Errorf("compare: seeding ulid entropy: %w", err)
	}
	return &ulid.LockedMonotonicReader{MonotonicReader: ulid.Monotonic(mrand.NewChaCha8(seed), 0)}, nil
}

var ulidScheme = Scheme{
	Name:    "ulid",
	Kind:    Peer,
	Module:  "github.com/oklog/ulid/v2",
	Summary: "ULID with monotonic entropy, one entropy source per writer",
	KeyLen:  len(ulid.ULID{}),
	New: func(writers int) ([]Generator, error) {
		return Each(writers, func(int) (Generator, error) {
			entropy, err := newULIDEntropy()
			if err != nil {
				return nil, err
			}
			return GenFunc(func(dst []byte) ([]byte, error) {
				id, err := ulid.New(ulid.Now(), entropy)
				return append(dst, id[:]...), err
			}), nil
		})
	},
	Design: func() Design {
		n := len(ulid.ULID{}) * 8
		return FromMaxBits(Design{
			Bits:       n,
			MaxBits:    n,
			Ordered:    true,
			TimeUnit:   time.Millisecond,
			TimeBits:   bits.Len64(ulid.MaxTime()),
			Epoch:      ulid.Time(0).UTC(),
			RandomBits: len(ulid.ULID{}.Entropy()) * 8,
			Note:       "within a millisecond the 80-bit entropy is incremented by a random step; no node field",
		})
	},
}

// xidWriterMachine returns the 3 machine-id bytes for writer k >= 1. The
// library reads its machine id once per process, so separate app
// instances are modelled by rewriting those bytes per writer.
func xidWriterMachine(k int) [3]byte {
	v := mrand.NewPCG(uint64(k), 0x9e3779b97f4a7c15).Uint64()
	return [3]byte{byte(v >> 16), byte(v >> 8), byte(v)}
}

var xidScheme = Scheme{
	Name:    "xid",
	Kind:    Peer,
	Module:  "github.com/rs/xid",
	Summary: "xid: seconds | machine | pid | counter, 12 bytes",
	KeyLen:  len(xid.ID{}),
	New: func(writers int) ([]Generator, error) {
		return Each(writers, func(k int) (Generator, error) {
			if k == 0 {
				return GenFunc(func(dst []byte) ([]byte, error) {
					id := xid.New()
					return append(dst, id[:]...), nil
				}), nil
			}
			m := xidWriterMachine(k)
			return GenFunc(func(dst []byte) ([]byte, error) {
				id := xid.New()
				copy(id[4:7], m[:])
				return append(dst, id[:]...), nil
			}), nil
		})
	},
	Design: func() Design {
		n := len(xid.ID{}) * 8
		return FromMaxBits(Design{
			Bits:      n,
			MaxBits:   n,
			TimeUnit:  time.Second,
			TimeBits:  32,
			Epoch:     xid.NilID().Time().UTC(),
			NodeBits:  (len(xid.NilID().Machine()) + 2) * 8,
			PerSecond: 1 << 24,
			Note: "the 24-bit counter starts at random and wraps, so a second's IDs are ordered except across the wrap; more than 2^24 IDs in one second repeat; " +
				"writers 1.. get their own machine bytes, since the library reads one per process",
		})
	},
}

var bwSnowflakeScheme = Scheme{
	Name:    "bwmarrin-snowflake",
	Kind:    Peer,
	Module:  "github.com/bwmarrin/snowflake",
	Summary: "Twitter Snowflake: ms | node | step, one node per writer",
	KeyLen:  8,
	New: func(writers int) ([]Generator, error) {
		return Each(writers, func(k int) (Generator, error) {
			node, err := bwsnowflake.NewNode(int64(k))
			if err != nil {
				return nil, fmt.Errorf("compare: bwmarrin/snowflake writer %d: %w", k, err)
			}
			return GenFunc(func(dst []byte) ([]byte, error) {
				b := node.Generate().IntBytes()
				return append(dst, b[:]...), nil
			}), nil
		})
	},
	Design: func() Design {
		shift := bwsnowflake.NodeBits + bwsnowflake.StepBits
		unit := time.Duration(bwsnowflake.ID(1<<shift).Time()-bwsnowflake.Epoch) * time.Millisecond
		return FromMaxBits(Design{
			Bits:      64,
			MaxBits:   63,
			Ordered:   true,
			TimeUnit:  unit,
			TimeBits:  63 - int(shift),
			Epoch:     time.UnixMilli(bwsnowflake.Epoch).UTC(),
			NodeBits:  int(bwsnowflake.NodeBits),
			PerSecond: int64(1) << bwsnowflake.StepBits * int64(time.Second/unit),
			Waits:     true,
			Note:      "when the step runs out in a millisecond the library spins until the next one",
		})
	},
}

// sonyflakeEpoch is sonyflake's default StartTime, documented on its
// Settings; the library does not export it.
var sonyflakeEpoch = time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC)

// sonyflakeUnit is the length of one sonyflake tick, read back through the
// library's own decoder.
func sonyflakeUnit() time.Duration {
	return sonyflake.ElapsedTime(1 << (sonyflake.BitLenSequence + sonyflake.BitLenMachineID))
}

var sonyflakeScheme = Scheme{
	Name:    "sonyflake",
	Kind:    Peer,
	Module:  "github.com/sony/sonyflake",
	Summary: "Sonyflake: 10 ms | sequence | machine, one machine id per writer",
	KeyLen:  8,
	New: func(writers int) ([]Generator, error) {
		return Each(writers, func(k int) (Generator, error) {
			sf, err := sonyflake.New(sonyflake.Settings{
				MachineID: func() (uint16, error) { return uint16(k), nil },
			})
			if err != nil {
				return nil, fmt.Errorf("compare: sonyflake writer %d: %w", k, err)
			}
			return GenFunc(func(dst []byte) ([]byte, error) {
				id, err := sf.NextID()
				return appendUint64(dst, id), err
			}), nil
		})
	},
	Keys:     sonyflakeKeys,
	KeysNote: "locality keys composed over a simulated clock at the full design rate (2^8 IDs per 10 ms tick per writer), each checked with the library's own decoders; the real library would take N/25,600 s per writer to issue them",
	Design: func() Design {
		unit := sonyflakeUnit()
		return FromMaxBits(Design{
			Bits:      64,
			MaxBits:   63,
			Ordered:   true,
			TimeUnit:  unit,
			TimeBits:  sonyflake.BitLenTime,
			Epoch:     sonyflakeEpoch,
			NodeBits:  sonyflake.BitLenMachineID,
			PerSecond: int64(1) << sonyflake.BitLenSequence * int64(time.Second/unit),
			Waits:     true,
			Note:      "the sequence sits above the machine id; when it runs out the library sleeps until the next tick",
		})
	},
}

// sonyflakeKeys returns generators that compose the IDs sonyflake would
// issue at its full rate, starting at the current tick: 2^BitLenSequence
// IDs per tick, then the next tick. v1.2.0 exports a decoder but no
// composer, so the ID is built from the library's exported bit lengths and
// checked against its decoders.
func sonyflakeKeys(writers int) ([]Generator, error) {
	unit := sonyflakeUnit()
	base := int64(time.Since(sonyflakeEpoch) / unit)
	return Each(writers, func(k int) (Generator, error) {
		return &sonyflakeSim{base: base, unit: unit, machine: uint64(k)}, nil
	})
}

// sonyflakeSim is one writer of sonyflakeKeys.
type sonyflakeSim struct {
	mu      sync.Mutex
	n       int64
	base    int64
	unit    time.Duration
	machine uint64
}

func (s *sonyflakeSim) Next(dst []byte) ([]byte, error) {
	s.mu.Lock()
	n := s.n
	s.n++
	s.mu.Unlock()
	elapsed := s.base + n>>sonyflake.BitLenSequence
	seq := uint64(n) & (1<<sonyflake.BitLenSequence - 1)
	if elapsed >= 1<<sonyflake.BitLenTime {
		return dst, fmt.Errorf("compare: simulated sonyflake: %w", sonyflake.ErrOverTimeLimit)
	}
	id := uint64(elapsed)<<(sonyflake.BitLenSequence+sonyflake.BitLenMachineID) |
		seq<<sonyflake.BitLenMachineID | s.machine
	if sonyflake.ElapsedTime(id) != time.Duration(elapsed)*s.unit ||
		sonyflake.SequenceNumber(id) != seq || sonyflake.MachineID(id) != s.machine {
		return dst, fmt.Errorf("%w: simulated sonyflake ID %d does not decode to tick %d, sequence %d, machine %d", ErrKey, id, elapsed, seq, s.machine)
	}
	return appendUint64(dst, id), nil
}

var ksuidScheme = Scheme{
	Name:    "ksuid",
	Kind:    Peer,
	Module:  "github.com/segmentio/ksuid",
	Summary: "KSUID: seconds | 128 random bits, 20 bytes",
	KeyLen:  len(ksuid.KSUID{}),
	New: func(writers int) ([]Generator, error) {
		g := GenFunc(func(dst []byte) ([]byte, error) {
			id, err := ksuid.NewRandom()
			return append(dst, id[:]...), err
		})
		return Each(writers, func(int) (Generator, error) { return g, nil })
	},
	Design: func() Design {
		n := len(ksuid.KSUID{}) * 8
		return FromMaxBits(Design{
			Bits:       n,
			MaxBits:    n,
			TimeUnit:   time.Second,
			TimeBits:   bits.Len32(ksuid.Max.Timestamp()),
			Epoch:      ksuid.Nil.Time().UTC(),
			RandomBits: len(ksuid.Nil.Payload()) * 8,
			Note:       "random within a second: one second's inserts spread over that second's key range",
		})
	},
}
