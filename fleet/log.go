package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/store"
)

const (
	// maxMarkKey is the longest high-water key, launchlog's limit (bbolt's
	// MaxKeySize), so that a key valid in one backend is valid in the other.
	maxMarkKey = 32768
	// markLayout is how a mark is stored: UTC, nanoseconds always written.
	markLayout = "2006-01-02T15:04:05.000000000Z"
	// maxHints bounds the cache of last-seen counters and marks.
	maxHints = 1024
)

// LogOptions configure a Log.
type LogOptions struct {
	// Client is the etcd client the log uses. It is required; the log
	// never closes it.
	Client *clientv3.Client
	// Prefix comes before every key the log writes, as is (end it with a
	// slash). Empty means "idkit/". Logs with the same prefix on one etcd
	// cluster share one launch log.
	Prefix string
	// Timeout bounds one operation, retries included; each attempt gets a
	// quarter of it, at least a second. Zero means 5s; a negative timeout
	// is invalid.
	Timeout time.Duration
	// Clock stamps Launch.StartedAt. Nil means the system clock; tests pass
	// a fake one.
	Clock clock.Clock
}

// Log is a launch log kept in etcd: the twin of launchlog.Log for fleets
// larger than one host, with the same methods, limits and errors
// (launchlog's sentinels), so that *Log serves store.Generators,
// store.HighWater and segment.BlockStore as launchlog.Log does.
//
// Its keys live under LogOptions.Prefix (P below):
//
//	P launches/last           the last launch id handed out, decimal ("17")
//	P launches/00001..99999   a launch as JSON {"id","started_at","ticket","by","note"}
//	P generators/00000..99999 the next generator id of a launch, decimal, 1 to 100000
//	P highwater/<key>         a high-water mark, UTC, "2006-01-02T15:04:05.000000000Z"
//	P blocks/<tag>            the last ID reserved for a segment tag, decimal ("3000")
//
// Ids in keys have five digits so that keys sort as numbers. The node
// claims of this package use the subtrees nodes/ and clocks/.
//
// Every write is one etcd transaction guarded by comparisons of the keys
// it read (ModRevision, CreateRevision); when another writer got there
// first, the transaction changes nothing and the method reads again and
// retries. A value is handed out only after etcd committed it, so callers
// on any number of hosts never receive the same launch id or generator
// id, and a mark never moves backwards. A transaction whose outcome is
// unknown (etcd did not answer) may lose a value, never repeat one: a
// generator id that no caller received, or a launch recorded that no
// caller received.
//
// Reads are linearizable: they need a quorum as writes do. An operation
// that gets no answer within LogOptions.Timeout fails with an error
// wrapping ErrUnavailable; a value under the prefix that this package did
// not write gives ErrCorrupt; an argument out of range gives an error
// wrapping both launchlog.ErrInvalid and ErrInvalid.
//
// A Log is safe for concurrent use.
type Log struct {
	cli     *clientv3.Client
	prefix  string
	timeout time.Duration
	clock   clock.Clock

	// hints hold the last state seen of generator counters, marks and
	// block marks, so that a write can guess the revision it compares
	// against and take one round trip instead of two. A wrong guess costs
	// what a read would.
	mu         sync.Mutex
	generators map[int]counterState
	marks      map[string]markState
	blocks     map[string]blockState
}

// counterState is a generator counter as read: next id and ModRevision
// (zero: no key).
type counterState struct {
	next int
	mod  int64
}

// markState is a mark as read: Unix nanoseconds and ModRevision (zero: no
// key, and then n means nothing).
type markState struct {
	n   int64
	mod int64
}

