package fleet_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/tcpproxy"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

var _ store.NodeClaim = (*fleet.Claim)(nil)

func claim(t *testing.T, o fleet.ClaimOptions) *fleet.Claim {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := fleet.ClaimNode(ctx, o)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func TestClaimTakesLowestFreeAndReleases(t *testing.T) {
	t.Parallel()
	cli := fleettest.Start(t, 1).Client()
	o := fleet.ClaimOptions{Client: cli, Prefix: fleettest.Prefix(t, cli), Space: "traceid", Min: 10, Max: 19}
	var claims []*fleet.Claim
	for want := 10; want < 13; want++ {
		c := claim(t, o)
		assert.Equal(t, want, c.Node())
		claims = append(claims, c)
	}
	require.NoError(t, claims[1].Close())
	require.ErrorIs(t, claims[1].Check(time.Now()), fleet.ErrClosed, "a closed claim says so")
	require.ErrorIs(t, claims[1].Check(time.Now()), idkit.ErrClosed)
	select {
	case <-claims[1].Done():
	default:
		t.Fatal("Lost not closed after Close")
	}
	assert.Equal(t, 11, claim(t, o).Node(), "a released node is claimed again")

	other := o
	other.Space = "snowflake/twitter"
	assert.Equal(t, 10, claim(t, other).Node(), "spaces are independent")

	nodes, err := fleet.Nodes(context.Background(), cli, o.Prefix, 0)
	require.NoError(t, err)
	var got []string
	for _, n := range nodes {
		got = append(got, fmt.Sprintf("%s/%d", n.Space, n.Node))
		assert.Positive(t, n.LeaseLeft)
		assert.LessOrEqual(t, n.LeaseLeft, fleet.DefaultTTL)
		assert.NotEmpty(t, n.Holder)
		assert.WithinDuration(t, time.Now(), n.Clock, time.Minute)
	}
	assert.Equal(t, []string{"snowflake/twitter/10", "traceid/10", "traceid/11", "traceid/12"}, got)
}

func TestClaimOptionsRejected(t *testing.T) {
	t.Parallel()
	cli := fleettest.Start(t, 1).Client()
	for _, tt := range []struct {
		o   fleet.ClaimOptions
		msg string
	}{
		{fleet.ClaimOptions{}, "ClaimOptions.Client and Session are nil"},
		{fleet.ClaimOptions{Client: cli, Min: 5, Max: 4}, "Min = 5, Max = 4, want 0 <= Min <= Max <= 2147483647"},
		{fleet.ClaimOptions{Client: cli, Min: -1}, "Min = -1"},
		{fleet.ClaimOptions{Client: cli, TTL: time.Second}, "TTL = 1s, want whole seconds from 2s to 1h"},
		{fleet.ClaimOptions{Client: cli, TTL: 2500 * time.Millisecond}, "TTL = 2.5s"},
		{fleet.ClaimOptions{Client: cli, Margin: time.Millisecond}, "Margin = 1ms, Interval = 3s, want Interval > 0, Margin >= TTL/50 (200ms)"},
		{fleet.ClaimOptions{Client: cli, TTL: 3 * time.Second, Interval: 2900 * time.Millisecond}, "Margin + Interval < TTL (3s)"},
		{fleet.ClaimOptions{Client: cli, Timeout: -time.Second}, "Timeout = -1s"},
		{fleet.ClaimOptions{Client: cli, MarkLease: 2 * time.Hour}, "ClaimOptions.MarkLease = 2h0m0s, want 0 to 1h"},
	} {
		_, err := fleet.ClaimNode(context.Background(), tt.o)
		require.ErrorIs(t, err, fleet.ErrInvalid, tt.msg)
		assert.Contains(t, err.Error(), tt.msg)
	}
}

// 1,024 claimers at once on a 1,024-node range: all distinct and the range
// full; the next claimer is told at once that no node is free; released
// nodes go to the next claimers.
func TestClaim1024Concurrent(t *testing.T) {
	t.Parallel()
	cli := fleettest.Start(t, 1).Client()
	// Long intervals and timeouts: the test is about distinct and full,
	// and 1,024 holders renewing every few seconds load a raced etcd.
	o := fleet.ClaimOptions{Client: cli, Prefix: fleettest.Prefix(t, cli), Space: "fleet1024", Min: 0, Max: 1023,
		MaxSkew: -1, TTL: 2 * time.Minute, Interval: 20 * time.Second, Timeout: 30 * time.Second}
	claims := make([]*fleet.Claim, 1024)
	errs := make([]error, 1024)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range claims {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			claims[i], errs[i] = fleet.ClaimNode(ctx, o)
		})
	}
	wg.Wait()
	t.Logf("1,024 concurrent claims took %v", time.Since(start))
	seen := map[int]bool{}
	for i, c := range claims {
		require.NoError(t, errs[i])
		t.Cleanup(func() { c.Close() })
		require.NoError(t, c.Check(time.Now()), "claim of node %d already lost", c.Node())
		require.False(t, seen[c.Node()], "node %d claimed twice", c.Node())
		seen[c.Node()] = true
	}
	require.Len(t, seen, 1024)

	_, err := fleet.ClaimNode(context.Background(), o)
	require.ErrorIs(t, err, fleet.ErrNoFreeNode)
	assert.Contains(t, err.Error(), "all 1024 numbers from 0 to 1023")

	freed := map[int]bool{}
	for _, i := range []int{3, 500, 1023} {
		require.NoError(t, claims[i].Close())
		freed[claims[i].Node()] = true
	}
	for range freed {
		c := claim(t, o)
		assert.True(t, freed[c.Node()], "node %d was not freed", c.Node())
		delete(freed, c.Node())
	}
}

