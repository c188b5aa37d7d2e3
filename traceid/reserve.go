package traceid

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/lease"
)

// reserveMaxWait bounds each wait of Reserve for the clock to reach the
// next second.
const reserveMaxWait = 5 * time.Second

// Reserve fills dst with new IDs for a short-lived process, such as a
// command-line call or a serverless function, that cannot afford a
// Generator's wait for a fresh second. It needs o.Store (or o.Claim),
// where it keeps the node's last issued position (second and low 22
// bits) under the key o.StoreKey + "/last", as time.Unix(second, low),
// which orders like the IDs even across the wrap of the 25-bit second.
//
// The IDs continue right after the last position: in the current second if
// the clock has passed the last one's second, else in that second (the
// same second, or a clock stepped back). If a Generator ran before for the
// node, they also start after the seconds its lease mark (o.StoreKey)
// covers, at once, even when the mark is ahead of the clock: such IDs carry
// a second up to the lease ahead of the clock rather than wait for it.
// The node's first call, with nothing in the store yet, waits for the next
// second and begins there, as a run without a store does: a run without a
// store earlier in the current second may have issued IDs in it. Under
// o.NoWait it fails with ErrExhausted instead. Once a node uses the store,
// every run for it must: a run without the store knows nothing of the
// positions kept there. Thread bits only change which low values are
// skipped (those with a counter of 0).
//
// Before returning, Reserve records the new last position durably and
// moves the lease mark to its second, so that a Generator started later
// begins after the reserved IDs. On error nothing is reserved and dst
// holds no IDs to use.
//
// When a second's 4,194,303 low values run out mid-batch, Reserve goes on
// in the next second only once the clock has reached it: it waits for it
// (at most 5 s each time; a clock further behind fails with ErrExhausted),
// or fails with ErrExhausted at once under o.NoWait. ctx ends a wait with
// its error.
//
// With o.Claim, the claim keeps the position and the mark instead of
// o.Store (which must then be nil), and is checked at the start, after
// each wait, before the store is written and after: the IDs are good only
// if the claim holds when Reserve returns them.
//
// A store that is a store.Holder, such as launchlog.Log, is held from
// the read of the last position to its advance, so that calls for one
// node never overlap, in this process or another: a call that finds the
// node held (by another call, or by a Generator) fails with an error of
// kind idkit.ErrHeld that names the holder. With another store, calls for
// one node must not overlap in time, as Generators for one node must not
// run at the same time. Reserve ignores o.Lease.
func Reserve(ctx context.Context, o Options, dst []ID) error {
	if o.Store == nil && o.Claim == nil {
		return fmt.Errorf("%w: Options.Store and Options.Claim are nil, want one: Reserve keeps the last issued ID in the store, or in the claim", ErrInvalid)
	}
	if err := o.check(); err != nil {
		return err
	}
	store := o.Store
	if o.Claim != nil {
		store = o.Claim
	}
	if len(dst) == 0 {
		return nil
	}
	r := reserver{o: o, mask: 1<<(LowBits-o.ThreadBits) - 1}
	if err := r.fence(); err != nil {
		return err
	}
	now, err := r.now()
	if err != nil {
		return err
	}
	res := lease.Reservation{
		Store: store, Key: o.StoreKey, Node: fmt.Sprintf("traceid: node %d", o.Node),
		Fence: r.fence, ErrStore: ErrStore, ErrNodeLost: ErrNodeLost,
	}
	return res.Run(ctx, func(last, mark time.Time) (pos, end time.Time, err error) {
		sec, err := r.fill(ctx, dst, now, last, mark)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		return time.Unix(sec, r.low), time.Unix(sec, 0), nil
	})
}

// fill fills dst with the IDs after the node's last position and lease
// mark (zero for none), from the clock's second now, and returns the
// second of the last; r.low is its low value.
func (r *reserver) fill(ctx context.Context, dst []ID, now int64, last, mark time.Time) (int64, error) {
	// sec, low: the position last used.
	sec, low := now, int64(0)
	if last.IsZero() && mark.IsZero() {
		// The node's first use of the store: a run without a store may
		// have issued IDs in the current second. Begin in the next, once
		// the clock is in it, so that the IDs decode to their time.
		if r.o.NoWait {
			return 0, fmt.Errorf("%w: node %d's first call with the store waits for the next second, and Options.NoWait is set", ErrExhausted, r.o.Node)
		}
		var err error
		if sec, err = r.nextSecond(ctx, now); err != nil {
			return 0, err
		}
	}
	if !last.IsZero() {
		if s := last.Unix(); s >= now {
			sec, low = s, int64(last.Nanosecond())
		}
	}
	// A Generator may have issued in every second up to its mark.
	if !mark.IsZero() && mark.Unix() >= sec && (last.IsZero() || mark.Unix() > last.Unix()) {
		sec, low = mark.Unix()+1, 0
	}
	for i := range dst {
		low++
		if low&int64(r.mask) == 0 {
			low++ // counter 0 of a thread: never issued
		}
		if low > maxLow {
			var err error
			if sec, err = r.nextSecond(ctx, sec); err != nil {
				return 0, err
			}
			low = 1
		}
		if sec > math.MaxUint32 {
			return 0, fmt.Errorf("%w: second %d, want one before 2106", ErrInvalid, sec)
		}
		dst[i] = ID(sec&secondMask)<<secondShift | ID(r.o.Node)<<LowBits | ID(low)
	}
	r.low = low
	return sec, nil
}

type reserver struct {
	o    Options
	mask uint32
	low  int64 // the low value of the last ID filled
}

func (r *reserver) now() (int64, error) {
	t := r.o.Clock.Now()
	if s := t.Unix(); s >= 0 && s <= math.MaxUint32 {
		return s, nil
	}
	return 0, fmt.Errorf("%w: clock reads %v, want a time from 1970 to 2106", ErrInvalid, t)
}

// nextSecond returns sec+1 once the clock has reached it, waiting under
// ctx.
func (r *reserver) nextSecond(ctx context.Context, sec int64) (int64, error) {
	for {
		now := r.o.Clock.Now()
		if now.Unix() > sec {
			return sec + 1, nil
		}
		wait := time.Unix(sec+1, 0).Sub(now)
		if r.o.NoWait || wait > reserveMaxWait {
			return 0, fmt.Errorf("%w: second %d is used up and the clock reaches the next in %v (at most %v is waited for)",
				ErrExhausted, sec, wait, reserveMaxWait)
		}
		if err := clock.SleepContext(ctx, r.o.Clock, wait); err != nil {
			return 0, err
		}
		if err := r.fence(); err != nil {
			return 0, err
		}
	}
}

func (r *reserver) fence() error {
	if r.o.Claim == nil {
		return nil
	}
	if err := r.o.Claim.Check(r.o.Clock.Now().Add(clock.CoarseLag)); err != nil {
		return lease.NodeLost(ErrNodeLost, err)
	}
	return nil
}
