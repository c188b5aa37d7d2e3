package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// maxSkewRecords bounds the holders' records that the clock check reads.
const maxSkewRecords = 64

// checkSkew refuses this host's clock, with ErrClockSkew, when it is
// further than bound from the median of the live holders' clocks in the
// space dir.
//
// Every holder rewrites its record, with its clock, each Interval. A quick
// look at the records is good to half an Interval for holders that are
// alive; but the record of a holder that died or was cut off ages until
// its lease expires, and reads as if this clock were ahead, and enough such
// records could hide a clock that is behind. So the quick look only
// accepts: when the median puts this clock within the bound and no record
// puts it behind. Otherwise the check watches the space for up to the
// longest Interval and measures against the records rewritten meanwhile,
// by holders that are alive, each to within the time its write took to
// arrive; only that measure refuses. A space whose holders rewrite nothing
// in that time has no live holder to compare with.
func (s *Session) checkSkew(ctx context.Context, bound time.Duration) error {
	if bound < 0 {
		return nil
	}
	dir := s.prefix + "holders/"
	resp, err := request(ctx, s.timeout, "read the holders' clocks", func(ctx context.Context) (*clientv3.GetResponse, error) {
		return s.cli.Get(ctx, dir, clientv3.WithPrefix(), clientv3.WithLimit(maxSkewRecords))
	})
	if err != nil {
		return err
	}
	now := s.clock.Now()
	var quick []time.Duration
	var wait time.Duration
	stale := make(map[string]bool) // records not yet rewritten
	for _, kv := range resp.Kvs {
		rec, ok := decodeRecord(kv.Value)
		if !ok {
			continue
		}
		quick = append(quick, now.Sub(rec.Clock)-rec.Interval/2)
		wait = max(wait, rec.Interval)
		stale[string(kv.Key)] = true
	}
	if len(quick) == 0 {
		return nil
	}
	if m := median(quick); m >= -bound && m <= bound && slices.Min(quick) >= -bound {
		return nil
	}
	fresh, err := s.freshOffsets(ctx, dir, resp.Header.Revision+1, wait+s.attemptTimeout(), stale)
	if err != nil {
		return err
	}
	if len(fresh) == 0 {
		return nil
	}
	if m := median(fresh); m < -bound || m > bound {
		return fmt.Errorf("%w: this host's clock reads %v from the median of %d live holders' clocks, want within ±%v",
			ErrClockSkew, m.Round(time.Millisecond), len(fresh), bound)
	}
	return nil
}

// freshOffsets watches dir from revision rev for up to wait, until every
// record in stale has been rewritten or deleted, and returns this clock's
// offset from each record rewritten meanwhile, measured as it arrives.
func (s *Session) freshOffsets(ctx context.Context, dir string, rev int64, wait time.Duration, stale map[string]bool) ([]time.Duration, error) {
	ctx, cancel := context.WithTimeout(clientv3.WithRequireLeader(ctx), wait)
	defer cancel()
	latest := make(map[string]time.Duration)
	for wr := range s.cli.Watch(ctx, dir, clientv3.WithPrefix(), clientv3.WithRev(rev)) {
		if err := wr.Err(); err != nil {
			return nil, etcdError("watch the holders' clocks", err)
		}
		for _, ev := range wr.Events {
			key := string(ev.Kv.Key)
			delete(stale, key)
			if ev.Type != clientv3.EventTypePut {
				delete(latest, key)
				continue
			}
			if rec, ok := decodeRecord(ev.Kv.Value); ok && len(latest) < maxSkewRecords {
				latest[key] = s.clock.Now().Sub(rec.Clock)
			}
		}
		if len(stale) == 0 {
			break
		}
	}
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return nil, etcdError("watch the holders' clocks", err)
	}
	offsets := make([]time.Duration, 0, len(latest))
	for _, d := range latest {
		offsets = append(offsets, d)
	}
	return offsets, nil
}

// decodeRecord reads a holder's record, if it is one with a clock.
func decodeRecord(v []byte) (Record, bool) {
	var rec Record
	if json.Unmarshal(v, &rec) != nil || rec.Clock.IsZero() {
		return Record{}, false
	}
	return rec, true
}

// median returns the median of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}
