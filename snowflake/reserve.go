package snowflake

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/lease"
)

// reserveMaxWait bounds each wait of Reserve for the clock to reach the
// next tick.
const reserveMaxWait = 5 * time.Second

// Reserve fills dst with new IDs for a short-lived process, such as a
// command-line call or a serverless function, that cannot afford a
// Generator's wait for a fresh tick. It needs o.Store (or o.Claim),
// where it keeps the node's last issued position under the key
// o.StoreKey + "/last" as a time that orders like the IDs: the start of the last ID's tick plus its
// sequence in nanoseconds when every sequence is shorter than a tick
// (Twitter: 4,096 < 1 ms), else the ID itself as Unix nanoseconds (an ID
// of one node orders by tick, then sequence, and is below 2^63, so it
// always fits).
//
// The IDs continue right after the last position: in the current tick if
// the clock has passed the last one's tick, else in that tick (the same
// tick, or a clock stepped back: Reserve ignores ClockPolicy, MaxWait and
// MaxContinue and always continues). If a Generator ran before for the
// node, they also start at the first tick its lease mark (o.StoreKey) does
// not cover, at once, even when the mark is ahead of the clock. The node's
// first call, with nothing in the store yet, begins in the next tick,
// without waiting: a run without a store may have issued IDs in the current
// one.
//
// Before returning, Reserve records the new last position durably and
// moves the lease mark to the end of its tick, so that a Generator started
// later begins after the reserved IDs. On error nothing is reserved and dst
// holds no IDs to use.
//
// When a tick's sequence runs out mid-batch, Reserve goes on in the next
// tick only once the clock has reached it: it waits for it (at most 5 s
// each time; a clock further behind fails with ErrExhausted), or fails with
// ErrExhausted at once under ExhaustError. ExhaustBorrow waits like
// ExhaustWait. SequenceStart applies to each fresh tick.
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
// run at the same time. Reserve ignores o.Lease and o.MaxLead.
func Reserve(ctx context.Context, o Options, dst []ID) error {
	if o.Store == nil && o.Claim == nil {
		return fmt.Errorf("%w: Options.Store and Options.Claim are nil, want one: Reserve keeps the last issued ID in the store, or in the claim", ErrInvalid)
	}
	l, err := o.check()
	if err != nil {
		return err
	}
	store := o.Store
	if o.Claim != nil {
		store = o.Claim
	}
	node, err := l.node(o.Node, "Options.Node")
	if err != nil {
		return err
	}
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	o.StoreKey = cmp.Or(o.StoreKey, defaultKey(l, o.Node))
	if len(dst) == 0 {
		return nil
	}
	r := &reserver{o: o, l: l, node: node, maxSeq: uint64(l.PerTick() - 1), maxTick: 1<<l.TimeBits - 1}
	r.asTime = r.maxSeq < uint64(l.Unit)

	now := o.Clock.Now()
	if err := r.fence(now); err != nil {
		return err
	}
	if now.Before(l.Epoch) {
		return fmt.Errorf("%w: clock reads %v, before layout %s's Epoch %v", ErrInvalid, now.UTC(), l.label(), l.Epoch.UTC())
	}
	if !now.Before(l.Expires()) {
		return fmt.Errorf("%w: layout %s expired at %v (clock reads %v)", ErrExpired, l.label(), l.Expires(), now.UTC())
	}
	clockTick, _ := l.tickOf(now)
	res := lease.Reservation{
		Store: store, Key: o.StoreKey, Node: "snowflake",
		Fence:    func() error { return r.fence(o.Clock.Now()) },
		ErrStore: ErrStore, ErrNodeLost: ErrNodeLost,
	}
	return res.Run(ctx, func(last, mark time.Time) (pos, end time.Time, err error) {
		tick, seq, err := r.fill(dst, clockTick, last, mark)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		return r.encode(tick, seq, dst[len(dst)-1]), l.tickTime(tick + 1), nil
	})
}