func TestClaimRefusesSkewedClock(t *testing.T) {
	t.Parallel()
	cli := fleettest.Start(t, 1).Client()
	o := fleet.ClaimOptions{Client: cli, Prefix: fleettest.Prefix(t, cli), Max: 9}
	for range 3 {
		claim(t, o)
	}
	skewed := o
	skewed.Clock = clock.Offset(clock.System(), 30*time.Second)
	_, err := fleet.ClaimNode(context.Background(), skewed)
	require.ErrorIs(t, err, fleet.ErrClockSkew)
	assert.Regexp(t, `clock reads 30(\.\d+)?s from the median of 3 live holders' clocks, want within ±5s`, err.Error())

	skewed.Clock = clock.Offset(clock.System(), -30*time.Second)
	_, err = fleet.ClaimNode(context.Background(), skewed)
	require.ErrorIs(t, err, fleet.ErrClockSkew)

	skewed.MaxSkew = time.Minute
	assert.Equal(t, 3, claim(t, skewed).Node(), "within a wider bound")
	near := o
	near.Clock = clock.Offset(clock.System(), 2*time.Second)
	assert.Equal(t, 4, claim(t, near).Node(), "within the default bound")
}

// A claim on a 3-member cluster outlives the loss of one member, and
// fences itself by its deadline once quorum is lost.
//
// The TTL is the default, 10s: losing member 0 may cost an election and
// the client's move to another endpoint, and the renewals must get through
// before the deadline even on a loaded machine running the race detector.
// With 5s a renewal had about two attempts left and failed once in CI.
func TestClaimAcrossMemberLossAndQuorumLoss(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 3)
	cli := cluster.Client()
	o := fleet.ClaimOptions{Client: cli, Prefix: fleettest.Prefix(t, cli), Max: 99, TTL: fleet.DefaultTTL,
		Logger: slog.New(slog.NewTextHandler(t.Output(), nil))} // renewal failures, for a failure's cause
	held := claim(t, o)

	cluster.Stop(0)
	// Keep-alives go on with one member down: the deadline moves on by more
	// than two TTLs, as etcd acknowledges renewals for longer than the
	// lease could last without them.
	stopped := held.Deadline()
	testwait.Until(t, func() bool { return held.Deadline().After(stopped.Add(2 * o.TTL)) },
		"keep-alives acknowledged for two TTLs with one member down")
	require.NoError(t, held.Check(time.Now()), "keep-alives go on with one member down")
	second := claim(t, o)
	assert.NotEqual(t, held.Node(), second.Node())

	cluster.Stop(1)
	lostBy := held.Deadline()
	require.True(t, lostBy.Before(time.Now().Add(o.TTL)), "the deadline lies within a TTL")
	// Lost is closed by the renewal loop, which a loaded machine may run
	// late; the claim is lost at the deadline whatever runs when.
	testwait.Recv(t, held.Done(), "loss of the claim after quorum was lost")
	err := held.Check(time.Now())
	require.ErrorIs(t, err, fleet.ErrNodeLost)
	assert.False(t, time.Now().Before(lostBy), "lost at the deadline, not before")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = fleet.ClaimNode(ctx, o)
	require.ErrorIs(t, err, fleet.ErrUnavailable)
}