// NewLog returns a Log on o.Client. It does not contact etcd; the first
// operation reports an unreachable cluster.
func NewLog(o LogOptions) (*Log, error) {
	if o.Client == nil {
		return nil, logInvalidf("LogOptions.Client is nil, want an etcd client")
	}
	if o.Timeout < 0 {
		return nil, logInvalidf("LogOptions.Timeout = %v, want > 0 (or 0 for %v)", o.Timeout, DefaultTimeout)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Clock == nil {
		o.Clock = clock.System()
	}
	return &Log{
		cli:        o.Client,
		prefix:     o.Prefix,
		timeout:    o.Timeout,
		clock:      o.Clock,
		generators: make(map[int]counterState),
		marks:      make(map[string]markState),
		blocks:     make(map[string]blockState),
	}, nil
}

// Prefix returns the prefix of the log's keys.
func (l *Log) Prefix() string { return l.prefix }

func (l *Log) lastKey() string            { return l.prefix + "launches/last" }
func (l *Log) launchKey(id int) string    { return fmt.Sprintf("%slaunches/%05d", l.prefix, id) }
func (l *Log) generatorKey(id int) string { return fmt.Sprintf("%sgenerators/%05d", l.prefix, id) }
func (l *Log) markKey(key string) string  { return l.prefix + "highwater/" + key }

// markWriterKey is where a claim records, in the transaction that writes
// the mark for key, its lease and token: the writer of the
// mark's current value when both keys share a ModRevision.
func (l *Log) markWriterKey(key string) string { return l.prefix + "highwater-writer/" + key }
func (l *Log) launchesRange() (string, string) {
	// Five-digit ids sort between "0" and ":", the byte after "9";
	// launches/last lies outside.
	return l.prefix + "launches/0", l.prefix + "launches/:"
}

// Begin records a new launch and returns it with the next launch id and
// the current time, or the previous launch's StartedAt if the clock reads
// earlier. Once launch 99999 exists it fails with
// launchlog.ErrLaunchesExhausted.
func (l *Log) Begin(ctx context.Context, info store.Info) (store.Launch, error) {
	var launch store.Launch
	err := l.run(ctx, "Begin", func(ctx context.Context) error {
		last, lastMod, err := l.readLast(ctx)
		if err != nil {
			return err
		}
		if last >= launchlog.MaxLaunch {
			return fmt.Errorf("%w: under %s", launchlog.ErrLaunchesExhausted, l.prefix)
		}
		launch = store.Launch{
			ID:        last + 1,
			StartedAt: l.clock.Now().UTC().Round(0),
			Ticket:    info.Ticket,
			By:        info.By,
			Note:      info.Note,
		}
		if last > 0 {
			prev, err := l.readLaunch(ctx, last, last)
			if err != nil {
				return err
			}
			if prev.StartedAt.After(launch.StartedAt) {
				launch.StartedAt = prev.StartedAt
			}
		}
		v, err := json.Marshal(launch)
		if err != nil {
			return fmt.Errorf("fleet: encode launch: %w", err)
		}
		key := l.launchKey(launch.ID)
		resp, err := l.cli.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(l.lastKey()), "=", lastMod),
			clientv3.Compare(clientv3.CreateRevision(key), "=", 0),
		).Then(
			clientv3.OpPut(l.lastKey(), strconv.Itoa(launch.ID)),
			clientv3.OpPut(key, string(v)),
		).Else(
			clientv3.OpGet(l.lastKey()),
		).Commit()
		if err != nil {
			return clientError{err}
		}
		if resp.Succeeded {
			return nil
		}
		if kv := firstKV(resp.Responses[0]); modRevision(kv) == lastMod {
			return l.corruptf("launch %d recorded beyond the last launch id, %d", launch.ID, last)
		}
		return errConflict
	})
	if err != nil {
		return store.Launch{}, err
	}
	return launch, nil
}

// Get returns launch id, or an error wrapping launchlog.ErrNoLaunch.
func (l *Log) Get(ctx context.Context, id int) (store.Launch, error) {
	if id < 1 || id > launchlog.MaxLaunch {
		return store.Launch{}, logInvalidf("launch id = %d, want 1 to %d", id, launchlog.MaxLaunch)
	}
	var launch store.Launch
	err := l.run(ctx, fmt.Sprintf("Get(%d)", id), func(ctx context.Context) error {
		resp, err := l.cli.Txn(ctx).Then(clientv3.OpGet(l.lastKey()), clientv3.OpGet(l.launchKey(id))).Commit()
		if err != nil {
			return clientError{err}
		}
		last, _, err := l.parseLast(firstKV(resp.Responses[0]))
		if err != nil {
			return err
		}
		kv := firstKV(resp.Responses[1])
		if kv == nil && id > last {
			return fmt.Errorf("%w: %d under %s", launchlog.ErrNoLaunch, id, l.prefix)
		}
		launch, err = l.decodeLaunch(kv, id, last)
		return err
	})
	return launch, err
}

