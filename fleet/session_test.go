package fleet_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/traceid"
)

func session(t *testing.T, o fleet.SessionOptions) *fleet.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := fleet.NewSession(ctx, o)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// count returns how many keys etcd holds under prefix.
func count(t *testing.T, cli *clientv3.Client, prefix string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	return resp.Count
}

// The claims of a session share its lease and its one clock record; each
// is freed on its own by Close, and all of them by the session's Close.
func TestSessionClaimsShareOneLease(t *testing.T) {
	t.Parallel()
	cli := fleettest.Start(t, 1).Client()
	prefix := fleettest.Prefix(t, cli)
	s := session(t, fleet.SessionOptions{Client: cli, Prefix: prefix})
	o := fleet.ClaimOptions{Session: s, Space: "traceid", Max: 99}
	claims := make([]*fleet.Claim, 16)
	var wg sync.WaitGroup
	for i := range claims {
		wg.Go(func() { claims[i] = claim(t, o) })
	}
	wg.Wait()
	seen := make(map[int]bool)
	for _, c := range claims {
		require.NotNil(t, c)
		assert.False(t, seen[c.Node()], "node %d claimed twice", c.Node())
		seen[c.Node()] = true
		assert.Equal(t, s.Deadline(), c.Deadline(), "a claim's deadline is its session's")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nodes, err := cli.Get(ctx, prefix+"nodes/traceid/", clientv3.WithPrefix())
	require.NoError(t, err)
	require.Len(t, nodes.Kvs, len(claims))
	for _, kv := range nodes.Kvs {
		assert.Equal(t, nodes.Kvs[0].Lease, kv.Lease, "every node under the session's one lease")
	}
	assert.EqualValues(t, 1, count(t, cli, prefix+"holders/"), "one clock record for the session")
	listed, err := fleet.Nodes(ctx, cli, prefix, 0)
	require.NoError(t, err)
	require.Len(t, listed, len(claims))
	assert.Positive(t, listed[0].LeaseLeft)

	// A renewal moves every claim's deadline at once.
	before := s.Deadline()
	testwait.Until(t, func() bool { return s.Deadline().After(before) }, "a keep-alive of the session acknowledged")
	assert.Equal(t, s.Deadline(), claims[0].Deadline())

	// Close frees one node at once, and the others hold.
	freed := claims[3].Node()
	require.NoError(t, claims[3].Close())
	require.ErrorIs(t, claims[3].Check(time.Now()), fleet.ErrClosed)
	assert.EqualValues(t, len(claims)-1, count(t, cli, prefix+"nodes/traceid/"))
	other := claim(t, fleet.ClaimOptions{Client: cli, Prefix: prefix, Space: "traceid", Min: freed, Max: freed})
	assert.Equal(t, freed, other.Node(), "a closed claim's node is free at once")
	require.NoError(t, claims[0].Check(time.Now()), "the session's other claims hold")

	// The session's Close frees the rest.
	require.NoError(t, s.Close())
	for i, c := range claims {
		require.ErrorIs(t, c.Check(time.Now()), fleet.ErrClosed, "claim %d after the session's Close", i)
		select {
		case <-c.Done():
		default:
			t.Fatalf("claim %d: Done not closed after the session's Close", i)
		}
	}
	assert.EqualValues(t, 1, count(t, cli, prefix+"nodes/traceid/"), "only the other holder's node left")
	assert.EqualValues(t, 1, count(t, cli, prefix+"holders/"), "only the other holder's record left")
	_, err = fleet.ClaimNode(ctx, o)
	require.ErrorIs(t, err, fleet.ErrClosed, "no claim in a closed session")
}

// A session whose lease etcd no longer holds loses every claim; each
// generator on them stops, and a claim whose node key alone is gone is
// fenced out at its next mark without touching the others.
func TestSessionLostLosesEveryClaim(t *testing.T) {
	t.Parallel()
	cli := fleettest.Start(t, 1).Client()
	prefix := fleettest.Prefix(t, cli)
	s := session(t, fleet.SessionOptions{Client: cli, Prefix: prefix, TTL: 3 * time.Second, Interval: 500 * time.Millisecond})
	o := fleet.ClaimOptions{Session: s, Space: "traceid", Max: traceid.MaxNode}
	a, b, c := claim(t, o), claim(t, o), claim(t, o)
	ga, err := traceid.New(context.Background(), traceid.Options{Claim: a})
	require.NoError(t, err)
	defer ga.Close()
	_, err = ga.Next()
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = c.AdvanceHighWater(ctx, "k", time.Now())
	require.NoError(t, err)
	_, err = cli.Delete(ctx, prefix+"nodes/traceid/"+pad(c.Node()))
	require.NoError(t, err)
	_, err = c.AdvanceHighWater(ctx, "k", time.Now().Add(time.Second))
	require.ErrorIs(t, err, fleet.ErrNodeLost, "a claim whose key is gone writes no mark")
	require.NoError(t, b.Check(time.Now()), "the session's other claims hold")

	resp, err := cli.Get(ctx, prefix+"nodes/traceid/"+pad(a.Node()))
	require.NoError(t, err)
	require.Len(t, resp.Kvs, 1)
	_, err = cli.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease))
	require.NoError(t, err)
	for _, cl := range []*fleet.Claim{a, b} {
		testwait.Recv(t, cl.Done(), "the claim of node "+strconv.Itoa(cl.Node())+" lost with its session")
		require.ErrorIs(t, cl.Check(time.Now()), fleet.ErrNodeLost)
	}
	testwait.Recv(t, s.Done(), "the session lost")
	testwait.Until(t, func() bool { _, err := ga.Next(); return err != nil }, "the generator on a lost claim stops")
	_, err = ga.Next()
	require.ErrorIs(t, err, traceid.ErrNodeLost)
}

