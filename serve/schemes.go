package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/idkit/idkit/serve/internal/idtext"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/internal/explain"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/snowflake"
	idstore "github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

// run is how many IDs a scheme takes from its generator at a time, into
// an array on the stack: one atomic add per run.
const run = 512

// A scheme is one kind of ID the server issues, with its generator.
type scheme struct {
	name string
	// issue appends the text of n new IDs to dst: for JSON each quoted and
	// followed by a comma, for text each followed by a newline.
	issue func(ctx context.Context, dst []byte, n int, asText bool) ([]byte, error)
	// values fills dst with new IDs as integers, for the RPC API's binary
	// form; nil for objectid, whose IDs do not fit 64 bits.
	values func(ctx context.Context, dst []uint64) error
	// raw fills dst with the bytes of len(dst)/12 new ObjectIDs, for the
	// RPC API; nil for the other schemes.
	raw func(ctx context.Context, dst []byte) error
	// inspect explains one ID. Its error is an *httpError, or else one that
	// says the text is not an ID of the scheme (400).
	inspect func(id string, q url.Values) (*explain.Report, error)
	// stats returns the generator's counts of events.
	stats func() idkit.Stats
	// claim is the state of the generator's node claim; nil for a fixed
	// node.
	claim claimState
	// hold is the node the generator holds in the server's launch log;
	// nil without one.
	hold *holdState
	// blocks is a segment tag's block store, whose last reservation tells
	// readiness; nil for the other schemes.
	blocks *countingBlocks

	issued           prometheus.Counter
	idsLatency       prometheus.Observer
	inspectLatency   prometheus.Observer
	idsOK, inspectOK prometheus.Counter
}

// maxIDText is the longest ID text inspected: far above every scheme's
// longest form (DecimalId's split form, 26 bytes), and at most what an
// answer quotes of a client's input.
const maxIDText = quoteMax

// explain inspects the ID text id, refusing text longer than any ID
// before it is parsed, so that a parse error quotes no more than that.
func (sc *scheme) explain(id string, q url.Values) (*explain.Report, error) {
	if len(id) > maxIDText {
		return nil, fmt.Errorf("%s: ID %s is longer than any ID", sc.name, quote(id))
	}
	return sc.inspect(id, q)
}

// claimState is what the server reads of a node claim for its health
// and metrics: the node it holds, and whether it still holds it. A
// store.NodeClaim has it, and so does a generator that claims again.
type claimState interface {
	Node() int
	Check(t time.Time) error
}

// httpError is an error with the status it is answered with.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// issueDecimal returns the issue function of a scheme whose IDs are int64s
// written in decimal, taken from g a run at a time into a buffer kept
// between requests. It stops once ctx ends (the client has gone): between
// runs, and during a run's wait for the clock or the store, so that nobody
// takes IDs for a request no one will read.
func issueDecimal[T ~int64](g idkit.Generator[T]) func(ctx context.Context, dst []byte, n int, asText bool) ([]byte, error) {
	// The buffer is pooled rather than on the stack, where it would escape
	// through the call of fill.
	pool := &sync.Pool{New: func() any { return new([run]T) }}
	return func(ctx context.Context, dst []byte, n int, asText bool) ([]byte, error) {
		buf := pool.Get().(*[run]T)
		defer pool.Put(buf)
		var w idtext.Digits
		for n > 0 {
			if err := ctx.Err(); err != nil {
				return dst, err
			}
			k := min(n, run)
			if _, err := g.FillContext(ctx, buf[:k]); err != nil {
				return dst, err
			}
			dst = slices.Grow(dst, k*(maxDecimal+3)+len(w.Text))
			for _, id := range buf[:k] {
				w.Next(int64(id))
				dst = idtext.AppendDigits(dst, &w, asText)
			}
			n -= k
		}
		return dst, nil
	}
}

// defaults fills a generator's clock and logger from the server's where
// the options leave them nil.
func (s *Server) defaults(clk *clock.Clock, logger **slog.Logger) {
	if *clk == nil {
		*clk = s.clk
	}
	if *logger == nil {
		*logger = s.cfg.Logger
	}
}

// logf writes a record to Options.Logger, if any.
func (s *Server) logf(msg string, args ...any) {
	if s.cfg.Logger != nil {
		s.cfg.Logger.Warn(msg, args...)
	}
}

