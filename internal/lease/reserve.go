package lease

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/idkit/idkit/store"
)

// Reservation is the store's part of one Reserve call of a time-based
// scheme (traceid.Reserve, snowflake.Reserve), the same for every scheme;
// the scheme's layout arithmetic is the Plan it runs.
//
// A node's Reserve calls keep its last issued position under Key +
// "/last", as a time that orders like the IDs, beside the lease mark Key
// of its Generators.
type Reservation struct {
	// Store keeps the node's marks: a store, or a claim.
	Store store.HighWater
	// Key is the node's lease mark.
	Key string
	// Node names the node in the scheme's errors, such as
	// "traceid: node 7".
	Node string
	// Fence checks the node's claim, and is nil without one.
	Fence func() error
	// ErrStore and ErrNodeLost are the scheme's sentinels.
	ErrStore, ErrNodeLost error
}

// Plan fills a Reserve call's IDs from the node's last position and its
// lease mark as stored (the zero time where there is none), and returns
// the new last position and the mark that must cover the IDs. It may wait
// for the clock; the node is held meanwhile.
type Plan func(last, mark time.Time) (pos, end time.Time, err error)

// Run holds the node where the store is a store.Holder (a key held
// elsewhere fails with an error of kind idkit.ErrHeld naming the holder),
// reads its position and mark through the hold, runs plan, and moves the
// mark to end and the position to pos, through the hold, whose writes are
// fenced by it: in one write where the store is a store.BatchAdvancer, as
// a launchlog hold is, else the mark first. The claim, if any, is checked
// before the writes and after them. On error the IDs plan made are not to
// be used.
func (r Reservation) Run(ctx context.Context, plan Plan) error {
	lastKey := r.Key + "/last"
	marks, release, err := Hold(ctx, r.Store, r.Key)
	if err != nil && Refused(err) {
		return fmt.Errorf("%s: %w", r.Node, err)
	}
	if err != nil {
		return r.failed(fmt.Sprintf("hold %q", r.Key), err)
	}
	defer release()
	last, err := marks.HighWater(ctx, lastKey)
	if err != nil {
		return r.failed(fmt.Sprintf("read %q", lastKey), err)
	}
	mark, err := marks.HighWater(ctx, r.Key)
	if err != nil {
		return r.failed(fmt.Sprintf("read %q", r.Key), err)
	}
	pos, end, err := plan(last, mark)
	if err != nil {
		return err
	}
	if err := r.fence(); err != nil {
		return err
	}
	var writes []store.Mark
	if mark.IsZero() || mark.Before(end) {
		writes = append(writes, store.Mark{Key: r.Key, At: end})
	}
	writes = append(writes, store.Mark{Key: lastKey, At: pos})
	got, what, err := advance(ctx, marks, writes)
	if err != nil {
		return r.failed(what, err)
	}
	if !got.Equal(pos) {
		return fmt.Errorf("%w: advance %q to %v: the store holds %v, a later position: another call for the node ran at the same time",
			r.ErrStore, lastKey, pos.UTC(), got.UTC())
	}
	return r.fence() // the store calls may have kept the claim waiting
}

// advance moves marks in s, in one write where s is a store.BatchAdvancer,
// and returns the last one as stored; on error, what failed.
func advance(ctx context.Context, s store.HighWater, marks []store.Mark) (got time.Time, what string, err error) {
	if b, ok := s.(store.BatchAdvancer); ok {
		keys := make([]string, len(marks))
		for i, m := range marks {
			keys[i] = strconv.Quote(m.Key)
		}
		all, err := b.AdvanceHighWaters(ctx, marks)
		if err != nil {
			return time.Time{}, "advance " + strings.Join(keys, " and "), err
		}
		return all[len(all)-1], "", nil
	}
	for _, m := range marks {
		if got, err = s.AdvanceHighWater(ctx, m.Key, m.At); err != nil {
			return time.Time{}, fmt.Sprintf("advance %q", m.Key), err
		}
	}
	return got, "", nil
}

func (r Reservation) fence() error {
	if r.Fence == nil {
		return nil
	}
	return r.Fence()
}

func (r Reservation) failed(what string, err error) error {
	return StoreFailed(r.ErrStore, r.ErrNodeLost, r.Fence, what, err)
}
