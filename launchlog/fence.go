package launchlog

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/bbolt"

	idstore "github.com/idkit/idkit/store"
)

// A hold's record in the log, and the log's identity:
//
//	bucket  key               value                                        bucket sequence
//	holds   key (string)      token (8 B, BE) | holder (JSON) | CRC-32C     XOR of the CRCs
//	log     "id"              identity (16 B) | CRC-32C                    XOR of the CRCs
//
// A key's token counts its holds: each Hold writes the next, and every
// write through a hold checks, in its transaction, that its token is
// still the key's. The identity is drawn at random by the first write to
// a new file (and again by Log.Adopt); the stamp on the file names it
// (home.go).

// errReplaced reports that the file at the log's path is no longer the
// one a hold locked: replaced, moved away or removed.
var errReplaced = errors.New("the file at the path is no longer the one held")

var identityKey = []byte("id")

// holdRecord is a key's record in the holds bucket.
type holdRecord struct {
	Token uint64
	Holder
}

// readHold returns key's record in b, after checking every record of b;
// the zero record if there is none.
func (l *Log) readHold(b *bbolt.Bucket, key string) (holdRecord, error) {
	if b == nil {
		return holdRecord{}, nil
	}
	if err := l.sealedBucket(b, "hold", -8); err != nil {
		return holdRecord{}, err
	}
	v := b.Get([]byte(key))
	if v == nil {
		return holdRecord{}, nil
	}
	rec := holdRecord{Token: binary.BigEndian.Uint64(v)}
	if err := json.Unmarshal(v[8:len(v)-4], &rec.Holder); err != nil {
		return holdRecord{}, fmt.Errorf("%w: %s: hold of %q: %w", ErrCorrupt, l.path, key, err)
	}
	return rec, nil
}

// takeOver gives the key a new token in the file h.file is open on and
// records its holder there, in one transaction.
func (h *hold) takeOver(holder Holder) error {
	return h.log.runOn(true, h.file, func(tx *bbolt.Tx) error {
		holds, err := createBucket(tx, holdsBucket)
		if err != nil {
			return err
		}
		rec, err := h.log.readHold(holds, h.key)
		if err != nil {
			return err
		}
		h.token = rec.Token + 1
		js, err := json.Marshal(holder)
		if err != nil {
			return fmt.Errorf("launchlog: encode the holder of %q: %w", h.key, err)
		}
		return putSealed(holds, []byte(h.key), append(binary.BigEndian.AppendUint64(nil, h.token), js...))
	})
}

// identity returns the log's identity, drawn at random and written in a
// write transaction tx if the file has none yet.
func (l *Log) identity(tx *bbolt.Tx) ([]byte, error) {
	meta, err := createBucket(tx, logBucket)
	if err != nil {
		return nil, err
	}
	if err := l.checkMeta(meta); err != nil {
		return nil, err
	}
	if v := meta.Get(identityKey); v != nil {
		return bytes.Clone(v[:16]), nil
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id) // never fails
	return id, putSealed(meta, identityKey, id)
}

// checkMeta checks the records of the log bucket: the identity (16
// bytes), the home (32) and the adoptions (JSON), each sealed.
func (l *Log) checkMeta(meta *bbolt.Bucket) error {
	if err := l.sealedBucket(meta, "log record", -16); err != nil {
		return err
	}
	if v := meta.Get(identityKey); v != nil && len(v) != 16+4 {
		return fmt.Errorf("%w: %s: log identity %x, want 20 bytes", ErrCorrupt, l.path, v)
	}
	return nil
}

// fenced checks, in a transaction of the held file, that the hold's token
// is still the key's: else another holder took the key, and this one has
// lost it.
func (h *hold) fenced(tx *bbolt.Tx) error {
	rec, err := h.log.readHold(bucket(tx, holdsBucket), h.key)
	if err != nil {
		return err
	}
	if rec.Token != h.token {
		return h.lose(fmt.Errorf("%w: %s in %s was taken over by %s (hold %d; this one is hold %d): this holder issues no more than the marks it wrote",
			ErrNodeLost, h.key, h.log.path, rec.Holder, rec.Token, h.token))
	}
	return nil
}

// run runs fn in one transaction of the held file, fenced if it writes.
func (h *hold) run(write bool, fn func(*bbolt.Tx) error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.file == nil {
		return fmt.Errorf("%w: %s in %s: the hold is released", ErrNodeLost, h.key, h.log.path)
	}
	if err := h.lostErr.Load(); err != nil {
		return *err
	}
	err := h.log.runOn(write, h.file, func(tx *bbolt.Tx) error {
		if write {
			if err := h.fenced(tx); err != nil {
				return err
			}
		}
		return fn(tx)
	})
	if errors.Is(err, errReplaced) || errors.Is(err, ErrDisplaced) {
		return h.lose(fmt.Errorf("%w: %s in %s: %w", ErrNodeLost, h.key, h.log.path, err))
	}
	return err
}

// scope checks that key is the held key or one below it.
func (h *hold) scope(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if key != h.key && !strings.HasPrefix(key, h.key+"/") {
		return fmt.Errorf("%w: high-water key %q through the hold of %q, want that key or one below it (%q)", ErrInvalid, key, h.key, h.key+"/...")
	}
	return nil
}

// HighWater returns the mark stored for key, the held key or one below
// it, as Log.HighWater does, from the held file.
func (h *hold) HighWater(ctx context.Context, key string) (time.Time, error) {
	if err := h.scope(key); err != nil {
		return time.Time{}, err
	}
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("launchlog: HighWater(%q) in %s: %w", key, h.log.path, err)
	}
	var mark time.Time
	err := h.run(false, func(tx *bbolt.Tx) error {
		var err error
		mark, err = h.log.readMark(bucket(tx, highWaterBucket), key)
		return err
	})
	return mark, err
}

// AdvanceHighWater moves the mark for key, the held key or one below it,
// as Log.AdvanceHighWater does, in the held file and fenced by the hold:
// once another holder has taken the key it fails with ErrNodeLost.
func (h *hold) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	got, err := h.AdvanceHighWaters(ctx, []idstore.Mark{{Key: key, At: t}})
	if err != nil {
		return time.Time{}, err
	}
	return got[0], nil
}

// AdvanceHighWaters moves several marks, of the held key or those below
// it, in one transaction fenced by the hold.
func (h *hold) AdvanceHighWaters(ctx context.Context, marks []idstore.Mark) ([]time.Time, error) {
	for _, m := range marks {
		if err := h.scope(m.Key); err != nil {
			return nil, err
		}
		if err := checkMarkTime(m.At); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("launchlog: AdvanceHighWater(%q) in %s: %w", h.key, h.log.path, err)
	}
	got := make([]time.Time, len(marks))
	err := h.run(true, func(tx *bbolt.Tx) error {
		b, err := createBucket(tx, highWaterBucket)
		if err != nil {
			return err
		}
		for i, m := range marks {
			if got[i], err = h.log.advanceMark(ctx, b, m.Key, m.At); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return got, nil
}
