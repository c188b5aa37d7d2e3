package launchlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"go.etcd.io/bbolt"
)

// A log knows the file it lives in, so that a copy of it, a backup put
// back, or the file of another host is not taken for it:
//
//	bucket  key     value                                                       bucket sequence
//	log     "home"  fs type | fs id | inode | writes | stamped (8 B each) | CRC-32C   XOR of the CRCs
//
// and on the file itself, outside its contents, an extended attribute
// (stampAttr): the log's identity, the writes committed and the writes
// begun. Every write checks both in its transaction: a file that is not
// the one the log was last written through (another inode, another file
// system, or the same inode number without the log's stamp, as a copy
// made after the file was removed may get) is a copy, a restore or a move
// to another disk; a stamp that names another log, or counts more
// committed writes than the contents hold, says the contents were put
// back from an older copy in place. Either way the log refuses with a
// *DisplacedError until Log.Adopt says what happened. A write stamps the
// file as begun before its commit, and as committed after it, so that
// after a crash anywhere the contents lie between the two counts.

var homeKey = []byte("home")

// place names a file: its file system (type and id) and its inode.
type place struct {
	FSType, FSID, Inode uint64
}

// home is the log's home record: the place it was last written through,
// how many writes have counted themselves there, and whether the file
// carries a stamp (its file system keeps extended attributes).
type home struct {
	place
	Writes  uint64
	Stamped bool
}

func (h home) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, h.FSType)
	b = binary.BigEndian.AppendUint64(b, h.FSID)
	b = binary.BigEndian.AppendUint64(b, h.Inode)
	b = binary.BigEndian.AppendUint64(b, h.Writes)
	var stamped uint64
	if h.Stamped {
		stamped = 1
	}
	return binary.BigEndian.AppendUint64(b, stamped)
}

// readHome returns the home record in the log bucket meta (checked by
// the caller), and whether there is one.
func (l *Log) readHome(meta *bbolt.Bucket) (home, bool, error) {
	v := meta.Get(homeKey)
	if v == nil {
		return home{}, false, nil
	}
	if len(v) != 40+4 || binary.BigEndian.Uint64(v[32:]) > 1 {
		return home{}, false, fmt.Errorf("%w: %s: home record %x, want 44 bytes", ErrCorrupt, l.path, v)
	}
	return home{
		place:   place{binary.BigEndian.Uint64(v), binary.BigEndian.Uint64(v[8:]), binary.BigEndian.Uint64(v[16:])},
		Writes:  binary.BigEndian.Uint64(v[24:]),
		Stamped: binary.BigEndian.Uint64(v[32:]) == 1,
	}, true, nil
}

// stamp is what the extended attribute of a log file says: the identity
// of the log last written to it, the writes committed to it and the
// writes begun. The writes its contents count lie between the two.
type stamp struct {
	ID               []byte
	Committed, Begun uint64
}

func (s stamp) encode() []byte {
	b := binary.BigEndian.AppendUint64(bytes.Clone(s.ID), s.Committed)
	return binary.BigEndian.AppendUint64(b, s.Begun)
}

func decodeStamp(b []byte) (stamp, bool) {
	if len(b) != 16+16 {
		return stamp{}, false
	}
	return stamp{ID: bytes.Clone(b[:16]), Committed: binary.BigEndian.Uint64(b[16:]), Begun: binary.BigEndian.Uint64(b[24:])}, true
}

// Displaced says why a log file is not where the log was last written.
type Displaced int

const (
	// Moved: the file is another file than the one the log was last
	// written through: a copy, a backup restored as a new file, a file
	// moved to another file system, or an image layer.
	Moved Displaced = iota + 1
	// RolledBack: the file is the one the log was last written through,
	// but its contents are older than its last writes, or another log's:
	// a backup written back over it.
	RolledBack
	// Replaced: this process wrote the log through another file at the
	// same path, which was removed or replaced since (a cleaner, a new
	// log made in its place, a restore): it writes no more through it.
	Replaced
)

// DisplacedError reports a log file that the log was not last written
// through, or whose contents were put back from an older copy: it would
// hand out again what the other file, or the newer contents, handed out.
// Every write to it is refused until Log.Adopt (the command "idkit launch
// adopt") records what happened. errors.Is finds ErrDisplaced (and
// idkit.ErrRefused) in it.
type DisplacedError struct {
	Path string
	Why  Displaced
	// Was and Now describe the file the log was last written through and
	// this one (Moved).
	Was, Now string
	// Lost counts the writes made to this file that its contents no
	// longer hold (RolledBack); 0 when its contents are another log's.
	Lost uint64
}