// Current returns the latest launch, or an error wrapping
// launchlog.ErrNoLaunch if there is none.
func (l *Log) Current(ctx context.Context) (store.Launch, error) {
	var launch store.Launch
	err := l.run(ctx, "Current", func(ctx context.Context) error {
		last, _, err := l.readLast(ctx)
		if err != nil {
			return err
		}
		if last == 0 {
			return fmt.Errorf("%w: %s holds no launch", launchlog.ErrNoLaunch, l.prefix)
		}
		launch, err = l.readLaunch(ctx, last, last)
		return err
	})
	return launch, err
}

// List returns all launches, oldest first.
func (l *Log) List(ctx context.Context) ([]store.Launch, error) {
	var launches []store.Launch
	err := l.run(ctx, "List", func(ctx context.Context) error {
		from, to := l.launchesRange()
		resp, err := l.cli.Txn(ctx).Then(
			clientv3.OpGet(l.lastKey()),
			clientv3.OpGet(from, clientv3.WithRange(to)),
		).Commit()
		if err != nil {
			return clientError{err}
		}
		last, _, err := l.parseLast(firstKV(resp.Responses[0]))
		if err != nil {
			return err
		}
		kvs := resp.Responses[1].GetResponseRange().GetKvs()
		launches = make([]store.Launch, 0, len(kvs))
		for i, kv := range kvs {
			launch, err := l.decodeLaunch(kv, i+1, last)
			if err != nil {
				return err
			}
			launches = append(launches, launch)
		}
		if len(launches) != last {
			return l.corruptf("launch %d missing (the last launch id is %d)", len(launches)+1, last)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return launches, nil
}

// readLast returns the last launch id handed out (0 for none) and the
// ModRevision of its key.
func (l *Log) readLast(ctx context.Context) (int, int64, error) {
	resp, err := l.cli.Get(ctx, l.lastKey())
	if err != nil {
		return 0, 0, clientError{err}
	}
	return l.parseLast(firstRangeKV(resp.Kvs))
}

func (l *Log) parseLast(kv *mvccpb.KeyValue) (int, int64, error) {
	if kv == nil {
		return 0, 0, nil
	}
	last, ok := parseDecimal(kv.Value, 1, launchlog.MaxLaunch)
	if !ok {
		return 0, 0, l.corruptf("%s = %q, want a launch id from 1 to %d", kv.Key, kv.Value, launchlog.MaxLaunch)
	}
	return last, kv.ModRevision, nil
}

// readLaunch returns launch id, which must exist since last is the last
// launch id.
func (l *Log) readLaunch(ctx context.Context, id, last int) (store.Launch, error) {
	resp, err := l.cli.Get(ctx, l.launchKey(id))
	if err != nil {
		return store.Launch{}, clientError{err}
	}
	return l.decodeLaunch(firstRangeKV(resp.Kvs), id, last)
}

// decodeLaunch checks that kv is the record of launch id, written by
// this package, and no later than last.
func (l *Log) decodeLaunch(kv *mvccpb.KeyValue, id, last int) (store.Launch, error) {
	if kv == nil {
		return store.Launch{}, l.corruptf("launch %d missing (the last launch id is %d)", id, last)
	}
	if string(kv.Key) != l.launchKey(id) {
		return store.Launch{}, l.corruptf("key %q, want %q", kv.Key, l.launchKey(id))
	}
	if id > last {
		return store.Launch{}, l.corruptf("launch %d recorded beyond the last launch id, %d", id, last)
	}
	var launch store.Launch
	dec := json.NewDecoder(bytes.NewReader(kv.Value))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&launch); err != nil {
		return store.Launch{}, l.corruptf("launch %d: %v", id, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return store.Launch{}, l.corruptf("launch %d: data after the record", id)
	}
	if launch.ID != id {
		return store.Launch{}, l.corruptf("launch %d stored under key %q", launch.ID, kv.Key)
	}
	return launch, nil
}

// NextGenerator hands out the next generator id of launch, starting at 0:
// each call returns a value that no call on any Log with this prefix
// returned before, committed in etcd before it is returned. After 99999 it
// fails with launchlog.ErrGeneratorsExhausted.
//
// launch is 0 to 99999. As with launchlog, it need not have been recorded
// by Begin (launch ids may come from deployment configuration), and 0 is
// the test launch.
func (l *Log) NextGenerator(ctx context.Context, launch int) (int, error) {
	if launch < 0 || launch > launchlog.MaxLaunch {
		return 0, logInvalidf("launch = %d, want 0 to %d", launch, launchlog.MaxLaunch)
	}
	key := l.generatorKey(launch)
	l.mu.Lock()
	seen := l.generators[launch] // absent: guess that the counter is new
	l.mu.Unlock()
	var got int
	err := l.run(ctx, fmt.Sprintf("NextGenerator(%d)", launch), func(ctx context.Context) error {
		if seen.next > launchlog.MaxGenerator {
			return fmt.Errorf("%w: launch %d under %s", launchlog.ErrGeneratorsExhausted, launch, l.prefix)
		}
		resp, err := l.cli.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(key), "=", seen.mod),
		).Then(
			clientv3.OpPut(key, strconv.Itoa(seen.next+1)),
		).Else(
			clientv3.OpGet(key),
		).Commit()
		if err != nil {
			return clientError{err}
		}
		if resp.Succeeded {
			got = seen.next
			seen = counterState{next: seen.next + 1, mod: resp.Header.Revision}
			return nil
		}
		if seen, err = l.parseCounter(launch, firstKV(resp.Responses[0])); err != nil {
			return err
		}
		return errConflict
	})
	if errors.Is(err, ErrCorrupt) {
		seen = counterState{}
	}
	l.mu.Lock()
	if len(l.generators) >= maxHints {
		clear(l.generators)
	}
	l.generators[launch] = seen
	l.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return got, nil
}

func (l *Log) parseCounter(launch int, kv *mvccpb.KeyValue) (counterState, error) {
	if kv == nil {
		return counterState{}, nil
	}
	next, ok := parseDecimal(kv.Value, 1, launchlog.MaxGenerator+1)
	if !ok {
		return counterState{}, l.corruptf("generator counter of launch %d is %q, want 1 to %d", launch, kv.Value, launchlog.MaxGenerator+1)
	}
	return counterState{next: next, mod: kv.ModRevision}, nil
}

// HighWater returns the mark stored for key, in UTC, or the zero time if
// there is none.
func (l *Log) HighWater(ctx context.Context, key string) (time.Time, error) {
	if err := checkMarkKey(key); err != nil {
		return time.Time{}, err
	}
	var mark time.Time
	err := l.run(ctx, "HighWater", func(ctx context.Context) error {
		seen, err := l.readMark(ctx, key)
		if err == nil && seen.mod != 0 {
			mark = time.Unix(0, seen.n).UTC()
		}
		return err
	})
	return mark, err
}

// AdvanceHighWater moves the mark for key to t unless it is already at or
// past t, and returns the mark now stored, in UTC. A mark never moves
// backwards. t is a time representable in Unix nanoseconds (years 1678 to
// 2262); the zero t moves nothing and returns the stored mark.
func (l *Log) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	n, err := checkMark(key, t)
	if err != nil {
		return time.Time{}, err
	}
	mk := l.markKey(key)
	l.mu.Lock()
	seen, known := l.marks[key] // unknown: guess that the mark is new
	l.mu.Unlock()
	var mark time.Time
	err = l.run(ctx, "AdvanceHighWater", func(ctx context.Context) error {
		// Only a fresh read may say that nothing needs to move: the
		// mark returned must be the one stored now.
		if t.IsZero() || (known && seen.mod != 0 && seen.n >= n) {
			var err error
			if seen, err = l.readMark(ctx, key); err != nil {
				return err
			}
			known = true
			if t.IsZero() || (seen.mod != 0 && seen.n >= n) {
				if seen.mod != 0 {
					mark = time.Unix(0, seen.n).UTC()
				}
				return nil
			}
		}
		v := time.Unix(0, n).UTC().Format(markLayout)
		resp, err := l.cli.Txn(ctx).If(
			clientv3.Compare(clientv3.ModRevision(mk), "=", seen.mod),
		).Then(
			clientv3.OpPut(mk, v),
		).Else(
			clientv3.OpGet(mk),
		).Commit()
		if err != nil {
			return clientError{err}
		}
		if resp.Succeeded {
			seen, known = markState{n: n, mod: resp.Header.Revision}, true
			mark = time.Unix(0, n).UTC()
			return nil
		}
		if seen, err = l.parseMark(firstKV(resp.Responses[0])); err != nil {
			return err
		}
		known = true
		if seen.n >= n {
			mark = time.Unix(0, seen.n).UTC()
			return nil
		}
		return errConflict
	})
	l.mu.Lock()
	if len(l.marks) >= maxHints {
		clear(l.marks)
	}
	if err != nil || !known {
		delete(l.marks, key)
	} else {
		l.marks[key] = seen
	}
	l.mu.Unlock()
	if err != nil {
		return time.Time{}, err
	}
	return mark, nil
}

