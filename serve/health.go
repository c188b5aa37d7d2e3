package serve

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idkit/idkit/serve/internal/reload"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idkit/idkit"
	idstore "github.com/idkit/idkit/store"
)

// countingStore is the server's Store with its errors counted, and with
// the outcome of its last write kept for /healthz: a store may answer
// reads while it cannot write (a full disk, EIO on fsync), and the server
// is not ready then.
type countingStore struct {
	Store
	errors *prometheus.CounterVec

	mu       sync.Mutex
	writeErr error  // of the last write; nil once one succeeds
	failures uint64 // writes that failed, to tell a probe's result stale
}

// wrote records a write's outcome. A caller that gave up is no failure
// of the store.
func (c *countingStore) wrote(err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeErr = err
	if err != nil {
		c.failures++
	}
}

// probed records the outcome of a write probe, which counts no failure:
// a failed probe leaves the store as failing as it found it.
func (c *countingStore) probed(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writeErr = err
}

// lastWrite returns the count of failed writes and the last write's error.
func (c *countingStore) lastWrite() (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failures, c.writeErr
}

func (c *countingStore) count(op string, err error) {
	if err != nil {
		c.errors.WithLabelValues(op).Inc()
	}
}

func (c *countingStore) HighWater(ctx context.Context, key string) (time.Time, error) {
	t, err := c.Store.HighWater(ctx, key)
	c.count("highwater", err)
	return t, err
}

func (c *countingStore) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	t, err := c.Store.AdvanceHighWater(ctx, key, t)
	c.count("advance", err)
	c.wrote(err)
	return t, err
}

func (c *countingStore) NextGenerator(ctx context.Context, launch int) (int, error) {
	g, err := c.Store.NextGenerator(ctx, launch)
	c.count("generator", err)
	c.wrote(err)
	return g, err
}

// marks returns the store the generators keep their marks in: the
// server's, with its errors counted, and holding keys where the server's
// store does (store.Holder), so that a generator on it holds its node.
// The hold a generator takes is kept in state, for /readyz.
func (c *countingStore) marks(state *holdState) idstore.HighWater {
	if _, ok := c.Store.(idstore.Holder); ok {
		return countingHolder{c, state}
	}
	return c
}

// countingHolder is a countingStore whose store holds keys.
type countingHolder struct {
	*countingStore
	state *holdState
}

var _ idstore.Holder = countingHolder{}

func (c countingHolder) Hold(ctx context.Context, key string) (idstore.Held, error) {
	held, err := c.Store.(idstore.Holder).Hold(ctx, key) // refused at start, if at all: not a store error
	if err != nil {
		return nil, err
	}
	h := countingHeld{Held: held, c: c.countingStore}
	if r, ok := held.(idstore.Revocable); ok {
		c.state.held.Store(&r)
	}
	return h, nil
}

// fileChecker is a store that says whether the file this process writes
// it through is still at its path: launchlog.Log.Check.
type fileChecker interface{ Check() error }

// logFile watches the server's launch log file for a removal or a
// replacement under the server, after which a decimalid generator id or a
// segment block it handed out could be handed out again from the file at
// its path: decimalid and the segment tags reserved in the log then stop
// before their next ID, as traceid and snowflake do when their hold is
// lost, and /readyz says why.
type logFile struct {
	store fileChecker
	next  atomic.Int64          // when to look again, Unix ns of the monotonic clock
	lost  atomic.Pointer[error] // why the file is lost, once it is
}

// logFileEvery is how often the file is looked at, at most: an open and
// an fstat, a few µs, not per request.
const logFileEvery = 100 * time.Millisecond

// newLogFile returns the watch of store's file, or nil if store cannot
// tell.
func newLogFile(store any) *logFile {
	if c, ok := store.(fileChecker); ok {
		return &logFile{store: c}
	}
	return nil
}

// logFileEpoch is the origin of logFile's monotonic readings.
var logFileEpoch = time.Now()

// err returns why the file is lost, once it is known; it looks at the
// file when logFileEvery has passed since it last did. It is nil-safe.
func (f *logFile) err() error {
	if f == nil {
		return nil
	}
	if err := f.lost.Load(); err != nil {
		return *err
	}
	now := int64(time.Since(logFileEpoch))
	next := f.next.Load()
	if now < next || !f.next.CompareAndSwap(next, now+int64(logFileEvery)) {
		return nil
	}
	if err := f.store.Check(); err != nil {
		f.lost.CompareAndSwap(nil, &err)
		return *f.lost.Load()
	}
	return nil
}

