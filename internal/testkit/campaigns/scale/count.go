package main

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit"
)

// The kinds of etcd request a holder process counts, named by what fleet
// sends them for. A transaction is classified by its comparisons and the
// operations of its Then branch (see classifyTxn), a Put by its key (see
// putKind); the other kinds are the client method called.
const (
	kindClaim      = "claim"       // a node key created under a lease
	kindRecord     = "record"      // a holder's clock record rewritten
	kindMarkWrite  = "mark write"  // a high-water mark moved, fenced by the claim
	kindFencedRead = "fenced read" // a transaction that writes nothing
	kindOtherWrite = "other write" // a write of other keys
	kindKeepAlive  = "keep-alive"
	kindGrant      = "grant"
	kindRevoke     = "revoke"
	kindRead       = "read"
	kindDelete     = "delete"
	kindOther      = "other"
)

// kinds lists every kind in the order reports show them.
var kinds = []string{
	kindKeepAlive, kindRecord, kindMarkWrite, kindClaim, kindFencedRead, kindOtherWrite,
	kindGrant, kindRevoke, kindRead, kindDelete, kindOther,
}

// isWrite reports whether requests of kind go through etcd's raft log and
// so count in the write latency: everything that changes keys or leases.
// A keep-alive does not (the leader renews leases without a log entry);
// its latency is kept apart.
func isWrite(kind string) bool {
	switch kind {
	case kindClaim, kindRecord, kindMarkWrite, kindOtherWrite, kindGrant, kindRevoke, kindDelete:
		return true
	}
	return false
}

// counter counts a process's etcd requests by kind, and the latencies of
// its writes and keep-alives. It is safe for concurrent use.
type counter struct {
	mu        sync.Mutex
	requests  map[string]uint64
	failed    map[string]uint64
	writes    histogram
	keepAlive histogram
}

func newCounter() *counter {
	return &counter{requests: make(map[string]uint64), failed: make(map[string]uint64)}
}

// observe counts one request of kind that took d and ended with err.
func (c *counter) observe(kind string, d time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.requests[kind]++
	if err != nil {
		c.failed[kind]++
	}
	switch {
	case kind == kindKeepAlive:
		c.keepAlive.record(d)
	case isWrite(kind):
		c.writes.record(d)
	}
}

// snapshot returns copies of the cumulative counts and histograms.
func (c *counter) snapshot() (requests, failed map[string]uint64, writes, keepAlive histogram) {
	c.mu.Lock()
	defer c.mu.Unlock()
	requests = make(map[string]uint64, len(c.requests))
	for k, v := range c.requests {
		requests[k] = v
	}
	failed = make(map[string]uint64, len(c.failed))
	for k, v := range c.failed {
		failed[k] = v
	}
	return requests, failed, c.writes.clone(), c.keepAlive.clone()
}

// countRequests makes cli count every KV and Lease request in c, by
// replacing the client's embedded KV and Lease with wrappers. fleet calls
// the methods of those interfaces on the client, so this counts what
// fleet sends without any change to fleet. prefix is the prefix of the
// keys fleet writes, which tells the transactions apart.
func countRequests(cli *clientv3.Client, c *counter, prefix string) {
	cli.KV = countingKV{KV: cli.KV, c: c, prefix: prefix}
	cli.Lease = countingLease{Lease: cli.Lease, c: c}
}

// countingKV counts the requests of the KV it wraps.
type countingKV struct {
	clientv3.KV
	c      *counter
	prefix string
}

func (kv countingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	start := time.Now()
	resp, err := kv.KV.Get(ctx, key, opts...)
	kv.c.observe(kindRead, time.Since(start), err)
	return resp, err
}

func (kv countingKV) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	start := time.Now()
	resp, err := kv.KV.Put(ctx, key, val, opts...)
	kv.c.observe(putKind(kv.prefix, key), time.Since(start), err)
	return resp, err
}

