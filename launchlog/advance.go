package launchlog

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/idkit/idkit/internal/safefile"
	"github.com/idkit/idkit/segment"
)

// Counters are values to move a log's counters past (AdvanceCounters):
// what a lost copy of the log handed out, such as the log a backup was
// taken of, or a log that was lost whole. Zero fields and missing entries
// move nothing.
type Counters struct {
	// Launch is the last launch id handed out: Begin hands out a later one.
	Launch int `json:"launch,omitempty"`
	// Generators maps a launch id to the last generator id handed out in
	// it: NextGenerator hands out later ones.
	Generators map[int]int `json:"generators,omitempty"`
	// Blocks maps a segment tag to the last ID reserved for it:
	// ReserveBlock reserves after it.
	Blocks map[string]int64 `json:"blocks,omitempty"`
	// Marks is the latest time the lost log's generators may have issued
	// in (its last use, plus the longest lease): every high-water mark of
	// the log is moved to it if it is earlier, so that each generator and
	// Reserve call starts after it. Reserve's positions (the keys that end
	// in "/last") stay, below the marks.
	Marks time.Time `json:"marks,omitzero"`
}

// AdvanceCounters moves the log's counters to c where they are behind it,
// never back, in one transaction, and returns the values it moved (the
// zero Counters if none was behind). It is the last step of restoring a
// log from a backup: a restored log would hand out again the launches,
// generator ids and blocks handed out since the backup was taken.
//
// It refuses, with a *HeldError, while any key recorded in the log is
// held, and holds them all while it writes: stop every process that uses
// the log first. A log that does not exist yet is made, so that a log lost
// whole can be replaced by a new one past the old one's counters.
func (l *Log) AdvanceCounters(ctx context.Context, c Counters) (Counters, error) {
	if err := c.check(); err != nil {
		return Counters{}, err
	}
	if err := ctx.Err(); err != nil {
		return Counters{}, fmt.Errorf("launchlog: AdvanceCounters in %s: %w", l.path, err)
	}
	f, err := safefile.OpenFile(l.path, os.O_RDWR|os.O_CREATE, l.mode)
	if err != nil {
		return Counters{}, l.fileError(err)
	}
	defer f.Close()
	unlock, err := l.lockRecordedKeys(f)
	if err != nil {
		return Counters{}, err
	}
	defer unlock()
	var moved Counters
	err = l.runOn(true, f, func(tx *bbolt.Tx) error {
		moved = Counters{}
		if err := l.advanceLaunch(tx, c.Launch, &moved); err != nil {
			return err
		}
		if err := l.advanceGenerators(tx, c.Generators, &moved); err != nil {
			return err
		}
		if err := l.advanceBlocks(tx, c.Blocks, &moved); err != nil {
			return err
		}
		if err := l.advanceMarks(ctx, tx, c.Marks, &moved); err != nil {
			return err
		}
		return ctx.Err()
	})
	if err != nil {
		return Counters{}, err
	}
	return moved, nil
}

func (c Counters) check() error {
	if err := checkLaunch("Counters.Launch", c.Launch, 0); err != nil {
		return err
	}
	for launch, g := range c.Generators {
		if err := checkLaunch("a launch of Counters.Generators", launch, 0); err != nil {
			return err
		}
		if g < 0 || g > MaxGenerator {
			return fmt.Errorf("%w: Counters.Generators[%d] = %d, want 0..=%d", ErrInvalid, launch, g, MaxGenerator)
		}
	}
	for tag, last := range c.Blocks {
		if err := segment.CheckTag(tag); err != nil {
			return fmt.Errorf("%w: Counters.Blocks: %w", ErrInvalid, err)
		}
		if last < 1 {
			return fmt.Errorf("%w: Counters.Blocks[%q] = %d, want 1..=%d", ErrInvalid, tag, last, int64(math.MaxInt64))
		}
	}
	return checkMarkTime(c.Marks)
}