func (l *Log) readMark(ctx context.Context, key string) (markState, error) {
	resp, err := l.cli.Get(ctx, l.markKey(key))
	if err != nil {
		return markState{}, clientError{err}
	}
	return l.parseMark(firstRangeKV(resp.Kvs))
}

func (l *Log) parseMark(kv *mvccpb.KeyValue) (markState, error) {
	if kv == nil {
		return markState{}, nil
	}
	t, err := time.Parse(markLayout, string(kv.Value))
	if err != nil || t.Format(markLayout) != string(kv.Value) || !time.Unix(0, t.UnixNano()).Equal(t) {
		return markState{}, l.corruptf("high-water mark %q = %q, want a UTC time from 1678 to 2262 as %q", kv.Key, kv.Value, markLayout)
	}
	return markState{n: t.UnixNano(), mod: kv.ModRevision}, nil
}

// checkMark checks the arguments of AdvanceHighWater and returns t in
// Unix nanoseconds.
func checkMark(key string, t time.Time) (int64, error) {
	if err := checkMarkKey(key); err != nil {
		return 0, err
	}
	n := t.UnixNano()
	if !t.IsZero() && !time.Unix(0, n).Equal(t) {
		return 0, logInvalidf("high-water time %v, want a time from 1678 to 2262 (Unix nanoseconds)", t)
	}
	return n, nil
}

