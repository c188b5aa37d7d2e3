package launchlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	idstore "github.com/idkit/idkit/store"

	"go.etcd.io/bbolt"
)

// Begin records a new launch and returns it with the next launch id and
// the current time, read once the file is locked, or the previous launch's
// StartedAt if the clock reads earlier: a later launch never records an
// earlier start. Once launch MaxLaunch exists it fails with
// ErrLaunchesExhausted.
//
// Launches live in the "launches" bucket: the 4-byte big-endian id maps to
// the Launch as JSON; the bucket's sequence is the last id handed out.
func (l *Log) Begin(ctx context.Context, info idstore.Info) (idstore.Launch, error) {
	if err := ctx.Err(); err != nil {
		return idstore.Launch{}, fmt.Errorf("launchlog: Begin in %s: %w", l.path, err)
	}
	var launch idstore.Launch
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
		launch = idstore.Launch{
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
		return idstore.Launch{}, err
	}
	return launch, nil
}

// Get returns launch id, or ErrNoLaunch.
func (l *Log) Get(ctx context.Context, id int) (idstore.Launch, error) {
	if err := checkLaunch("launch id", id, 1); err != nil {
		return idstore.Launch{}, err
	}
	if err := ctx.Err(); err != nil {
		return idstore.Launch{}, fmt.Errorf("launchlog: Get(%d) in %s: %w", id, l.path, err)
	}
	var launch idstore.Launch
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
func (l *Log) Current(ctx context.Context) (idstore.Launch, error) {
	if err := ctx.Err(); err != nil {
		return idstore.Launch{}, fmt.Errorf("launchlog: Current in %s: %w", l.path, err)
	}
	var launch idstore.Launch
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
func (l *Log) List(ctx context.Context) ([]idstore.Launch, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("launchlog: List in %s: %w", l.path, err)
	}
	var launches []idstore.Launch
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
func (l *Log) decode(k, v []byte) (idstore.Launch, error) {
	var launch idstore.Launch
	if len(k) != 4 || v == nil {
		return idstore.Launch{}, fmt.Errorf("%w: %s: launch key %x", ErrCorrupt, l.path, k)
	}
	id := int(binary.BigEndian.Uint32(k))
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&launch); err != nil {
		return idstore.Launch{}, fmt.Errorf("%w: %s: launch %d: %w", ErrCorrupt, l.path, id, err)
	}
	if launch.ID != id || id < 1 || id > MaxLaunch {
		return idstore.Launch{}, fmt.Errorf("%w: %s: launch %d stored under key %d", ErrCorrupt, l.path, launch.ID, id)
	}
	return launch, nil
}