// lockRecordedKeys locks every key that the holds of the log recorded, in
// f, the log file open: it fails with a *HeldError naming the first key
// held, and otherwise returns unlock.
func (l *Log) lockRecordedKeys(f *os.File) (unlock func(), err error) {
	var keys []string
	err = l.runOn(false, f, func(tx *bbolt.Tx) error {
		b := bucket(tx, holdsBucket)
		if b == nil {
			return nil
		}
		if err := l.sealedBucket(b, "hold", -8); err != nil {
			return err
		}
		return b.ForEach(func(k, _ []byte) error {
			keys = append(keys, string(k))
			return nil
		})
	})
	if err != nil && err != errReplaced {
		return nil, err
	}
	var unlocks []func() error
	unlock = func() {
		for _, u := range unlocks {
			_ = u()
		}
	}
	for _, key := range keys {
		u, ok, err := l.lockKey(f, key)
		if err != nil || !ok {
			unlock()
			if err != nil {
				return nil, err
			}
			return nil, &HeldError{Path: l.path, Key: key, Holder: l.holderOf(key)}
		}
		unlocks = append(unlocks, u)
	}
	return unlock, nil
}

func (l *Log) advanceLaunch(tx *bbolt.Tx, last int, moved *Counters) error {
	b, err := createBucket(tx, launchesBucket)
	if err != nil {
		return err
	}
	if err := l.checkLaunches(b); err != nil {
		return err
	}
	if uint64(last) <= b.Sequence() {
		return nil
	}
	moved.Launch = last
	return b.SetSequence(uint64(last))
}

func (l *Log) advanceGenerators(tx *bbolt.Tx, gens map[int]int, moved *Counters) error {
	b, err := createBucket(tx, generatorsBucket)
	if err != nil {
		return err
	}
	if err := l.sealedBucket(b, "generator counter", 4); err != nil {
		return err
	}
	for _, launch := range slices.Sorted(maps.Keys(gens)) {
		key := idKey(launch)
		var next uint32
		if v := b.Get(key); v != nil {
			next = binary.BigEndian.Uint32(v)
		}
		if want := uint32(gens[launch]) + 1; next < want {
			if moved.Generators == nil {
				moved.Generators = make(map[int]int)
			}
			moved.Generators[launch] = gens[launch]
			if err := putSealed(b, key, binary.BigEndian.AppendUint32(nil, want)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *Log) advanceBlocks(tx *bbolt.Tx, blocks map[string]int64, moved *Counters) error {
	b, err := createBucket(tx, blocksBucket)
	if err != nil {
		return err
	}
	for _, tag := range slices.Sorted(maps.Keys(blocks)) {
		last, err := l.readBlockMark(b, tag)
		if err != nil {
			return err
		}
		if want := blocks[tag]; last < want {
			if moved.Blocks == nil {
				moved.Blocks = make(map[string]int64)
			}
			moved.Blocks[tag] = want
			if err := putSealed(b, []byte(tag), binary.BigEndian.AppendUint64(nil, uint64(want))); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *Log) advanceMarks(ctx context.Context, tx *bbolt.Tx, t time.Time, moved *Counters) error {
	if t.IsZero() {
		return nil
	}
	b, err := createBucket(tx, highWaterBucket)
	if err != nil {
		return err
	}
	if err := l.sealedBucket(b, "high-water mark", 8); err != nil {
		return err
	}
	var keys []string
	_ = b.ForEach(func(k, _ []byte) error {
		if !strings.HasSuffix(string(k), "/last") {
			keys = append(keys, string(k))
		}
		return nil
	})
	for _, key := range keys {
		before, err := l.readMark(b, key)
		if err != nil {
			return err
		}
		if after, err := l.advanceMark(ctx, b, key, t); err != nil {
			return err
		} else if !after.Equal(before) {
			moved.Marks = after
		}
	}
	return nil
}
