package traceid

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/claimtest"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// Many goroutines on a PerCore, with Next and Fill callers beside them and
// the clock moving under all of them: no ID twice, every ID of the node.
func TestPerCoreDistinct(t *testing.T) {
	t.Parallel()
	const goroutines = 8
	perGoroutine := 200_000
	if raceEnabled || testing.Short() {
		perGoroutine = 10_000
	}
	g, fake := start(t, Options{Node: 3, ThreadBits: 4})
	p := g.PerCore()
	stop := keepMoving(fake) // seconds change under the callers
	results := make([][]ID, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			ids := make([]ID, 0, perGoroutine)
			fill := make([]ID, 100)
			for len(ids) < perGoroutine {
				switch i % 4 {
				case 0:
					id, err := g.Next()
					if !assert.NoError(t, err) {
						return
					}
					ids = append(ids, id)
				case 1:
					n, err := g.Fill(fill)
					if !assert.NoError(t, err) {
						return
					}
					ids = append(ids, fill[:n]...)
				default:
					id, err := p.Next()
					if !assert.NoError(t, err) {
						return
					}
					ids = append(ids, id)
				}
			}
			results[i] = ids
		})
	}
	wg.Wait()
	stop()
	var all []ID
	for _, ids := range results {
		all = append(all, ids...)
	}
	requireDistinct(t, all)
	for _, id := range all {
		require.Equal(t, 3, id.Node())
		p, err := Decode(id, 4)
		require.NoError(t, err)
		require.NotZero(t, p.Counter, "counter 0 is never issued")
	}
}

// One caller on a PerCore gets nearly every ID of a second before the
// second runs out: a run is left unused only when the caller moves to
// another processor (or a collection drops the run), at most 255 values
// each time; within 1% of Next's 4,194,303 here, where one wasted run per
// ID would issue 16,384.
func TestPerCoreUsesTheWholeSecond(t *testing.T) {
	t.Parallel()
	for _, tb := range []int{0, 4} {
		g, fake := start(t, Options{Node: 1, ThreadBits: tb, NoWait: true})
		p := g.PerCore()
		n := 0
		var err error
		for ; ; n++ {
			if _, err = p.Next(); err != nil {
				break
			}
		}
		require.ErrorIs(t, err, ErrExhausted, "T=%d", tb)
		all := (1 << tb) * (1<<(LowBits-tb) - 1)
		assert.LessOrEqual(t, n, all, "T=%d", tb)
		if !raceEnabled { // the race detector's sync.Pool drops a quarter of what is put back, on purpose
			assert.GreaterOrEqual(t, n, all-all/100, "T=%d: nearly every ID of the second", tb)
		}
		fake.Advance(time.Second)
		_, err = p.Next()
		require.NoError(t, err, "T=%d: the next second", tb)
	}
}

// While the clock is behind the generator's second, a PerCore takes one
// value at a time, through the generator's checks, as Next does: it spends
// the second no faster, and a claim lost meanwhile stops it at once.
func TestPerCoreWhileClockBehind(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 1, Deadline: t0.Add(time.Hour)}
	g, fake := start(t, Options{Claim: claim})
	p := g.PerCore()
	_, err := p.Next()
	require.NoError(t, err)
	fake.Advance(-10 * time.Second)
	before := uint32(g.state.Load())
	for range 1000 {
		_, err := p.Next()
		require.NoError(t, err)
	}
	spent := uint32(g.state.Load()) - before
	assert.LessOrEqual(t, spent, uint32(1000), "one low value per ID while the clock is behind")
	checks := claim.Checks()
	_, err = p.Next()
	require.NoError(t, err)
	assert.Greater(t, claim.Checks(), checks, "every ID while the clock is behind checks the claim")
	claim.Revoke()
	_, err = p.Next()
	require.ErrorIs(t, err, ErrNodeLost)
}

// A PerCore enters a new second only as Next does, under the claim: no ID
// after a second that would outlast the deadline.
func TestPerCoreClaimLost(t *testing.T) {
	t.Parallel()
	claim := &claimtest.Claim{Number: 1, Deadline: t0.Add(2500 * time.Millisecond)}
	g, fake := start(t, Options{Claim: claim})
	p := g.PerCore()
	for range 1000 {
		_, err := p.Next()
		require.NoError(t, err)
	}
	fake.Advance(time.Second) // second 2 would end after the deadline
	_, err := p.Next()
	require.ErrorIs(t, err, ErrNodeLost)
}