// A holder cut off from etcd stops issuing IDs before etcd lets another
// claimer take its node; the second holder, with its high-water mark in
// the same etcd, starts above everything the first issued.
func TestClaimCutOffHolderHandsOver(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	direct := cluster.Client()
	prefix := fleettest.Prefix(t, direct)
	proxy := tcpproxy.New(t, cluster.Endpoint(0))
	viaProxy := fleettest.NewClient(t, proxy.Endpoint())
	o := fleet.ClaimOptions{Prefix: prefix, Space: "traceid", Max: 0, TTL: 3 * time.Second, Timeout: 2 * time.Second}

	first := o
	first.Client = viaProxy
	a := claim(t, first)
	aIDs, aLast, aErr, aIssuing := issueUntilLost(t, a, viaProxy, prefix)
	select {
	case <-aIssuing:
	case err := <-aErr:
		t.Fatalf("the first holder failed before its first ID: %v", err)
	case <-time.After(testwait.Bound):
		t.Fatalf("the first holder issued no ID within %v", testwait.Bound)
	}
	proxy.Cut()

	// The node frees itself a TTL after the cut; a minute is ample.
	second := o
	second.Client = direct
	// Not the one cut off: room for late renewals and slow answers on a
	// loaded machine, where it claims again every 50ms until the node is free.
	second.TTL, second.Timeout = fleet.DefaultTTL, fleet.DefaultTimeout
	b := claimOnceFree(t, second)
	takenAt := time.Now()
	select {
	case err := <-aErr:
		require.ErrorIs(t, err, traceid.ErrNodeLost)
	case <-time.After(time.Minute):
		t.Fatal("the cut-off holder still issues IDs after its node was taken over")
	}
	require.True(t, (<-aLast).Before(takenAt), "the cut-off holder issued after the node was taken over")
	require.True(t, a.Deadline().Before(takenAt), "the cut-off holder's deadline passed before the node was taken over")

	g, err := traceid.New(context.Background(), traceid.Options{Claim: b})
	require.NoError(t, err)
	ids := <-aIDs
	require.NotEmpty(t, ids)
	seen := map[traceid.ID]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	for i := range 1000 {
		id, err := g.Next()
		require.NoError(t, err)
		require.False(t, seen[id], "ID %d issued by both holders", id)
		if i == 0 {
			assert.Greater(t, id, ids[len(ids)-1], "the new holder's first ID is above the old holder's last")
		}
	}
}

// claimOnceFree claims with o once its node is free, as it becomes a TTL
// after its holder was cut off, within a minute.
func claimOnceFree(t *testing.T, o fleet.ClaimOptions) *fleet.Claim {
	t.Helper()
	for giveUp := time.Now().Add(time.Minute); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := fleet.ClaimNode(ctx, o)
		cancel()
		if errors.Is(err, fleet.ErrNoFreeNode) {
			require.True(t, time.Now().Before(giveUp), "node still held a minute after its holder was cut off")
			time.Sleep(50 * time.Millisecond)
			continue
		}
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
}