// markTime returns the time of a mark as read, the zero time for none.
func markTime(m markState) time.Time {
	if m.mod == 0 {
		return time.Time{}
	}
	return time.Unix(0, m.n).UTC()
}

func checkMarkKey(key string) error {
	if key == "" || len(key) > maxMarkKey {
		return logInvalidf("high-water key of %d bytes, want 1 to %d", len(key), maxMarkKey)
	}
	return nil
}

// run runs attempt under the log's timeout with retry; op names the
// operation in errors.
func (l *Log) run(ctx context.Context, op string, attempt func(ctx context.Context) error) error {
	what := op + " under " + l.prefix
	if err := l.cli.Ctx().Err(); err != nil {
		return fmt.Errorf("%w: %s: client closed: %w", ErrUnavailable, what, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
	}
	// The caller's ctx and the client's both end the operation.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(l.cli.Ctx(), cancel)()
	return retry(ctx, l.timeout, what, attempt)
}

// logError is an error of the log that wraps several sentinels.
type logError struct {
	msg  string
	errs []error
}

func (e *logError) Error() string   { return e.msg }
func (e *logError) Unwrap() []error { return e.errs }

// logInvalidf returns an error wrapping both ErrInvalid and
// launchlog.ErrInvalid, so that callers test either backend alike.
func logInvalidf(format string, args ...any) error {
	return &logError{
		msg:  ErrInvalid.Error() + ": " + fmt.Sprintf(format, args...),
		errs: []error{ErrInvalid, launchlog.ErrInvalid},
	}
}

func (l *Log) corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: under %s: %s", ErrCorrupt, l.prefix, fmt.Sprintf(format, args...))
}

// parseDecimal parses v as this package writes decimals: digits only, no
// sign, no leading zero, lo to hi.
func parseDecimal(v []byte, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(string(v))
	if err != nil || n < lo || n > hi || strconv.Itoa(n) != string(v) {
		return 0, false
	}
	return n, true
}

// firstKV returns the first key-value of a range response inside a
// transaction, or nil.
func firstKV(r *pb.ResponseOp) *mvccpb.KeyValue {
	return firstRangeKV(r.GetResponseRange().GetKvs())
}

func firstRangeKV(kvs []*mvccpb.KeyValue) *mvccpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	return kvs[0]
}

// modRevision returns kv's ModRevision, zero for no key.
func modRevision(kv *mvccpb.KeyValue) int64 {
	if kv == nil {
		return 0
	}
	return kv.ModRevision
}