// fill fills dst with the IDs after the node's last position and lease
// mark (zero for none), from the clock's tick clockTick, and returns the
// tick and sequence of the last.
func (r *reserver) fill(dst []ID, clockTick uint64, last, mark time.Time) (tick, seq uint64, err error) {
	l := r.l
	ts, ns, ss := l.shifts()
	node := uint64(r.node)
	// tick, seq: the next position to issue.
	tick, seq = clockTick, r.start()
	var lastTick uint64
	hasLast := !last.IsZero()
	if !hasLast && mark.IsZero() {
		// The node's first use of the store: a run without a store may
		// have issued in this tick, never in a later one.
		tick++
	}
	if hasLast {
		lt, ls, err := r.decode(last)
		if err != nil {
			return 0, 0, fmt.Errorf("%w: %q holds %v: %w", ErrStore, r.o.StoreKey+"/last", last.UTC(), err)
		}
		lastTick = lt
		if lt >= clockTick {
			tick, seq = lt, ls+1
		}
	}
	// A Generator may have issued in every tick that begins before its
	// mark; a mark of Reserve's own ends the last tick.
	if free := markEnd(l, mark); (!hasLast || free > lastTick+1) && free > tick {
		tick, seq = free, r.start()
	}
	for i := range dst {
		if seq > r.maxSeq {
			if tick, err = r.nextTick(tick); err != nil {
				return 0, 0, err
			}
			seq = r.start()
		}
		if tick > r.maxTick {
			return 0, 0, fmt.Errorf("%w: layout %s expired at %v", ErrExpired, l.label(), l.Expires())
		}
		dst[i] = ID(tick<<ts | node<<ns | seq<<ss)
		seq++
	}
	return tick, seq - 1, nil
}

type reserver struct {
	o       Options
	l       Layout
	node    uint64
	maxSeq  uint64
	maxTick uint64
	asTime  bool // positions are tick start + sequence ns, else the ID
}

func (r *reserver) start() uint64 {
	if r.o.SequenceStart == StartRandom {
		return rand.Uint64N(min(10, r.maxSeq+1))
	}
	return 0
}

func (r *reserver) encode(tick, seq uint64, id ID) time.Time {
	if r.asTime {
		return r.l.tickTime(tick).Add(time.Duration(seq))
	}
	return time.Unix(0, int64(id)).UTC()
}

func (r *reserver) decode(t time.Time) (tick, seq uint64, err error) {
	if !r.asTime {
		p, err := r.l.Decode(ID(t.UnixNano()))
		if err != nil {
			return 0, 0, err
		}
		return uint64(p.Tick), uint64(p.Sequence), nil
	}
	tick, err = r.l.tickOf(t)
	if err != nil {
		return 0, 0, err
	}
	seq = uint64(t.Sub(r.l.tickTime(tick)))
	if seq > r.maxSeq {
		return 0, 0, fmt.Errorf("%w: sequence %d, want 0 to %d", ErrInvalid, seq, r.maxSeq)
	}
	return tick, seq, nil
}

// nextTick returns the clock's tick once it is past tick.
func (r *reserver) nextTick(tick uint64) (uint64, error) {
	for {
		now := r.o.Clock.Now()
		if ct, err := r.l.tickOf(now); err == nil && ct > tick {
			return ct, nil
		}
		wait := r.l.tickTime(tick + 1).Sub(now)
		if r.o.ExhaustPolicy == ExhaustError || wait > reserveMaxWait {
			return 0, fmt.Errorf("%w: tick %d issued all %d IDs and the clock reaches the next in %v (at most %v is waited for)",
				ErrExhausted, tick, r.maxSeq+1, wait, reserveMaxWait)
		}
		r.o.Clock.Sleep(wait)
		if err := r.fence(r.o.Clock.Now()); err != nil {
			return 0, err
		}
	}
}

func (r *reserver) fence(now time.Time) error {
	if r.o.Claim == nil {
		return nil
	}
	if err := r.o.Claim.Check(now.Add(clock.CoarseLag)); err != nil {
		return lease.NodeLost(ErrNodeLost, err)
	}
	return nil
}