func (kv countingKV) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	start := time.Now()
	resp, err := kv.KV.Delete(ctx, key, opts...)
	kv.c.observe(kindDelete, time.Since(start), err)
	return resp, err
}

func (kv countingKV) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	start := time.Now()
	resp, err := kv.KV.Do(ctx, op)
	kind := kindOther
	switch {
	case op.IsPut():
		kind = putKind(kv.prefix, string(op.KeyBytes()))
	case op.IsGet():
		kind = kindRead
	case op.IsDelete():
		kind = kindDelete
	}
	kv.c.observe(kind, time.Since(start), err)
	return resp, err
}

func (kv countingKV) Txn(ctx context.Context) clientv3.Txn {
	return &countingTxn{Txn: kv.KV.Txn(ctx), kv: kv}
}

// countingTxn keeps the comparisons and Then operations of the
// transaction it wraps, to classify it, and times its Commit.
type countingTxn struct {
	clientv3.Txn
	kv   countingKV
	cmps []clientv3.Cmp
	then []clientv3.Op
}

func (t *countingTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.cmps = append(t.cmps, cs...)
	t.Txn = t.Txn.If(cs...)
	return t
}

func (t *countingTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.then = append(t.then, ops...)
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *countingTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.Txn = t.Txn.Else(ops...)
	return t
}

func (t *countingTxn) Commit() (*clientv3.TxnResponse, error) {
	start := time.Now()
	resp, err := t.Txn.Commit()
	t.kv.c.observe(classifyTxn(t.kv.prefix, t.cmps, t.then), time.Since(start), err)
	return resp, err
}

// classifyTxn names the kind of a transaction by what its Then branch
// writes: a node key under a comparison of its create revision is a claim
// (the key did not exist); otherwise the kind of the Puts' keys (see
// putKind), a record before a mark write before another write; a
// transaction that deletes and puts nothing is a delete, and one that
// writes nothing a fenced read.
func classifyTxn(prefix string, cmps []clientv3.Cmp, then []clientv3.Op) string {
	created := false
	for i := range cmps {
		if cmps[i].GetCompare().Target == pb.Compare_CREATE {
			created = true
		}
	}
	rank := map[string]int{kindFencedRead: 0, kindDelete: 1, kindOtherWrite: 2, kindMarkWrite: 3, kindRecord: 4}
	kind := kindFencedRead
	for _, op := range then {
		k := kindFencedRead
		switch {
		case op.IsPut():
			k = putKind(prefix, string(op.KeyBytes()))
			if k == kindRecord && created && strings.HasPrefix(string(op.KeyBytes()), prefix+"nodes/") {
				return kindClaim
			}
		case op.IsDelete():
			k = kindDelete
		}
		if rank[k] > rank[kind] {
			kind = k
		}
	}
	return kind
}

// putKind names the kind of a write of key: a node key or a holder's key
// is a record, a high-water key a mark write.
func putKind(prefix, key string) string {
	switch {
	case strings.HasPrefix(key, prefix+"nodes/"), strings.HasPrefix(key, prefix+"holders/"):
		return kindRecord
	case strings.HasPrefix(key, prefix+"highwater/"):
		return kindMarkWrite
	}
	return kindOtherWrite
}

// countingLease counts the requests of the Lease it wraps.
type countingLease struct {
	clientv3.Lease
	c *counter
}

func (l countingLease) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	start := time.Now()
	resp, err := l.Lease.Grant(ctx, ttl)
	l.c.observe(kindGrant, time.Since(start), err)
	return resp, err
}

func (l countingLease) Revoke(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error) {
	start := time.Now()
	resp, err := l.Lease.Revoke(ctx, id)
	l.c.observe(kindRevoke, time.Since(start), err)
	return resp, err
}

func (l countingLease) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	start := time.Now()
	resp, err := l.Lease.KeepAliveOnce(ctx, id)
	l.c.observe(kindKeepAlive, time.Since(start), err)
	return resp, err
}

