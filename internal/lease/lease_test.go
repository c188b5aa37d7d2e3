package lease_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
	"github.com/idkit/idkit/internal/lease"
	"github.com/idkit/idkit/internal/testkit/memstore"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/store"
)

// seconds are units of one second whose marks are the end's start.
var seconds = lease.Units{
	Mark: func(end uint64) time.Time { return time.Unix(int64(end), 0) },
	End:  func(mark time.Time) uint64 { return uint64(mark.Unix()) },
}

func TestWithoutStoreAllowsEverything(t *testing.T) {
	l := lease.New(nil, "k", 4, seconds, nil)
	first, err := l.Start(context.Background())
	require.NoError(t, err)
	assert.Zero(t, first)
	assert.True(t, l.Allows(math.MaxUint64-1))
	l.ExtendSoon(7) // nothing to do, and no panic
	assert.True(t, l.Idle())
}

func TestStartAfterTheStoredMark(t *testing.T) {
	store := &memstore.Store{}
	l := lease.New(store, "k", 4, seconds, nil)
	first, err := l.Start(context.Background())
	require.NoError(t, err)
	assert.Zero(t, first, "no mark: start anywhere")
	assert.False(t, l.Allows(0), "nothing is leased before Extend")

	require.NoError(t, l.Extend(context.Background(), 100))
	assert.True(t, l.Allows(100))
	assert.True(t, l.Allows(104), "the lease runs ahead of the unit")
	assert.False(t, l.Allows(105))
	next, err := lease.New(store, "k", 4, seconds, nil).Start(context.Background())
	require.NoError(t, err)
	assert.Equal(t, uint64(105), next, "a new run starts after everything leased")
}

func TestExtendSoonOnlyInTheSecondHalf(t *testing.T) {
	store := &memstore.Store{}
	l := lease.New(store, "k", 4, seconds, nil)
	require.NoError(t, l.Extend(context.Background(), 100)) // leased below 105
	calls := store.Calls()
	l.ExtendSoon(101) // 4 left of 4: first half
	assert.True(t, l.Idle())
	assert.Equal(t, calls, store.Calls())
	l.ExtendSoon(103) // 2 left: second half
	testwait.Until(t, l.Idle, "the background renewal to end")
	assert.True(t, l.Allows(107), "renewed in the background")
	assert.Equal(t, calls+1, store.Calls())
}

func TestExtendFails(t *testing.T) {
	store := &memstore.Store{}
	var failed []error
	l := lease.New(store, "k", 4, seconds, func(err error) { failed = append(failed, err) })
	boom := errors.New("boom")
	store.Fail(boom)
	require.ErrorIs(t, l.Extend(context.Background(), 1), boom)
	assert.False(t, l.Allows(1), "a failed extension allows nothing")
	l.ExtendSoon(0)
	testwait.Until(t, l.Idle, "the background renewal to end")
	require.Len(t, failed, 1)
	assert.ErrorIs(t, failed[0], boom)

	// A store that keeps a mark short of the one asked for.
	short := lease.New(store, "k", 4, lease.Units{
		Mark: seconds.Mark,
		End:  func(time.Time) uint64 { return 3 },
	}, nil)
	store.Fail(nil)
	var se *lease.ShortError
	require.ErrorAs(t, short.Extend(context.Background(), 10), &se)
	assert.Contains(t, se.Error(), "short of")
}

// A store that keeps a later mark than the one asked for, written by
// someone else, never raises the limit beyond what was asked: those units
// are the other writer's.
func TestExtendTakesNoOtherWritersMark(t *testing.T) {
	store := &memstore.Store{}
	_, err := store.AdvanceHighWater(context.Background(), "k", time.Unix(200, 0)) // another run's lease
	require.NoError(t, err)
	l := lease.New(store, "k", 4, seconds, nil)
	require.NoError(t, l.Extend(context.Background(), 100))
	assert.True(t, l.Allows(104), "covered by the mark asked for")
	assert.False(t, l.Allows(105), "the other writer's units are not this lease's")
}

// TestOneWriteAtATime: callers that need the lease while a write is in
// flight wait for that write instead of sending their own.
func TestOneWriteAtATime(t *testing.T) {
	t.Parallel()
	store := memstore.NewGated(8)
	l := lease.New(store, "k", 4, seconds, nil)
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- l.Extend(context.Background(), 100) }()
	}
	testwait.Recv(t, store.Entered, "the first write")
	close(store.Release)
	for range 3 {
		require.NoError(t, testwait.Recv(t, errs, "an Extend to return"))
	}
	assert.Equal(t, 1, store.Calls(), "three callers, one write")
	assert.Empty(t, store.Entered, "no second write began")
	assert.True(t, l.Allows(104))
}

// TestCloseEndsTheRenewal: Close cancels the background renewal's write
// in flight and returns once the renewal has ended; the lease writes
// nothing after it.
func TestCloseEndsTheRenewal(t *testing.T) {
	t.Parallel()
	store := memstore.NewGated(8)
	l := lease.New(store, "k", 4, seconds, nil)
	close(store.Release)
	require.NoError(t, l.Extend(context.Background(), 100))
	<-store.Entered
	store.Release = make(chan struct{}) // the next write waits
	l.ExtendSoon(103)
	testwait.Recv(t, store.Entered, "the background renewal's write")

	closed := make(chan struct{})
	go func() {
		l.Close()
		close(closed)
	}()
	testwait.Recv(t, closed, "Close, which cancels the write in flight")
	assert.True(t, l.Idle(), "the renewal ended")
	assert.True(t, l.Allows(104))
	assert.False(t, l.Allows(105), "the canceled write leased nothing")

	calls := store.Calls()
	require.ErrorIs(t, l.Extend(context.Background(), 200), lease.ErrClosed)
	l.ExtendSoon(104)
	assert.True(t, l.Idle(), "no renewal after Close")
	assert.Equal(t, calls, store.Calls())
}

