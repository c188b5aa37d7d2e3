package ratelimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimiterDropsOnlyFullBuckets: past maxClients, a new client drops
// the clients whose buckets are full again, which carry no state, and
// keeps one that has spent its tokens, so that its limit still holds.
func TestLimiterDropsOnlyFullBuckets(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 12, 0, 0, 500_000_000, time.UTC)
	l := NewLimiter(10, 1, 0, 10)
	ok, _ := l.Allow("spender", "traceid", 10, now)
	require.True(t, ok, "the first request of a client")
	for i := range MaxClients - 1 {
		l.bucket(fmt.Sprintf("quiet %d", i), now)
	}
	require.Equal(t, MaxClients, l.count)

	l.bucket("newcomer", now)
	assert.Equal(t, 2, l.count, "the spender and the newcomer")
	_, kept := l.clients.Load("spender")
	assert.True(t, kept, "a client with tokens spent is kept")
	ok, why := l.Allow("spender", "traceid", 1, now)
	assert.False(t, ok, "the spender's limit holds after the others are dropped")
	assert.False(t, why.Node)
	_, quiet := l.clients.Load("quiet 0")
	assert.False(t, quiet, "a full bucket is dropped")
}