func (l countingLease) TimeToLive(ctx context.Context, id clientv3.LeaseID, opts ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error) {
	start := time.Now()
	resp, err := l.Lease.TimeToLive(ctx, id, opts...)
	l.c.observe(kindRead, time.Since(start), err)
	return resp, err
}

// Histogram buckets: log-spaced by a factor of bucketGrowth from
// histMin; the first bucket also takes everything shorter, the last
// everything from histMax on. Fixed bounds make histograms of different
// processes mergeable by adding their counts.
const (
	histMin      = 100 * time.Microsecond
	histMax      = 60 * time.Second
	bucketGrowth = 1.1
)

// histBuckets is the number of buckets between histMin and histMax.
var histBuckets = int(math.Ceil(math.Log(float64(histMax)/float64(histMin)) / math.Log(bucketGrowth)))

// histogram counts durations in fixed log-spaced buckets: a duration is
// known to within 10%. It maps a bucket's index to its count, leaving out
// empty buckets, so that it is small in a JSON line. The zero value is
// empty; it is not safe for concurrent use.
type histogram map[int]uint64

// bucket returns the index of d's bucket.
func bucket(d time.Duration) int {
	switch {
	case d < histMin:
		return 0
	case d >= histMax:
		return histBuckets + 1
	}
	i := int(math.Log(float64(d)/float64(histMin))/math.Log(bucketGrowth)) + 1
	return min(i, histBuckets)
}

// bucketUpper returns the upper bound of bucket i: every duration in it
// is shorter, but for the last bucket's, which holds histMax and longer.
func bucketUpper(i int) time.Duration {
	if i > histBuckets {
		return histMax
	}
	return time.Duration(float64(histMin) * math.Pow(bucketGrowth, float64(i)))
}

func (h *histogram) record(d time.Duration) {
	if *h == nil {
		*h = make(histogram)
	}
	(*h)[bucket(d)]++
}

func (h histogram) clone() histogram {
	c := make(histogram, len(h))
	for i, n := range h {
		c[i] = n
	}
	return c
}

// add adds o's counts to h.
func (h *histogram) add(o histogram) {
	for i, n := range o {
		if *h == nil {
			*h = make(histogram)
		}
		(*h)[i] += n
	}
}

// sub returns h minus an earlier snapshot of the same counts.
func (h histogram) sub(earlier histogram) histogram {
	d := make(histogram, len(h))
	for i, n := range h {
		if n > earlier[i] {
			d[i] = n - earlier[i]
		}
	}
	return d
}

// count returns the number of durations in h.
func (h histogram) count() uint64 {
	var n uint64
	for _, c := range h {
		n += c
	}
	return n
}

// quantile returns the upper bound of the bucket that holds the q-th
// quantile (0 < q <= 1) of h, or 0 for an empty histogram.
func (h histogram) quantile(q float64) time.Duration {
	total := h.count()
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i := 0; i <= histBuckets+1; i++ {
		seen += h[i]
		if seen >= want {
			return bucketUpper(i)
		}
	}
	return histMax
}

// idCounter counts a holder process's IDs issued, the errors of issuing,
// and the claims lost. It is safe for concurrent use.
type idCounter struct {
	issued, errors, lost atomic.Uint64
	unavailable          atomic.Uint64 // of errors, those of idkit.ErrUnavailable: etcd did not answer in time
	mu                   sync.Mutex
	lastErr              string
}

func (c *idCounter) fail(err error) {
	c.errors.Add(1)
	if errors.Is(err, idkit.ErrUnavailable) {
		c.unavailable.Add(1)
	}
	c.mu.Lock()
	c.lastErr = err.Error()
	c.mu.Unlock()
}

func (c *idCounter) lose(err error) {
	c.lost.Add(1)
	c.mu.Lock()
	c.lastErr = err.Error()
	c.mu.Unlock()
}

func (c *idCounter) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}