// claimFor takes the first node claim of scheme from Options.Claims, when
// it is set; the scheme's own options must then name no claim and no node.
func (s *Server) claimFor(ctx context.Context, scheme string, claim any, node bool) (idstore.Claim, error) {
	if s.cfg.Claims == nil {
		return nil, nil
	}
	if claim != nil || node {
		return nil, fmt.Errorf("%w: Options.Claims gives %s its node: leave its Claim nil and Node 0", ErrInvalid, scheme)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := s.cfg.Claims(ctx, scheme)
	if err != nil {
		return nil, fmt.Errorf("claiming a node for %s: %w", scheme, err)
	}
	return c, nil
}

// bind makes g the generator of sc, which Shutdown closes. On a claim c
// that the server took (Options.Claims), a lost claim is taken again and
// build makes the generator on the new one.
func bind[ID ~int64](s *Server, sc *scheme, g idkit.Generator[ID], c idstore.Claim, build func(context.Context, idstore.Claim) (idkit.Generator[ID], error)) {
	if c == nil {
		sc.issue, sc.values, sc.stats = issueDecimal(g), fillValues(g), g.Stats
		s.closers = append(s.closers, g.Close)
		return
	}
	r := newReclaiming(sc.name, claimed[ID]{g, c}, s.cfg.Claims, build, s.logf,
		s.m.claimsLost.WithLabelValues(sc.name), s.m.reclaimed.WithLabelValues(sc.name))
	sc.issue, sc.values, sc.stats, sc.claim = issueDecimal(r), fillValues(r), r.Stats, r
	s.closers = append(s.closers, r.Close)
}

// nodeOptions points at the fields of a node scheme's options (TraceId's
// and Snowflake's) that the server fills in.
type nodeOptions struct {
	claim  *idstore.NodeClaim
	store  *idstore.HighWater
	clock  *clock.Clock
	logger **slog.Logger
	node   bool // the options name a node of their own
}

// nodeScheme builds the scheme name of a generator that holds a node: on
// a claim of Options.Claims (taken again when lost), on the options' own
// claim, or on marks in the server's store, which the scheme's hold
// reports. newGen makes the generator from the options as they stand.
func nodeScheme[ID ~int64, G idkit.Generator[ID]](ctx context.Context, s *Server, name string, o nodeOptions, newGen func(context.Context) (G, error)) (*scheme, G, error) {
	var none G
	c, err := s.claimFor(ctx, name, *o.claim, o.node)
	if err != nil {
		return nil, none, err
	}
	if c != nil {
		*o.claim = c
	}
	s.defaults(o.clock, o.logger)
	var held *holdState
	if *o.store == nil && *o.claim == nil && s.store != nil {
		held = new(holdState)
		*o.store = s.store.marks(held) // a claim keeps its marks itself
	}
	g, err := newGen(ctx)
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, none, err
	}
	sc := &scheme{name: name, hold: held}
	if *o.claim != nil {
		sc.claim = *o.claim
	}
	bind(s, sc, idkit.Generator[ID](g), c, func(ctx context.Context, c idstore.Claim) (idkit.Generator[ID], error) {
		*o.claim = c
		return newGen(ctx)
	})
	return sc, g, nil
}

func (s *Server) traceIDScheme(ctx context.Context, o traceid.Options) (*scheme, error) {
	sc, g, err := nodeScheme[traceid.ID](ctx, s, "traceid", nodeOptions{&o.Claim, &o.Store, &o.Clock, &o.Logger, o.Node != 0},
		func(ctx context.Context) (*traceid.Generator, error) { return traceid.New(ctx, o) })
	if err != nil {
		return nil, err
	}
	bits := g.ThreadBits()
	sc.inspect = func(text string, q url.Values) (*explain.Report, error) {
		ref := s.clk.Now()
		if err := onlyParams(q, "at"); err != nil {
			return nil, err
		}
		if at := q.Get("at"); at != "" {
			t, err := time.Parse(time.RFC3339, at)
			if err != nil {
				return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("at %s is not an RFC 3339 time such as 2025-06-01T12:00:00Z", quote(at))}
			}
			ref = t
		}
		return explain.TraceID(text, ref, bits)
	}
	return sc, nil
}

func (s *Server) snowflakeScheme(ctx context.Context, o snowflake.Options) (*scheme, error) {
	sc, g, err := nodeScheme[snowflake.ID](ctx, s, "snowflake", nodeOptions{&o.Claim, &o.Store, &o.Clock, &o.Logger, len(o.Node) != 0},
		func(ctx context.Context) (*snowflake.Generator, error) { return snowflake.New(ctx, o) })
	if err != nil {
		return nil, err
	}
	layout := g.Layout()
	sc.inspect = func(text string, q url.Values) (*explain.Report, error) {
		if err := onlyParams(q); err != nil {
			return nil, err
		}
		return explain.Snowflake(text, layout)
	}
	return sc, nil
}

