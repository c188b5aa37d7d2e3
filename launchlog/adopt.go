package launchlog

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	"github.com/idkit/idkit/internal/safefile"
)

// DefaultAdoptMargin is how far past the time of a restore Adopt moves
// the high-water marks when AdoptOptions.Margin is zero: longer than the
// lease of any generator at its default (1 s).
const DefaultAdoptMargin = 10 * time.Second

// AdoptOptions say what happened to a displaced log (Log.Adopt): it was
// moved whole, or it is a restored copy, older than what its log handed
// out, and these are the last values handed out.
type AdoptOptions struct {
	// Moved says that this file holds everything the log handed out: it
	// was moved or copied whole (to another disk, another host) while no
	// process used it, and the file it came from is used no more. Nothing
	// is moved then. A log whose contents are known to be older than its
	// file (a backup written back in place) cannot be adopted as moved.
	Moved bool
	// Counters are, for a restored log (Moved false), the last values
	// handed out, from the data that its IDs went to (see docs/cli.md):
	// Launch is required if the log holds launches, and Blocks for each
	// of its segment tags. The generator ids of each launch that
	// Counters.Generators does not name are ended, so that decimalid
	// generators take a new launch. Marks is moved to at least the time
	// of the call plus Margin.
	Counters Counters
	// Margin is how far past now every high-water mark of a restored log
	// is moved, so that traceid, snowflake and flake128 start after every
	// unit that a generator on the lost file could have leased: at least
	// the longest lease in use. Zero means DefaultAdoptMargin.
	Margin time.Duration
	// By and Note are recorded with the adoption: who, and why.
	By, Note string
}

// Adoption is the record of one adoption, kept in the log.
type Adoption struct {
	At    time.Time `json:"at"`
	By    string    `json:"by,omitempty"`
	Note  string    `json:"note,omitempty"`
	Why   string    `json:"why"`            // what the log found: "moved", "rolled back"
	Moved bool      `json:"moved"`          // adopted as moved whole
	Was   string    `json:"was,omitempty"`  // the file the log was last written through, when moved
	Now   string    `json:"now,omitempty"`  // the file it lives in from now on
	Ended []int     `json:"ended,omitzero"` // launches whose generator ids were ended
	// Advanced holds the counters the adoption moved.
	Advanced Counters `json:"advanced,omitzero"`
}

var adoptedPrefix = "adopted/"

