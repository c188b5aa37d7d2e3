package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
	"github.com/idkit/idkit/segment"
)

// DefaultPrefix is the key prefix when Options.Prefix is empty: the key
// of tag "orders" is "idkit:segment:orders".
const DefaultPrefix = "idkit:segment:"

// MaxPrefixLen is the longest key prefix, in bytes.
const MaxPrefixLen = 256

// Errors of this package. Bad options and arguments wrap
// segment.ErrInvalid, and a tag whose IDs ran out segment.ErrExhausted.
var (
	// ErrNotDurable reports a server that may lose its counters on a
	// restart (see the package documentation).
	ErrNotDurable = errkind.New(idkit.ErrNotDurable, "redisstore: counters are not durable")
	// ErrUnavailable marks an error of the server or the connection that
	// may pass: trying again later may succeed.
	ErrUnavailable = errkind.New(idkit.ErrUnavailable, "redisstore: server unavailable")
	// ErrRefused marks the server's refusal for good: a failed login or a
	// missing permission (NOAUTH, WRONGPASS, NOPERM).
	ErrRefused = errkind.New(idkit.ErrRefused, "redisstore: refused by the server")
	// ErrClosed reports a call on a closed Store, or on a Counter of one.
	ErrClosed = errkind.New(idkit.ErrClosed, "redisstore: store closed")
)

// serverError marks err, an error of the server or the connection, as
// ErrRefused or ErrUnavailable, its message unchanged.
func serverError(err error) error {
	var reply redis.Error
	if errors.As(err, &reply) {
		for _, code := range []string{"NOAUTH", "WRONGPASS", "NOPERM"} {
			if strings.HasPrefix(reply.Error(), code) {
				return errkind.Mark(ErrRefused, err)
			}
		}
	}
	return errkind.Mark(ErrUnavailable, err)
}

// Options configure a Store.
type Options struct {
	// Prefix goes before each tag to make its key; empty means
	// DefaultPrefix. Up to MaxPrefixLen bytes.
	Prefix string
	// AllowVolatile accepts a server without appendonly yes and
	// appendfsync always, whose counters a restart may set back, so that
	// IDs issued before it are issued again. Leave it false in production.
	AllowVolatile bool
}

// A Store reserves blocks with INCRBY. It is safe for concurrent use, and
// any number of processes and hosts may share the server.
type Store struct {
	client redis.UniversalClient
	own    bool
	closed atomic.Bool
	prefix string
}

var _ segment.BlockStore = (*Store)(nil)

// Open connects to the Redis server at addr (host:port, or a redis:// URL)
// and returns a store that closes the connection on Close.
func Open(ctx context.Context, addr string, opts Options) (*Store, error) {
	var ro *redis.Options
	if strings.Contains(addr, "://") {
		var err error
		if ro, err = redis.ParseURL(addr); err != nil {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // url.Error repeats the URL, password and all
			}
			return nil, fmt.Errorf("%w: redisstore: the URL does not parse (it may hold a password, so it is not repeated here): %w", segment.ErrInvalid, err)
		}
	} else {
		ro = &redis.Options{Addr: addr}
	}
	c := redis.NewClient(ro)
	s, err := New(ctx, c, opts)
	if err != nil {
		c.Close()
		return nil, err
	}
	s.own = true
	return s, nil
}

// New returns a store on client after checking the server's persistence
// (see the package documentation). Close leaves the client open. client
// may be any of go-redis's clients: a plain, Sentinel (failover) or
// Cluster client. On a cluster the check reads the node that answers
// CONFIG GET, so every node must run with the same persistence.
func New(ctx context.Context, client redis.UniversalClient, opts Options) (*Store, error) {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if len(opts.Prefix) > MaxPrefixLen {
		return nil, fmt.Errorf("%w: redisstore: Prefix is %d bytes, want up to %d", segment.ErrInvalid, len(opts.Prefix), MaxPrefixLen)
	}
	if err := client.Ping(ctx).Err(); err != nil {
		return nil, serverError(fmt.Errorf("redisstore: connect to %s: %w", addrOf(client), err))
	}
	if !opts.AllowVolatile {
		if err := checkDurable(ctx, client); err != nil {
			return nil, err
		}
	}
	return &Store{client: client, prefix: opts.Prefix}, nil
}