func TestSessionOptionsRejected(t *testing.T) {
	t.Parallel()
	cli := fleettest.Start(t, 1).Client()
	prefix := fleettest.Prefix(t, cli)
	_, err := fleet.NewSession(context.Background(), fleet.SessionOptions{})
	require.ErrorIs(t, err, fleet.ErrInvalid)
	assert.Contains(t, err.Error(), "SessionOptions.Client is nil")
	_, err = fleet.NewSession(context.Background(), fleet.SessionOptions{Client: cli, TTL: time.Second})
	require.ErrorIs(t, err, fleet.ErrInvalid)
	assert.Contains(t, err.Error(), "SessionOptions.TTL = 1s, want whole seconds from 2s to 1h")

	s := session(t, fleet.SessionOptions{Client: cli, Prefix: prefix})
	for _, o := range []fleet.ClaimOptions{
		{Session: s, TTL: time.Minute},
		{Session: s, Prefix: "other/"},
		{Session: s, Client: fleettest.NewClient(t, cli.Endpoints()[0])},
	} {
		_, err := fleet.ClaimNode(context.Background(), o)
		require.ErrorIs(t, err, fleet.ErrInvalid)
		assert.Contains(t, err.Error(), "is set with a Session, want it set in SessionOptions")
	}
	c := claim(t, fleet.ClaimOptions{Session: s, Client: cli, Prefix: prefix})
	assert.Equal(t, 0, c.Node(), "the session's own client and prefix may be repeated")
}

func pad(n int) string { return strconv.FormatInt(int64(n)+1e10, 10)[1:] }

// A generator on a claim leases its marks as far ahead as the claim says:
// ClaimOptions.MarkLease, or its own default of one second.
func TestGeneratorTakesTheClaimsMarkLease(t *testing.T) {
	t.Parallel()
	cli := fleettest.Start(t, 1).Client()
	prefix := fleettest.Prefix(t, cli)
	log, err := fleet.NewLog(fleet.LogOptions{Client: cli, Prefix: prefix})
	require.NoError(t, err)
	for _, tt := range []struct {
		lease, want time.Duration
	}{{0, time.Second}, {5 * time.Second, 5 * time.Second}} {
		// want: the lease the generator takes
		c := claim(t, fleet.ClaimOptions{Client: cli, Prefix: prefix, Space: "traceid", Max: traceid.MaxNode, MarkLease: tt.lease})
		assert.Equal(t, tt.lease, c.MarkLease())
		g, err := traceid.New(context.Background(), traceid.Options{Claim: c})
		require.NoError(t, err)
		id, err := g.Next()
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		mark, err := log.HighWater(ctx, "traceid/node/"+strconv.Itoa(c.Node()))
		cancel()
		require.NoError(t, err)
		ahead := mark.Sub(id.Time(time.Now()))
		assert.GreaterOrEqual(t, ahead, tt.want-time.Second, "the mark leased %v ahead of the ID's second", ahead)
		assert.LessOrEqual(t, ahead, tt.want+time.Second, "the mark leased %v ahead of the ID's second", ahead)
		g.Close()
	}
}