func (s *Server) decimalIDScheme(ctx context.Context, o decimalid.Options) (*scheme, error) {
	watch := newLogFile(o.Source) // where its generator ids come from
	if o.Source == nil && s.store != nil {
		o.Source, watch = s.store, s.logFile
	}
	if o.Source == nil {
		return nil, fmt.Errorf("%w: DecimalID needs a Source of generator ids, or Options.Store", ErrInvalid)
	}
	g, err := decimalid.New(ctx, o)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, g.Close)
	var lookup explain.LaunchLookup
	if launches := s.cfg.Launches; launches != nil {
		lookup = func(id decimalid.ID) (idstore.Launch, error) {
			l, err := launches.Get(context.Background(), id.Launch()) // the log bounds its own wait (Timeout)
			switch {
			case errors.Is(err, launchlog.ErrNoLaunch):
				return l, &httpError{http.StatusNotFound, fmt.Sprintf("launch %d of %s is not in the launch log", id.Launch(), id)}
			case err != nil:
				s.m.storeErrors.WithLabelValues("launch").Inc()
				if s.cfg.Logger != nil {
					s.cfg.Logger.Warn("serve: cannot read a launch record", "launch", id.Launch(), "err", err)
				}
				return l, &httpError{http.StatusServiceUnavailable, "launch " + strconv.Itoa(id.Launch()) + ": launch log unavailable; retry later"}
			}
			return l, nil
		}
	}
	sc := &scheme{name: "decimalid", issue: issueDecimal(g), values: fillValues(g), stats: g.Stats, inspect: func(text string, q url.Values) (*explain.Report, error) {
		if err := onlyParams(q); err != nil {
			return nil, err
		}
		return explain.DecimalID(text, lookup)
	}}
	watch.guard(sc)
	return sc, nil
}

func (s *Server) objectIDScheme(ctx context.Context, o objectid.Options) (*scheme, error) {
	if o.Clock == nil {
		o.Clock = s.clk
	}
	g, err := objectid.New(o)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, g.Close)
	sc := &scheme{name: "objectid", stats: g.Stats, raw: fillRaw(g)}
	sc.issue = func(ctx context.Context, dst []byte, n int, asText bool) ([]byte, error) {
		var buf [run / 2]objectid.ID
		var h idtext.OIDHex
		for n > 0 {
			k := min(n, len(buf))
			if _, err := g.FillContext(ctx, buf[:k]); err != nil { // the wait for the next second ends with ctx
				return dst, err
			}
			dst = slices.Grow(dst, k*(24+3))
			for i := range buf[:k] {
				h.Next((*[12]byte)(&buf[i]))
				dst = idtext.AppendHex(dst, &h, asText)
			}
			n -= k
		}
		return dst, nil
	}
	sc.inspect = func(text string, q url.Values) (*explain.Report, error) {
		if err := onlyParams(q); err != nil {
			return nil, err
		}
		return explain.ObjectID(text)
	}
	return sc, nil
}

func (s *Server) segmentScheme(ctx context.Context, o segment.Options) (*scheme, error) {
	if o.Clock == nil {
		o.Clock = s.clk
	}
	if o.Store == nil {
		o.Store = s.cfg.Blocks
	}
	if o.Store == nil {
		return nil, fmt.Errorf("%w: segment tag %q needs a Store of blocks, or Options.Blocks", ErrInvalid, o.Tag)
	}
	blocks := &countingBlocks{BlockStore: o.Store, errors: s.m.storeErrors}
	o.Store = blocks
	a, err := segment.New(ctx, o)
	if err != nil {
		return nil, err
	}
	s.closers = append(s.closers, a.Close)
	tag := a.Tag()
	sc := &scheme{name: "segment/" + tag, issue: issueDecimal(a), values: fillValues(a), stats: a.Stats, blocks: blocks, inspect: func(text string, q url.Values) (*explain.Report, error) {
		if err := onlyParams(q); err != nil {
			return nil, err
		}
		return explain.Segment(text, tag)
	}}
	newLogFile(blocks.BlockStore).guard(sc) // where its blocks come from
	return sc, nil
}

// countingBlocks is a segment tag's block store with its errors counted
// and the result of its last reservation kept, for readiness.
type countingBlocks struct {
	segment.BlockStore
	errors *prometheus.CounterVec

	mu   sync.Mutex
	last error // the last reservation's error; nil once one succeeded
}

func (c *countingBlocks) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	b, err := c.BlockStore.ReserveBlock(ctx, tag, step)
	if err != nil {
		c.errors.WithLabelValues("block").Inc()
	}
	c.mu.Lock()
	c.last = err
	c.mu.Unlock()
	return b, err
}

// state returns the error of the last reservation, nil if it succeeded.
func (c *countingBlocks) state() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// maxDecimal is the length of the longest int64 in decimal.
const maxDecimal = 19

// onlyParams returns a 400 error if q has a parameter not in allowed.
func onlyParams(q url.Values, allowed ...string) error {
	for k := range q {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			want := "none"
			if len(allowed) > 0 {
				want = fmt.Sprint(allowed)
			}
			return &httpError{http.StatusBadRequest, fmt.Sprintf("unknown parameter %s, want %s", quote(k), want)}
		}
	}
	return nil
}