// guard makes sc's issue and values fail, before their next ID, once the
// server's launch log file is lost.
func (f *logFile) guard(sc *scheme) {
	if f == nil {
		return
	}
	issue, values := sc.issue, sc.values
	sc.issue = func(ctx context.Context, dst []byte, n int, asText bool) ([]byte, error) {
		if err := f.err(); err != nil {
			return dst, err
		}
		return issue(ctx, dst, n, asText)
	}
	sc.values = func(ctx context.Context, dst []uint64) error {
		if err := f.err(); err != nil {
			return err
		}
		return values(ctx, dst)
	}
}

// holdState is the node a scheme's generator holds in the server's store
// (a launch log), for /readyz: lost once the hold is, its log file removed
// or replaced under the server.
type holdState struct {
	held atomic.Pointer[idstore.Revocable]
}

// check returns nil while the hold is in place (or none was taken), and
// why it is lost once it is.
func (h *holdState) check() error {
	if r := h.held.Load(); r != nil {
		select {
		case <-(*r).Done():
			return (*r).Check(time.Time{})
		default:
		}
	}
	return nil
}

// countingHeld is a hold whose marks' reads and writes the server counts
// as its store's. It tells when it is lost where the hold it wraps does
// (store.Revocable), so that its generator stops at once.
type countingHeld struct {
	idstore.Held
	c *countingStore
}

// Check is the wrapped hold's, or nil if it cannot tell.
func (h countingHeld) Check(t time.Time) error {
	if r, ok := h.Held.(idstore.Revocable); ok {
		return r.Check(t)
	}
	return nil
}

// Done is the wrapped hold's, or nil if it cannot tell.
func (h countingHeld) Done() <-chan struct{} {
	if r, ok := h.Held.(idstore.Revocable); ok {
		return r.Done()
	}
	return nil
}

func (h countingHeld) HighWater(ctx context.Context, key string) (time.Time, error) {
	t, err := h.Held.HighWater(ctx, key)
	h.c.count("highwater", err)
	return t, err
}

func (h countingHeld) AdvanceHighWater(ctx context.Context, key string, t time.Time) (time.Time, error) {
	t, err := h.Held.AdvanceHighWater(ctx, key, t)
	h.c.count("advance", err)
	h.c.wrote(err)
	return t, err
}

// probeKey is the high-water key /healthz reads to see that the store
// answers, and writes, while the store's last write failed, to see that it
// writes again. Nothing else writes it.
const probeKey = "serve/healthz"

// health answers /healthz: the node claims, a probe of the store, and
// whether the server is shutting down.
type health struct {
	s *Server

	mu     sync.Mutex
	probed time.Time         // when the last probe ended, on the server's clock
	last   error             // its result
	seen   uint64            // the store's failed writes when it started
	mark   time.Time         // the last mark a probe wrote
	done   chan struct{}     // closed when the probe in flight ends; nil if none
	logged map[string]string // check → the failure last logged; guarded by mu
}

func newHealth(s *Server) *health { return &health{s: s, logged: make(map[string]string)} }

// log writes a check's failure to the server's log when it differs from
// the last one logged for that check, and forgets it once the check
// passes: the details a client is not told.
func (h *health) log(check string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil {
		delete(h.logged, check)
		return
	}
	if h.logged[check] == err.Error() {
		return
	}
	h.logged[check] = err.Error()
	if l := h.s.cfg.Logger; l != nil {
		l.Warn("serve: readiness check failed", "check", check, "err", err)
	}
}

// healthReport is the body of a /healthz answer.
type healthReport struct {
	Status string            `json:"status"` // "ok" or "fail"
	Error  string            `json:"error,omitempty"`
	Checks map[string]string `json:"checks"` // check → "ok" or its error
}