// checkDurable returns an error wrapping ErrNotDurable unless the server
// fsyncs every write to its append-only file before replying.
func checkDurable(ctx context.Context, client redis.UniversalClient) error {
	got := map[string]string{}
	for _, name := range []string{"appendonly", "appendfsync"} {
		m, err := client.ConfigGet(ctx, name).Result()
		if err != nil {
			return fmt.Errorf("%w: CONFIG GET %s failed, so the server's persistence cannot be checked (%w); set Options.AllowVolatile to accept counters a restart may set back", ErrNotDurable, name, err)
		}
		got[name] = m[name]
	}
	if got["appendonly"] != "yes" || got["appendfsync"] != "always" {
		return fmt.Errorf("%w: the server runs with appendonly %s and appendfsync %s, so a restart may set the counters back and repeat IDs; want appendonly yes and appendfsync always, or set Options.AllowVolatile to accept that",
			ErrNotDurable, orNone(got["appendonly"]), orNone(got["appendfsync"]))
	}
	return nil
}

// addrOf returns the addresses client connects to, for errors.
func addrOf(client redis.UniversalClient) string {
	switch c := client.(type) {
	case *redis.Client:
		return c.Options().Addr
	case *redis.ClusterClient:
		return strings.Join(c.Options().Addrs, ",")
	default:
		return "the server"
	}
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// Key returns the key that holds tag's counter: the prefix and the tag.
func (s *Store) Key(tag string) string { return s.prefix + tag }

// ReserveBlock reserves the next step IDs of tag with INCRBY. tag and step
// are checked with segment.CheckTag and segment.CheckStep.
func (s *Store) ReserveBlock(ctx context.Context, tag string, step int64) (segment.Block, error) {
	if err := segment.CheckTag(tag); err != nil {
		return segment.Block{}, fmt.Errorf("redisstore: %w", err)
	}
	if err := segment.CheckStep(step); err != nil {
		return segment.Block{}, fmt.Errorf("redisstore: tag %q: %w", tag, err)
	}
	last, err := s.incr(ctx, tag, step)
	if err != nil {
		return segment.Block{}, err
	}
	return segment.Block{First: last - step + 1, Last: last}, nil
}

func (s *Store) incr(ctx context.Context, tag string, n int64) (int64, error) {
	if s.closed.Load() {
		return 0, fmt.Errorf("%w: INCRBY %s %d", ErrClosed, s.Key(tag), n)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("redisstore: INCRBY %s %d: %w", s.Key(tag), n, err)
	}
	v, err := s.client.IncrBy(ctx, s.Key(tag), n).Result()
	switch {
	case err != nil && s.wouldOverflow(ctx, tag, n, err):
		return 0, fmt.Errorf("%w: redisstore: tag %q: %d more would pass 2^63-1", segment.ErrExhausted, tag, n)
	case err != nil && s.closed.Load():
		return 0, fmt.Errorf("%w: INCRBY %s %d: %w", ErrClosed, s.Key(tag), n, err)
	case err != nil:
		return 0, serverError(fmt.Errorf("redisstore: INCRBY %s %d: %w", s.Key(tag), n, err))
	case v < n:
		// Someone set the key below zero: the block would reach below 1.
		return 0, fmt.Errorf("redisstore: INCRBY %s %d returned %d, below 1 after the increment: the key was changed by something else", s.Key(tag), n, v)
	}
	return v, nil
}

// wouldOverflow reports whether err, an error of INCRBY key n, is the
// server's refusal to pass 2^63-1: a reply of the server (not of the
// network) while the key holds more than 2^63-1-n. It reads the counter
// rather than the error's text, which Redis does not promise to keep.
func (s *Store) wouldOverflow(ctx context.Context, tag string, n int64, err error) bool {
	var reply redis.Error
	if !errors.As(err, &reply) || errors.Is(err, redis.Nil) {
		return false
	}
	v, gerr := s.client.Get(ctx, s.Key(tag)).Int64()
	return gerr == nil && v > math.MaxInt64-n
}

// Close closes the connection if Open made it; later calls, and those of
// its Counters, fail with ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	if s.own {
		return s.client.Close()
	}
	return nil
}

// A Counter issues the IDs of one tag one INCR at a time: the plain
// Redis scheme, with no block held in the process, so that no ID is lost
// when a process stops, at the cost of a round trip per ID. A Counter and
// the blocks of ReserveBlock share the tag's key, so they may be mixed.
// It is safe for concurrent use.
type Counter struct {
	s   *Store
	tag string
}

// Counter returns a Counter for tag.
func (s *Store) Counter(tag string) (*Counter, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("%w: Counter(%q)", ErrClosed, tag)
	}
	if err := segment.CheckTag(tag); err != nil {
		return nil, fmt.Errorf("redisstore: %w", err)
	}
	return &Counter{s: s, tag: tag}, nil
}

// Next returns the tag's next ID: the value of INCR.
func (c *Counter) Next(ctx context.Context) (segment.ID, error) {
	v, err := c.s.incr(ctx, c.tag, 1)
	return segment.ID(v), err
}