// Adopt makes the log's file its home once a person has said what
// happened to it: a log that finds itself in another file than the one
// it was last written through (a copy, a backup restored as a new file, a
// move to another file system, an image layer), or whose contents were
// written back from an older copy in place, refuses every write with a
// *DisplacedError until then.
//
// As moved (o.Moved), the log goes on as it is. As restored, it moves
// past everything the lost file could have handed out, from what it
// knows and what o says: its marks to now plus o.Margin, its launch
// counter and every block tag's last ID to o.Counters (required: it
// refuses, naming each one missing, rather than guess), and it ends the
// generator ids of every launch that o.Counters.Generators does not name.
// It records the adoption in the log, and returns it.
//
// Like AdvanceCounters, it refuses while any key recorded in the log is
// held, or while another process writes the log's path through another
// file: stop every process that uses the log first. A log whose file is
// its home has nothing to adopt (ErrInvalid): a restore the log cannot
// tell is moved past with AdvanceCounters.
func (l *Log) Adopt(ctx context.Context, o AdoptOptions) (Adoption, error) {
	if err := o.Counters.check(); err != nil {
		return Adoption{}, err
	}
	if o.Margin < 0 || o.Margin > 24*time.Hour {
		return Adoption{}, fmt.Errorf("%w: AdoptOptions.Margin = %v, want 0 (for %v) to 24h", ErrInvalid, o.Margin, DefaultAdoptMargin)
	}
	if o.Margin == 0 {
		o.Margin = DefaultAdoptMargin
	}
	if o.Moved && !o.Counters.isZero() {
		return Adoption{}, fmt.Errorf("%w: AdoptOptions.Moved with Counters: a log moved whole needs no counters, a restored one is not moved", ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return Adoption{}, fmt.Errorf("launchlog: Adopt %s: %w", l.path, err)
	}
	if empty, err := l.missing(); err != nil {
		return Adoption{}, err
	} else if empty {
		return Adoption{}, fmt.Errorf("%w: %s: no log to adopt", ErrInvalid, l.path)
	}
	f, err := safefile.OpenFile(l.path, os.O_RDWR, l.mode)
	if err != nil {
		return Adoption{}, l.fileError(err)
	}
	defer f.Close()
	unlock, err := l.lockRecordedKeys(f)
	if err != nil {
		return Adoption{}, err
	}
	defer unlock()
	var a Adoption
	err = l.runTx(adoptTx, f, func(tx *bbolt.Tx, displaced *DisplacedError) error {
		if displaced == nil {
			return fmt.Errorf("%w: %s is the file this log was last written through, with its latest contents: nothing to adopt (a restore that the log cannot tell, such as one that kept the file's extended attributes, is moved past with idkit launch advance)", ErrInvalid, l.path)
		}
		a = Adoption{At: l.clock.Now().UTC().Round(0), By: o.By, Note: o.Note, Moved: o.Moved, Was: displaced.Was, Now: displaced.Now}
		switch displaced.Why {
		case Moved:
			a.Why = "moved"
		default:
			a.Why = "rolled back"
			if o.Moved {
				return fmt.Errorf("%w: %s cannot be adopted as moved: its contents are older than its file (%v); adopt it as restored, with the counters your data holds", ErrInvalid, l.path, displaced)
			}
		}
		if o.Moved {
			return l.recordAdoption(tx, a)
		}
		if err := l.checkRestoreCounters(tx, o.Counters); err != nil {
			return err
		}
		c := o.Counters
		// now + Margin, up to the next whole second
		if mark := a.At.Add(o.Margin + time.Second - 1).Truncate(time.Second); c.Marks.Before(mark) {
			c.Marks = mark
		}
		if err := l.advanceLaunch(tx, c.Launch, &a.Advanced); err != nil {
			return err
		}
		if err := l.advanceGenerators(tx, c.Generators, &a.Advanced); err != nil {
			return err
		}
		ended, err := l.endGenerators(tx, c.Generators)
		if err != nil {
			return err
		}
		a.Ended = ended
		if err := l.advanceBlocks(tx, c.Blocks, &a.Advanced); err != nil {
			return err
		}
		if err := l.advanceMarks(ctx, tx, c.Marks, &a.Advanced); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return l.recordAdoption(tx, a)
	})
	if err != nil {
		return Adoption{}, err
	}
	return a, nil
}

func (c Counters) isZero() bool {
	return c.Launch == 0 && len(c.Generators) == 0 && len(c.Blocks) == 0 && c.Marks.IsZero()
}

// checkRestoreCounters refuses a restore whose counters leave out a
// counter the log holds, and names every one missing.
func (l *Log) checkRestoreCounters(tx *bbolt.Tx, c Counters) error {
	var missing []string
	if b := bucket(tx, launchesBucket); b != nil && b.Sequence() > 0 && c.Launch == 0 {
		missing = append(missing, fmt.Sprintf("the last launch id (it holds launches up to %d; --launch N)", b.Sequence()))
	}
	if b := bucket(tx, blocksBucket); b != nil {
		_ = b.ForEach(func(k, _ []byte) error {
			if _, ok := c.Blocks[string(k)]; !ok {
				missing = append(missing, fmt.Sprintf("the largest ID of segment tag %q (--block %s=ID)", k, k))
			}
			return nil
		})
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s is a restored copy, older than what its log handed out; it cannot know, and will not guess, %s: read them from your data (docs/cli.md, \"A copied or restored log\")",
			ErrInvalid, l.path, strings.Join(missing, ", "))
	}
	return nil
}

// endGenerators hands out the last generator id of every launch that
// keep does not name: a restored log cannot know which ones the lost file
// handed out since, so decimalid generators take a new launch.
func (l *Log) endGenerators(tx *bbolt.Tx, keep map[int]int) ([]int, error) {
	b, err := createBucket(tx, generatorsBucket)
	if err != nil {
		return nil, err
	}
	if err := l.sealedBucket(b, "generator counter", 4); err != nil {
		return nil, err
	}
	var ended []int
	var keys [][]byte
	_ = b.ForEach(func(k, _ []byte) error {
		if _, ok := keep[int(binary.BigEndian.Uint32(k))]; !ok {
			keys = append(keys, k)
		}
		return nil
	})
	for _, k := range keys {
		launch := int(binary.BigEndian.Uint32(k))
		if binary.BigEndian.Uint32(b.Get(k)) == MaxGenerator+1 {
			continue
		}
		if err := putSealed(b, k, binary.BigEndian.AppendUint32(nil, MaxGenerator+1)); err != nil {
			return nil, err
		}
		ended = append(ended, launch)
	}
	slices.Sort(ended)
	return ended, nil
}

// recordAdoption keeps a in the log bucket, after the adoptions before it.
func (l *Log) recordAdoption(tx *bbolt.Tx, a Adoption) error {
	meta := tx.Bucket(logBucket)
	n := 0
	c := meta.Cursor()
	for k, _ := c.Seek([]byte(adoptedPrefix)); k != nil && strings.HasPrefix(string(k), adoptedPrefix); k, _ = c.Next() {
		n++
	}
	js, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("launchlog: encode the adoption: %w", err)
	}
	return putSealed(meta, fmt.Appendf(nil, "%s%05d", adoptedPrefix, n+1), js)
}

// Adoptions returns the log's adoptions, oldest first.
func (l *Log) Adoptions(ctx context.Context) ([]Adoption, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("launchlog: Adoptions in %s: %w", l.path, err)
	}
	var out []Adoption
	err := l.view(func(tx *bbolt.Tx) error {
		meta := bucket(tx, logBucket)
		if meta == nil {
			return nil
		}
		if err := l.checkMeta(meta); err != nil {
			return err
		}
		c := meta.Cursor()
		for k, v := c.Seek([]byte(adoptedPrefix)); k != nil && strings.HasPrefix(string(k), adoptedPrefix); k, v = c.Next() {
			var a Adoption
			if err := json.Unmarshal(v[:len(v)-4], &a); err != nil {
				return fmt.Errorf("%w: %s: adoption %s: %w", ErrCorrupt, l.path, k, err)
			}
			out = append(out, a)
		}
		return nil
	})
	return out, err
}