// check runs the checks. The report's Error names the first that failed.
func (h *health) check(ctx context.Context) healthReport {
	rep := healthReport{Status: "ok", Checks: make(map[string]string)}
	var errs []error
	// note records a check: its client-facing word (public) in the
	// report, its error in the log.
	note := func(name string, err error, public string) {
		h.log(name, err)
		if err == nil {
			rep.Checks[name] = "ok"
			return
		}
		rep.Checks[name] = public
		errs = append(errs, fmt.Errorf("%s: %s", name, public))
	}
	if h.s.draining.Load() {
		note("server", errors.New("shutting down"), "shutting down")
	}
	now := h.s.clk.Now()
	for _, name := range h.s.names {
		if c := h.s.schemes[name].claim; c != nil {
			note(name+" node claim", c.Check(now), "lost")
		}
		if held := h.s.schemes[name].hold; held != nil {
			if err := held.check(); err != nil {
				note(name+" node", err, "lost: the launch log file was removed or replaced; restart the server")
			}
		}
	}
	if err := h.s.logFile.err(); err != nil {
		note("launch log", err, "lost: the launch log file was removed or replaced; restart the server")
	}
	for _, w := range h.s.watched {
		err := w.State()
		note(w.Name, err, reload.Reason(err))
	}
	if h.s.store != nil {
		err := h.probe(ctx)
		note("store", err, storeReason(err))
	}
	// A segment tag's store is as its last reservation found it: the
	// allocator reserves the next block once a tenth of the current one
	// is issued, so a store that fails shows here while the blocks in
	// hand still serve, and the allocator's retries in the background
	// make the tag ready again once the store answers.
	for _, name := range h.s.names {
		if b := h.s.schemes[name].blocks; b != nil {
			err := b.state()
			note(name+" store", err, storeReason(err))
		}
	}
	if len(errs) > 0 {
		rep.Status = "fail"
		rep.Error = errors.Join(errs...).Error()
	}
	return rep
}

// probe reads the store, or returns the result of a probe that ended less
// than ProbeInterval ago and before any write failed since. At most one
// probe runs at a time; a caller waits for it at most ProbeTimeout.
func (h *health) probe(ctx context.Context) error {
	failures, _ := h.s.store.lastWrite()
	h.mu.Lock()
	if h.done == nil && !h.probed.IsZero() && h.s.clk.Now().Sub(h.probed) < h.s.cfg.ProbeInterval && h.seen == failures {
		err := h.last
		h.mu.Unlock()
		return err
	}
	if h.done == nil {
		h.done = make(chan struct{})
		go h.run(h.done)
	}
	done := h.done
	h.mu.Unlock()
	timer := time.NewTimer(h.s.cfg.ProbeTimeout)
	defer timer.Stop()
	select {
	case <-done:
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.last
	case <-timer.C:
		h.s.store.count("probe", errNoAnswer)
		return fmt.Errorf("%w within %v", errNoAnswer, h.s.cfg.ProbeTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

var errNoAnswer = errors.New("no answer")

// storeReason tells a client why a store check failed, by the error's
// kind: refused (a missing privilege, a failed login: trying again will
// not help until an operator acts), unavailable, or no answer in time.
// The store's own error goes to the log.
func storeReason(err error) string {
	switch {
	case errors.Is(err, errNoAnswer):
		return err.Error() // "no answer within 2s": nothing of the store
	case errors.Is(err, idkit.ErrRefused):
		return "refused"
	case errors.Is(err, idkit.ErrCorrupt):
		return "corrupt"
	case errors.Is(err, idkit.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return "unavailable"
	}
	return "failing"
}

// run probes the store once: it reads the probe key, or, while the
// store's last write failed, moves the key's mark, since a store that
// cannot write may still read. A write that succeeds makes the server
// ready again, so that a server taken out of service for a full disk comes
// back when space returns, though no request reaches it meanwhile.
func (h *health) run(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), h.s.cfg.ProbeTimeout)
	defer cancel()
	failures, writeErr := h.s.store.lastWrite()
	var err error
	if writeErr == nil {
		_, err = h.s.store.Store.HighWater(ctx, probeKey)
	} else {
		_, err = h.s.store.Store.AdvanceHighWater(ctx, probeKey, h.nextMark())
		h.s.store.probed(err)
	}
	h.s.store.count("probe", err)
	h.mu.Lock()
	h.last, h.probed, h.seen, h.done = err, h.s.clk.Now(), failures, nil
	h.mu.Unlock()
	close(done)
}

// nextMark returns the mark a write probe moves the probe key to: the
// server's time, and past the last one written, so that the store has
// something to write even while the clock stands still.
func (h *health) nextMark() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.s.clk.Now().Truncate(time.Millisecond)
	if !t.After(h.mark) {
		t = h.mark.Add(time.Millisecond)
	}
	h.mark = t
	return t
}