// issueUntilLost issues TraceIds on claim c, with its marks in etcd,
// until the generator fails; it delivers the IDs, the time of the last
// one and the error, and closes issuing once the first ID is out.
func issueUntilLost(t *testing.T, c *fleet.Claim, cli *clientv3.Client, prefix string) (<-chan []traceid.ID, <-chan time.Time, <-chan error, <-chan struct{}) {
	t.Helper()
	// A lease of 10s keeps the marks well ahead of the claim's deadline, so
	// that the claim, not a failed mark renewal, is what stops the
	// generator; the next holder waits for the mark.
	g, err := traceid.New(context.Background(), traceid.Options{Claim: c, Lease: 10 * time.Second})
	require.NoError(t, err)
	ids, last, errc, issuing := make(chan []traceid.ID, 1), make(chan time.Time, 1), make(chan error, 1), make(chan struct{})
	go func() {
		var out []traceid.ID
		var at time.Time
		for {
			id, err := g.Next()
			if err != nil {
				ids <- out
				last <- at
				errc <- err
				return
			}
			at = time.Now()
			out = append(out, id)
			if len(out) == 1 {
				close(issuing)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return ids, last, errc, issuing
}

// The clock check measures against live holders only. Holders cut off
// from etcd leave records that age until their leases expire; here they
// are the majority, so that their age would decide a median. A claimer
// whose clock is right is still accepted, and one whose clock is off by
// more than MaxSkew either way is still refused.
func TestClockCheckReadsLiveHolders(t *testing.T) {
	t.Parallel()
	cluster := fleettest.Start(t, 1)
	direct := cluster.Client()
	prefix := fleettest.Prefix(t, direct)
	const maxSkew, stale = time.Second, 2500 * time.Millisecond
	o := fleet.ClaimOptions{Client: direct, Prefix: prefix, Space: "skew", Max: 99, TTL: 20 * time.Second, Interval: time.Second, MaxSkew: maxSkew}
	for range 2 {
		claim(t, o)
	}
	var links []*tcpproxy.Proxy
	for range 3 {
		link := tcpproxy.New(t, cluster.Endpoint(0))
		cut := o
		cut.Client = fleettest.NewClient(t, link.Endpoint())
		claim(t, cut)
		links = append(links, link)
	}
	for _, l := range links {
		l.Cut()
		t.Cleanup(l.Restore) // before the claims' Close
	}
	// Wait until the cut-off holders' records are older than MaxSkew plus
	// an Interval, as the live ones never are.
	dir := prefix + "holders/"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		resp, err := direct.Get(ctx, dir, clientv3.WithPrefix())
		require.NoError(t, err)
		old := 0
		for _, kv := range resp.Kvs {
			var rec fleet.Record
			require.NoError(t, json.Unmarshal(kv.Value, &rec))
			if time.Since(rec.Clock) > stale {
				old++
			}
		}
		if old == len(links) {
			break
		}
		time.Sleep(50 * time.Millisecond) // the records age in real time
	}

	right := claim(t, o)
	assert.NotNil(t, right, "a right clock is accepted")
	for _, off := range []time.Duration{3 * time.Second, -3 * time.Second} {
		skewed := o
		skewed.Clock = clock.Offset(clock.System(), off)
		_, err := fleet.ClaimNode(ctx, skewed)
		require.ErrorIs(t, err, fleet.ErrClockSkew, "a clock %v off", off)
		assert.Contains(t, err.Error(), "live holders' clocks, want within ±1s")
	}
}

// A claim keeps its node's marks in the Log's keys, and fences every
// write: once etcd no longer holds the node under the claim's lease, or
// another writer moved the mark, the write fails with ErrNodeLost, moves
// nothing and loses the claim.
func TestClaimFencesItsMarks(t *testing.T) {
	t.Parallel()
	cli := fleettest.Start(t, 1).Client()
	prefix := fleettest.Prefix(t, cli)
	log, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: prefix})
	require.NoError(t, err)
	o := fleet.ClaimOptions{Client: cli, Prefix: prefix, Space: "marks", Max: 1}
	t1 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

	a := claim(t, o)
	got, err := a.AdvanceHighWater(context.Background(), "k", t1)
	require.NoError(t, err)
	assert.Equal(t, t1, got)
	got, err = log.HighWater(context.Background(), "k")
	require.NoError(t, err)
	assert.Equal(t, t1, got, "the claim's marks are the log's")
	got, err = a.AdvanceHighWater(context.Background(), "k", t1.Add(-time.Second))
	require.NoError(t, err)
	assert.Equal(t, t1, got, "a mark never moves back")

	// A write of the claim's own that etcd applies late, after the claim
	// read the mark again, is recognised by the lease recorded beside it
	// and built on; the same write under another lease is another
	// writer's.
	late := func(lease string, at time.Time) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := cli.Txn(ctx).Then(
			clientv3.OpPut(prefix+"highwater/k", at.UTC().Format("2006-01-02T15:04:05.000000000Z")),
			clientv3.OpPut(prefix+"highwater-writer/k", lease),
		).Commit()
		require.NoError(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	node, err := cli.Get(ctx, prefix+"nodes/marks/", clientv3.WithPrefix())
	require.NoError(t, err)
	require.Len(t, node.Kvs, 1, "the claim's node key")
	var rec fleet.Record
	require.NoError(t, json.Unmarshal(node.Kvs[0].Value, &rec))
	own := strconv.FormatInt(node.Kvs[0].Lease, 16) + "/" + rec.Token
	_, err = a.HighWater(context.Background(), "k")
	require.NoError(t, err)
	late(own, t1.Add(30*time.Second))
	got, err = a.AdvanceHighWater(context.Background(), "k", t1.Add(10*time.Second))
	require.NoError(t, err, "the claim's own late write taken for another writer's")
	assert.Equal(t, t1.Add(30*time.Second), got, "the late write's mark, already past")
	late(own, t1.Add(40*time.Second))
	got, err = a.AdvanceHighWater(context.Background(), "k", t1.Add(50*time.Second))
	require.NoError(t, err)
	assert.Equal(t, t1.Add(50*time.Second), got, "written over the claim's own late write")
	require.NoError(t, a.Check(time.Now()), "the claim holds")

	// Another writer moves the mark: the claim never adopts it.
	_, err = log.AdvanceHighWater(context.Background(), "k", t1.Add(time.Hour))
	require.NoError(t, err)
	_, err = a.AdvanceHighWater(context.Background(), "k", t1.Add(time.Minute))
	require.ErrorIs(t, err, fleet.ErrNodeLost)
	assert.Contains(t, err.Error(), `another writer moved the mark "k"`)
	require.ErrorIs(t, a.Check(time.Now()), fleet.ErrNodeLost, "the claim is lost")
	_, err = a.HighWater(context.Background(), "k")
	require.ErrorIs(t, err, fleet.ErrNodeLost)

	// A write recorded under another lease is another writer's, too.
	c := claim(t, o)
	_, err = c.AdvanceHighWater(context.Background(), "k3", t1)
	require.NoError(t, err)
	_, err = cli.Txn(ctx).Then(
		clientv3.OpPut(prefix+"highwater/k3", t1.Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000000000Z")),
		clientv3.OpPut(prefix+"highwater-writer/k3", "1234abcd"),
	).Commit()
	require.NoError(t, err)
	_, err = c.AdvanceHighWater(context.Background(), "k3", t1.Add(time.Minute))
	require.ErrorIs(t, err, fleet.ErrNodeLost)
	assert.Contains(t, err.Error(), `another writer moved the mark "k3"`)
	c.Close() // its node, for the next claim

	// A claim whose lease etcd dropped writes nothing.
	b := claim(t, o)
	_, err = b.AdvanceHighWater(context.Background(), "k2", t1)
	require.NoError(t, err)
	_, err = cli.Delete(ctx, prefix+"nodes/marks/", clientv3.WithPrefix()) // as if the lease expired
	require.NoError(t, err)
	_, err = b.AdvanceHighWater(context.Background(), "k2", t1.Add(time.Second))
	require.ErrorIs(t, err, fleet.ErrNodeLost)
	assert.Contains(t, err.Error(), "etcd no longer holds it under this claim's lease")
	got, err = log.HighWater(context.Background(), "k2")
	require.NoError(t, err)
	assert.Equal(t, t1, got, "the fenced write moved nothing")
}

// countingKV counts the keys that the requests through it return.
type countingKV struct {
	clientv3.KV
	keys atomic.Int64
}

func (k *countingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	resp, err := k.KV.Get(ctx, key, opts...)
	if err == nil {
		k.keys.Add(int64(len(resp.Kvs)))
	}
	return resp, err
}

func (k *countingKV) Txn(ctx context.Context) clientv3.Txn { return countingTxn{k.KV.Txn(ctx), k} }

// countingTxn is a transaction whose answer countingKV counts.
type countingTxn struct {
	clientv3.Txn
	kv *countingKV
}

func (t countingTxn) If(cs ...clientv3.Cmp) clientv3.Txn { return countingTxn{t.Txn.If(cs...), t.kv} }
func (t countingTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	return countingTxn{t.Txn.Then(ops...), t.kv}
}
func (t countingTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	return countingTxn{t.Txn.Else(ops...), t.kv}
}

func (t countingTxn) Commit() (*clientv3.TxnResponse, error) {
	resp, err := t.Txn.Commit()
	if err == nil {
		for _, r := range resp.Responses {
			if rr := r.GetResponseRange(); rr != nil {
				t.kv.keys.Add(int64(len(rr.Kvs)))
			}
		}
	}
	return resp, err
}

// TestClaimListsNearTheTopOfTheClaims: with a thousand nodes claimed but
// for two gaps near the top, where claimers that raced leave them, a claim
// lists only the keys near the top, and takes the lowest gap; with a gap
// further down, as a released node leaves, it lists every key, and takes
// that gap.
func TestClaimListsNearTheTopOfTheClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cli := fleettest.Start(t, 1).Client()
	o := fleet.ClaimOptions{Client: cli, Prefix: fleettest.Prefix(t, cli), Space: "traceid", Max: traceid.MaxNode}
	key := func(n int) string { return fmt.Sprintf("%snodes/traceid/%010d", o.Prefix, n) }
	require.Equal(t, 0, claim(t, o).Node())
	rec, err := cli.Get(ctx, key(0))
	require.NoError(t, err)
	require.Len(t, rec.Kvs, 1)
	for n := 1; n < 1000; n++ { // claims as other holders made them, without a lease
		if n != 990 && n != 995 {
			_, err := cli.Put(ctx, key(n), string(rec.Kvs[0].Value))
			require.NoError(t, err)
		}
	}
	kv := &countingKV{KV: cli.KV}
	cli.KV = kv

	assert.Equal(t, 990, claim(t, o).Node())
	assert.Less(t, kv.keys.Load(), int64(600), "keys read to claim a node near the top")

	_, err = cli.Delete(ctx, key(10))
	require.NoError(t, err)
	kv.keys.Store(0)
	assert.Equal(t, 10, claim(t, o).Node())
	assert.Greater(t, kv.keys.Load(), int64(990), "keys read to find the gap further down")
	assert.Equal(t, 995, claim(t, o).Node())
}
