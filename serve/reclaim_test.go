package serve

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

// closingClaim is a claim that records its Close, and closes Lost when
// lose is called.
type closingClaim struct {
	claim
	closed atomic.Bool
	lost   chan struct{}
}

func (c *closingClaim) Done() <-chan struct{} { return c.lost }

func (c *closingClaim) lose() {
	c.claim.lost.Store(true)
	close(c.lost)
}

func (c *closingClaim) Close() error {
	c.closed.Store(true)
	return nil
}

// claims hands out claims of nodes 1, 2, ... and keeps them. The claim
// of node doomed, if any, comes lost: its Done is closed already.
type claims struct {
	mu     sync.Mutex
	taken  []*closingClaim
	fail   atomic.Bool
	doomed int
}

func (cs *claims) claim(_ context.Context, scheme string) (store.Claim, error) {
	if cs.fail.Load() {
		return nil, errDown
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := &closingClaim{claim: claim{node: len(cs.taken) + 1}, lost: make(chan struct{})}
	if c.node == cs.doomed {
		close(c.lost)
	}
	cs.taken = append(cs.taken, c)
	return c, nil
}

func (cs *claims) get(i int) *closingClaim {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if i >= len(cs.taken) {
		return nil
	}
	return cs.taken[i]
}

// TestReclaim: a server whose node claim is lost answers 503 and fails
// /readyz, claims a node again by itself, and serves IDs of the new node,
// above the old ones, with the old claim closed.
func TestReclaim(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	cs := &claims{}
	s := newServer(t, Options{TraceID: &traceid.Options{}, Clock: clk, Claims: cs.claim})
	clk.Advance(time.Second)
	first := traceIDOf(t, s)
	assert.Equal(t, 1, first.Node())

	cs.fail.Store(true)              // the first attempt to claim again fails, and is retried
	cs.get(0).claim.lost.Store(true) // lost, as a request finds, before Lost says so
	clk.Advance(time.Second)         // the claim is checked when a new second starts
	resp := get(t, s, "/v1/traceid")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, body(t, resp), "node claim lost")
	assert.Equal(t, http.StatusServiceUnavailable, get(t, s, "/readyz").StatusCode)
	cs.fail.Store(false)

	// The lost claim is closed just after the new one is in place.
	testwait.Until(t, func() bool { return cs.get(1) != nil && s.schemes["traceid"].claim.Node() == 2 }, "the server to claim node 2")
	testwait.Until(t, cs.get(0).closed.Load, "the lost claim to be closed")
	clk.Advance(time.Second) // a new generator starts in a fresh second
	next := traceIDOf(t, s)
	assert.Equal(t, 2, next.Node())
	assert.Greater(t, next, first)
	assert.Equal(t, http.StatusOK, get(t, s, "/readyz").StatusCode)
	m := body(t, get(t, s, "/metrics"))
	assertMetric(t, m, `idkit_node_claim_node{scheme="traceid"} 2`)
	assertMetric(t, m, `idkit_node_claims_lost_total{scheme="traceid"} 1`)
	assertMetric(t, m, `idkit_node_claims_reclaimed_total{scheme="traceid"} 1`)
}

// TestReclaimWithoutRequests: a lost claim is claimed again even while
// no request comes.
func TestReclaimWithoutRequests(t *testing.T) {
	t.Parallel()
	cs := &claims{}
	s := newServer(t, Options{Snowflake: &snowflake.Options{}, Clock: clock.NewFake(start), Claims: cs.claim})
	cs.get(0).lose()
	testwait.Until(t, func() bool { return s.schemes["snowflake"].claim.Node() == 2 }, "the server to claim node 2")
	testwait.Until(t, cs.get(0).closed.Load, "the lost claim to be closed")
}

// TestReclaimLostAtOnce: a new claim lost as soon as the server takes it
// (here before it is in place) is claimed again too, without requests,
// and the metrics count each loss and each node claimed again, which no
// scrape between them could tell from the claim held.
func TestReclaimLostAtOnce(t *testing.T) {
	t.Parallel()
	cs := &claims{doomed: 2}
	s := newServer(t, Options{Snowflake: &snowflake.Options{}, Clock: clock.NewFake(start), Claims: cs.claim})
	scrape := func() string { return body(t, get(t, s, "/metrics")) }
	m := scrape()
	assertMetric(t, m, `idkit_node_claims_lost_total{scheme="snowflake"} 0`)
	assertMetric(t, m, `idkit_node_claims_reclaimed_total{scheme="snowflake"} 0`)
	cs.get(0).lose()
	testwait.Until(t, func() bool {
		return strings.Contains(scrape(), `idkit_node_claims_reclaimed_total{scheme="snowflake"} 2`+"\n")
	}, "nodes claimed again twice: the lost node 1's and the lost node 2's")
	assert.Equal(t, 3, s.schemes["snowflake"].claim.Node())
	assertMetric(t, scrape(), `idkit_node_claims_lost_total{scheme="snowflake"} 2`)
	testwait.Until(t, cs.get(0).closed.Load, "the first lost claim to be closed")
	testwait.Until(t, cs.get(1).closed.Load, "the second lost claim to be closed")
}

func traceIDOf(t *testing.T, s *Server) traceid.ID {
	t.Helper()
	resp := get(t, s, "/v1/traceid", "Accept", "text/plain")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	v, err := strconv.ParseInt(strings.TrimSpace(body(t, resp)), 10, 64)
	require.NoError(t, err)
	return traceid.ID(v)
}

// TestClaimsWantNoNode: with Options.Claims, a scheme's own node or claim
// is a mistake.
func TestClaimsWantNoNode(t *testing.T) {
	t.Parallel()
	cs := &claims{}
	for _, o := range []Options{
		{TraceID: &traceid.Options{Node: 4}, Claims: cs.claim},
		{Snowflake: &snowflake.Options{Node: map[string]int64{"worker": 1}}, Claims: cs.claim},
	} {
		_, err := New(context.Background(), o)
		assert.ErrorIs(t, err, ErrInvalid)
		assert.ErrorContains(t, err, "Options.Claims gives")
	}
	cs.fail.Store(true)
	_, err := New(context.Background(), Options{Snowflake: &snowflake.Options{}, Claims: cs.claim})
	assert.ErrorContains(t, err, "claiming a node for snowflake")
}
