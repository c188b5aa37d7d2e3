package launchlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"
)

// Launch is one entry of the log: one start of a system, which all of its
// processes share.
type Launch struct {
	ID        int       `json:"id"`         // 1..=MaxLaunch, in order of Begin
	StartedAt time.Time `json:"started_at"` // when Begin ran, in UTC; never before the previous launch
	Ticket    string    `json:"ticket"`     // the release ticket, if any
	By        string    `json:"by"`         // who started the launch
	Note      string    `json:"note"`       // free text
}

// Info describes a launch that Begin is to record.
type Info struct {
	Ticket string // the release ticket in the issue tracker
	By     string // who starts the launch
	Note   string // free text
}

// Begin records a new launch and returns it with the next launch id and
// the current time, read once the file is locked, or the previous launch's
// StartedAt if the clock reads earlier: a later launch never records an
// earlier start. Once launch MaxLaunch exists it fails with
// ErrLaunchesExhausted.
//
// Launches live in the "launches" bucket: the 4-byte big-endian id maps to
// the Launch as JSON; the bucket's sequence is the last id handed out.
func (l *Log) Begin(ctx context.Context, info Info) (Launch, error) {
	if err := ctx.Err(); err != nil {
		return Launch{}, fmt.Errorf("launchlog: Begin in %s: %w", l.path, err)
	}
	var launch Launch
	err := l.update(func(tx *bbolt.Tx) error {
		b, err := createBucket(tx, launchesBucket)
		if err != nil {
			return err
		}
		if err := l.checkLaunches(b); err != nil {
			return err
		}
		last := b.Sequence()
		if last >= MaxLaunch {
			return fmt.Errorf("%w: %s", ErrLaunchesExhausted, l.path)
		}
		launch = Launch{
			ID:        int(last) + 1,
			StartedAt: l.clock.Now().UTC().Round(0),
			Ticket:    info.Ticket,
			By:        info.By,
			Note:      info.Note,
		}
		// The latest launch recorded; checkLaunches put it at or below
		// the sequence.
		if k, v := b.Cursor().Last(); k != nil {
			prev, err := l.decode(k, v)
			if err != nil {
				return err
			}
			if prev.StartedAt.After(launch.StartedAt) {
				launch.StartedAt = prev.StartedAt
			}
		}
		key := idKey(launch.ID)
		v, err := json.Marshal(launch)
		if err != nil {
			return fmt.Errorf("launchlog: encode launch: %w", err)
		}
		if err := b.SetSequence(uint64(launch.ID)); err != nil {
			return err
		}
		return b.Put(key, v)
	})
	if err != nil {
		return Launch{}, err
	}
	return launch, nil
}

// Get returns launch id, or ErrNoLaunch.
func (l *Log) Get(ctx context.Context, id int) (Launch, error) {
	if err := checkLaunch("launch id", id, 1); err != nil {
		return Launch{}, err
	}
	if err := ctx.Err(); err != nil {
		return Launch{}, fmt.Errorf("launchlog: Get(%d) in %s: %w", id, l.path, err)
	}
	var launch Launch
	err := l.view(func(tx *bbolt.Tx) error {
		var v []byte
		var isBucket bool
		if b := bucket(tx, launchesBucket); b != nil {
			if err := l.checkLaunches(b); err != nil {
				return err
			}
			v, isBucket = get(b, idKey(id))
		}
		if v == nil && !isBucket {
			return fmt.Errorf("%w: %d in %s", ErrNoLaunch, id, l.path)
		}
		var err error
		launch, err = l.decode(idKey(id), v)
		return err
	})
	return launch, err
}

// Current returns the latest launch, or ErrNoLaunch if there is none.
func (l *Log) Current(ctx context.Context) (Launch, error) {
	if err := ctx.Err(); err != nil {
		return Launch{}, fmt.Errorf("launchlog: Current in %s: %w", l.path, err)
	}
	var launch Launch
	err := l.view(func(tx *bbolt.Tx) error {
		var k, v []byte
		if b := bucket(tx, launchesBucket); b != nil {
			if err := l.checkLaunches(b); err != nil {
				return err
			}
			k, v = b.Cursor().Last()
		}
		if k == nil {
			return fmt.Errorf("%w: %s holds no launch", ErrNoLaunch, l.path)
		}
		var err error
		launch, err = l.decode(k, v)
		return err
	})
	return launch, err
}

// List returns all launches, oldest first.
func (l *Log) List(ctx context.Context) ([]Launch, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("launchlog: List in %s: %w", l.path, err)
	}
	var launches []Launch
	err := l.view(func(tx *bbolt.Tx) error {
		b := bucket(tx, launchesBucket)
		if b == nil {
			return nil
		}
		if err := l.checkLaunches(b); err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			launch, err := l.decode(k, v)
			launches = append(launches, launch)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return launches, nil
}

// checkLaunches checks that no launch lies beyond the last id handed out,
// so that a damaged sequence cannot hand out an id again.
func (l *Log) checkLaunches(b *bbolt.Bucket) error {
	k, _ := b.Cursor().Last()
	if k == nil {
		return nil
	}
	if len(k) != 4 || uint64(binary.BigEndian.Uint32(k)) > b.Sequence() {
		return fmt.Errorf("%w: %s: launch key %x beyond the last id handed out, %d", ErrCorrupt, l.path, k, b.Sequence())
	}
	return nil
}

// decode reads the launch stored under key k, checking that the record is
// one this package wrote.
func (l *Log) decode(k, v []byte) (Launch, error) {
	var launch Launch
	if len(k) != 4 || v == nil {
		return Launch{}, fmt.Errorf("%w: %s: launch key %x", ErrCorrupt, l.path, k)
	}
	id := int(binary.BigEndian.Uint32(k))
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&launch); err != nil {
		return Launch{}, fmt.Errorf("%w: %s: launch %d: %w", ErrCorrupt, l.path, id, err)
	}
	if launch.ID != id || id < 1 || id > MaxLaunch {
		return Launch{}, fmt.Errorf("%w: %s: launch %d stored under key %d", ErrCorrupt, l.path, launch.ID, id)
	}
	return launch, nil
}