// Once a second's IDs ran out early and a processor claimed a run of the
// next second, the runs of the second before are over, even while the
// coarse clock still reads it: a goroutine that moves to a processor
// still holding one never goes back a second.
func TestPerCoreNeverGoesBackASecond(t *testing.T) {
	t.Parallel()
	precise, coarse := clock.NewFake(t0), clock.NewFake(t0)
	g, err := New(context.Background(), Options{Node: 1, NoWait: true, Clock: lagClock{precise, coarse}})
	require.NoError(t, err)
	precise.Advance(time.Second)
	coarse.Advance(time.Second)
	p := g.PerCore()
	first, err := p.Next()
	require.NoError(t, err)
	var held *run // first's run, with values left
	for i := range p.slots {
		if r := p.slots[i].run.Load(); r != nil {
			held = r
		}
	}
	require.NotNil(t, held, "the first ID's run is in a slot")
	everySlot := func(r *run) {
		for i := range p.slots {
			p.slots[i].run.Store(r)
		}
	}

	// Fill takes the rest of the second; then the precise clock moves on
	// while the coarse one still reads the old second.
	buf := make([]ID, 1<<16)
	for {
		if _, err := g.Fill(buf); err != nil {
			require.ErrorIs(t, err, ErrExhausted)
			break
		}
	}
	precise.Advance(time.Second)
	everySlot(nil)
	id, err := p.Next()
	require.NoError(t, err)
	require.Equal(t, sec(first)+1, sec(id), "a run of the next second")

	everySlot(held) // every processor still holds a run of the old second
	for range 10 {
		id, err := p.Next()
		require.NoError(t, err)
		require.Equal(t, sec(first)+1, sec(id), "ID %d after one of the next second", id)
	}
	coarse.Advance(time.Second)
	id, err = p.Next()
	require.NoError(t, err)
	require.Equal(t, sec(first)+1, sec(id), "the coarse clock caught up")
}

// TestTryNextNeverWaits: where Next would wait for the next second or for
// the store to lease it, TryNext fails at once with ErrExhausted, and the
// lease's renewal goes on in the background.
func TestTryNextNeverWaits(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	store := memstore.NewGated(4)
	g, err := New(context.Background(), Options{Node: 3, Clock: fake, Store: store})
	require.NoError(t, err)
	p := g.PerCore()

	_, err = p.TryNext()
	require.ErrorIs(t, err, ErrExhausted, "the generator's first second has not begun")
	assert.Zero(t, fake.Sleepers())

	fake.Advance(time.Second)
	_, err = p.TryNext()
	require.ErrorIs(t, err, ErrExhausted, "the second is not leased yet")
	assert.ErrorContains(t, err, "renewing in the background")
	testwait.Recv(t, store.Entered, "the renewal's write")
	close(store.Release)
	var id ID
	testwait.Until(t, func() bool { id, err = p.TryNext(); return err == nil }, "an ID once the renewal landed")
	assert.Equal(t, t0.Unix()+1, sec(id))
	assert.Equal(t, 3, id.Node())
}

// TestTryNextNamesAFailedRenewal: once the background renewal that
// TryNext started failed, TryNext names the store's error instead of
// reporting the second as not leased yet, and issues again once a renewal
// lands.
func TestTryNextNamesAFailedRenewal(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(t0)
	store := &memstore.Store{}
	g, err := New(context.Background(), Options{Node: 3, Clock: fake, Store: store})
	require.NoError(t, err)
	p := g.PerCore()
	boom := errors.New("disk full")
	store.Fail(boom)

	fake.Advance(time.Second)
	_, err = p.TryNext()
	require.ErrorIs(t, err, ErrExhausted, "the first call starts the renewal")
	testwait.Until(t, func() bool { _, err = p.TryNext(); return !errors.Is(err, ErrExhausted) }, "TryNext to report the failed renewal")
	require.ErrorIs(t, err, ErrStore)
	require.ErrorIs(t, err, boom)

	store.Fail(nil)
	var id ID
	testwait.Until(t, func() bool { id, err = p.TryNext(); return err == nil }, "an ID once a renewal landed")
	assert.Equal(t, t0.Unix()+1, sec(id))
}

// A processor's runs are written over one another: taking IDs allocates
// nothing, run after run. (Under the race detector each run is new; see
// coreSlot.put.)
func TestPerCoreAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector each run is allocated; .ci/run runs this test without it")
	}
	g, _ := start(t, Options{Node: 5})
	p := g.PerCore()
	ids := make([]ID, 0, 11*4*p.runLen)
	allocs := testing.AllocsPerRun(10, func() {
		for range 4 * p.runLen { // four runs on this processor, or more
			id, err := p.Next()
			if err != nil {
				panic(err) // testify would allocate here
			}
			ids = append(ids, id)
		}
	})
	assert.Zero(t, allocs)
	seen := make(map[ID]bool, len(ids))
	for _, id := range ids {
		require.False(t, seen[id], "ID %d twice", id)
		seen[id] = true
	}
}

// Runs shrink as processors grow, so that the values left unused when a
// second ends stay within a 256th of the second's on up to 64 processors.
func TestRunLength(t *testing.T) {
	for _, c := range []struct {
		procs int
		want  uint64
	}{{1, maxRun}, {2, maxRun}, {8, 2048}, {16, 1024}, {64, minRun}, {1024, minRun}} {
		assert.Equal(t, c.want, runLength(c.procs), "procs %d", c.procs)
	}
	for procs := 1; procs <= 64; procs++ {
		assert.LessOrEqual(t, uint64(procs)*runLength(procs), uint64(maxLow+1)/256, "procs %d", procs)
	}
}