// TestExtendUnderTheCallersContext: a caller whose context ends stops
// waiting and abandons its write; a caller that waited for that write
// then writes itself, and the counts show both.
func TestExtendUnderTheCallersContext(t *testing.T) {
	t.Parallel()
	store := memstore.NewGated(8)
	l := lease.New(store, "k", 4, seconds, nil)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- l.Extend(ctx, 100) }()
	testwait.Recv(t, store.Entered, "the first caller's write")

	waiter := make(chan error, 1)
	go func() { waiter <- l.Extend(context.Background(), 100) }()
	cancel()
	assert.ErrorIs(t, testwait.Recv(t, first, "the first caller's return once its context ended"), context.Canceled)
	testwait.Recv(t, store.Entered, "the waiter's own write")
	close(store.Release)
	require.NoError(t, testwait.Recv(t, waiter, "the waiter's return"))
	assert.True(t, l.Allows(104))
	writes, failures := l.Counts()
	assert.Equal(t, [2]uint64{1, 1}, [2]uint64{writes, failures}, "one write, one abandoned")

	ended, stop := context.WithCancel(context.Background())
	stop()
	assert.ErrorIs(t, l.Extend(ended, 200), context.Canceled, "an ended context writes nothing")
	l.Close()
}

// holder is a store.Holder whose writes wait for the test, and which
// records the order of its events: a write's begin and end, a release.
type holder struct {
	memstore.Store
	entered, canceled, release chan struct{}

	mu     sync.Mutex
	events []string
	holds  int
}

func (h *holder) event(e string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *holder) Hold(ctx context.Context, key string) (store.Held, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.holds > 0 {
		return nil, fmt.Errorf("%w: %s", idkit.ErrHeld, key)
	}
	h.holds++
	h.events = append(h.events, "hold")
	return heldBy{h, func() error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.holds--
		h.events = append(h.events, "release")
		return nil
	}}, nil
}

// heldBy is a hold of a holder: its marks are the holder's.
type heldBy struct {
	*holder
	close func() error
}

func (h heldBy) Close() error { return h.close() }

// AdvanceHighWater sees its context end but, as a write already on its
// way to the disk, goes on until the test releases it.
func (h *holder) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	h.event("write")
	h.entered <- struct{}{}
	<-ctx.Done()
	h.canceled <- struct{}{}
	<-h.release
	h.event("written")
	return h.Store.AdvanceHighWater(context.Background(), key, t)
}

// TestCloseReleasesTheHoldAfterTheLastWrite: Start holds the key of a
// store.Holder, a second Start is refused, and Close releases the key only
// once the write in flight has ended, so that no write of this lease
// lands after another holder took the key.
func TestCloseReleasesTheHoldAfterTheLastWrite(t *testing.T) {
	t.Parallel()
	h := &holder{entered: make(chan struct{}, 1), canceled: make(chan struct{}, 1), release: make(chan struct{})}
	l := lease.New(h, "k", 4, seconds, nil)
	_, err := l.Start(context.Background())
	require.NoError(t, err)
	_, err = lease.New(h, "k", 4, seconds, nil).Start(context.Background())
	require.ErrorIs(t, err, idkit.ErrHeld, "a second lease on the key")
	assert.True(t, lease.Refused(err))

	extended := make(chan error, 1)
	go func() { extended <- l.Extend(context.Background(), 100) }()
	testwait.Recv(t, h.entered, "the write")
	closed := make(chan struct{})
	go func() {
		l.Close()
		close(closed)
	}()
	testwait.Recv(t, h.canceled, "Close's cancel of the write in flight")
	close(h.release)
	testwait.Recv(t, closed, "Close, once the write ended")
	assert.NoError(t, testwait.Recv(t, extended, "the Extend, whose write landed before the release"))
	h.mu.Lock()
	defer h.mu.Unlock()
	assert.Equal(t, []string{"hold", "write", "written", "release"}, h.events)
}

// TestNodeLost: a claim's refusal becomes the generator's ErrNodeLost; a
// claim closed under the generator keeps its words but not its kind, so
// that the generator is not taken for closed.
func TestNodeLost(t *testing.T) {
	t.Parallel()
	errLost := errkind.New(idkit.ErrNodeLost, "pkg: node claim lost")
	claimLost := errkind.New(idkit.ErrNodeLost, "claim: lost")
	claimClosed := errkind.New(idkit.ErrClosed, "claim: closed")

	err := lease.NodeLost(errLost, claimLost)
	assert.ErrorIs(t, err, errLost)
	assert.ErrorIs(t, err, claimLost, "the claim's error is kept")

	err = lease.NodeLost(errLost, fmt.Errorf("node 7: %w", claimClosed))
	assert.ErrorIs(t, err, errLost)
	assert.ErrorIs(t, err, idkit.ErrNodeLost)
	assert.NotErrorIs(t, err, idkit.ErrClosed, "the generator is not closed")
	assert.Equal(t, "pkg: node claim lost: node 7: claim: closed", err.Error())
}