func (e *DisplacedError) Error() string {
	switch e.Why {
	case Moved:
		return fmt.Sprintf("launchlog: %s is not the file this log was last written through (that was %s; this is %s): a copy, a backup restored as a new file, or a move to another file system, which would hand out again the launches, generator ids, blocks and seconds the other file hands out; if this file is the log from now on and the other is used no more, run idkit launch adopt --log %s (docs/cli.md, \"A copied or restored log\")",
			e.Path, e.Was, e.Now, e.Path)
	case Replaced:
		return fmt.Sprintf("launchlog: %s is not the file this process wrote the log through: that file was removed or replaced since (a cleaner, a new log made in its place, a restore), and this process may still issue from what it handed out; it writes no more to the log: restart it once the log is in place (a copy or restore: adopt it first, docs/cli.md)", e.Path)
	default:
		what := fmt.Sprintf("its contents are %d writes older than the file", e.Lost)
		if e.Lost == 0 {
			what = "its contents are another log's"
		}
		return fmt.Sprintf("launchlog: %s was written back in place from an older copy (%s): a restored backup, which would hand out again what was handed out since it was taken; run idkit launch adopt --log %s --restored with the last launch, generator ids and blocks your data holds (docs/cli.md, \"A copied or restored log\")",
			e.Path, what, e.Path)
	}
}

func (e *DisplacedError) Unwrap() error { return ErrDisplaced }

// checkHome checks, in the write transaction tx on file, that file is the
// log's home and holds its latest contents, and counts this write in the
// home record and, before the commit, in the stamp on the file as begun.
// It returns the stamp to write once the transaction has committed.
// adopting returns the *DisplacedError in displaced instead of failing,
// and moves the home here all the same.
func (l *Log) checkHome(tx *bbolt.Tx, file *os.File, adopting bool) (after stamp, displaced *DisplacedError, err error) {
	// A log whose contents hold no identity yet gets one in this write:
	// a stamp of another identity that saw no write commit is the first
	// write of this file, begun and cut short by a crash before its
	// commit, which handed out nothing.
	fresh := tx.Bucket(logBucket) == nil || tx.Bucket(logBucket).Get(identityKey) == nil
	id, err := l.identity(tx)
	if err != nil {
		return stamp{}, nil, err
	}
	meta := tx.Bucket(logBucket)
	h, recorded, err := l.readHome(meta)
	if err != nil {
		return stamp{}, nil, err
	}
	if err := l.useLog(file, id); err != nil {
		return stamp{}, nil, err
	}
	here, known := placeOf(file)
	s, hasStamp := readStamp(file)
	switch {
	case recorded && known && here != h.place:
		displaced = &DisplacedError{Path: l.path, Why: Moved, Was: h.place.String(), Now: here.String()}
	case recorded && h.Stamped && !hasStamp:
		displaced = &DisplacedError{Path: l.path, Why: Moved, Was: h.place.String() + ", stamped", Now: here.String() + " without the log's stamp"}
	case hasStamp && !bytes.Equal(s.ID, id) && !(fresh && s.Committed == 0):
		displaced = &DisplacedError{Path: l.path, Why: RolledBack}
	case hasStamp && s.Committed > h.Writes:
		displaced = &DisplacedError{Path: l.path, Why: RolledBack, Lost: s.Committed - h.Writes}
	}
	if displaced != nil && !adopting {
		return stamp{}, displaced, displaced
	}
	if known {
		h.place = here
	}
	// The count goes on past every write the stamp saw begin, one that
	// failed included, and the stamp says what the contents hold now.
	committed := h.Writes
	if hasStamp && bytes.Equal(s.ID, id) {
		h.Writes = max(h.Writes, s.Begun)
	}
	h.Writes++
	// An adoption stamps the file only once it has committed, so that
	// one refused leaves the evidence as it found it.
	h.Stamped = hasStamp
	if displaced == nil {
		begun := stamp{ID: id, Committed: committed, Begun: h.Writes}
		switch err := writeStamp(file, begun); {
		case err == nil:
			h.Stamped = true
		case errors.Is(err, errNoStamp):
			h.Stamped = false
		default:
			return stamp{}, nil, fmt.Errorf("%w %s: stamp the file: %w", ErrWrite, l.path, err)
		}
	}
	if err := putSealed(meta, homeKey, h.encode()); err != nil {
		return stamp{}, nil, err
	}
	if !h.Stamped {
		return stamp{}, displaced, nil
	}
	return stamp{ID: id, Committed: h.Writes, Begun: h.Writes}, displaced, nil
}

// String describes a place for an error: "inode 12 on ext4 (fs id 8c1e…)".
func (p place) String() string {
	return fmt.Sprintf("inode %d on %s file system %016x", p.Inode, fsTypeName(p.FSType), p.FSID)
}

// fsTypeName names the file system types a log is most often found on.
func fsTypeName(t uint64) string {
	switch t {
	case 0xef53:
		return "an ext4"
	case 0x58465342:
		return "an xfs"
	case 0x9123683e:
		return "a btrfs"
	case 0x01021994:
		return "a tmpfs"
	case 0x794c7630:
		return "an overlay"
	case 0x65735546:
		return "a FUSE"
	case 0x2fc12fc1:
		return "a zfs"
	}
	return fmt.Sprintf("a type %#x", t)
}

// errNoStamp reports a file system without extended attributes: the log
// cannot tell a backup written back in place there.
var errNoStamp = errors.New("extended attributes not supported")
