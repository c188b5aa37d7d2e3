package mysqlstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"

	"github.com/idkit/idkit/segment"
)

// A Pair is Flickr's pair of ticket servers: two servers (or two schemas)
// whose sessions run with auto_increment_increment = 2 and offsets 1 and
// 2, so that one hands out odd tickets and the other even ones. Requests
// alternate between them and fall over to the other when one fails.
//
// Blocks from a Pair are unique but do not ascend: the servers advance
// independently. A Pair is therefore not a segment.BlockStore. It is safe
// for concurrent use.
type Pair struct {
	sides  [2]*Store
	turn   atomic.Uint64
	closed atomic.Bool
}

// OpenPair connects to the servers at dsnA and dsnB, setting each
// session's auto_increment_increment to 2 and auto_increment_offset to 1
// on A and 2 on B, and checks that the server took them. The two must not
// share a database: the tables of one tag would be the same table.
func OpenPair(ctx context.Context, dsnA, dsnB string, opts Options) (*Pair, error) {
	p := &Pair{}
	for i, dsn := range []string{dsnA, dsnB} {
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("%w: mysqlstore: pair server %c: the DSN does not parse (it may hold a password, so it is not repeated here): %w", segment.ErrInvalid, 'A'+i, err)
		}
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["auto_increment_increment"] = "2"
		cfg.Params["auto_increment_offset"] = strconv.Itoa(i + 1)
		s, err := openConfig(ctx, cfg, opts)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("mysqlstore: pair server %c: %w", 'A'+i, err)
		}
		p.sides[i] = s
		var inc, off int
		if err := s.db.QueryRowContext(ctx, "SELECT @@session.auto_increment_increment, @@session.auto_increment_offset").Scan(&inc, &off); err != nil {
			p.Close()
			return nil, fmt.Errorf("mysqlstore: pair server %c: %w", 'A'+i, err)
		}
		if inc != 2 || off != i+1 {
			p.Close()
			return nil, fmt.Errorf("mysqlstore: pair server %c runs with auto_increment_increment %d and auto_increment_offset %d, want 2 and %d", 'A'+i, inc, off, i+1)
		}
	}
	return p, nil
}

// Reserve takes the next ticket of tag from one of the servers, taking
// turns and trying the other when one fails, and returns its block of
// Unit IDs. The error, when both fail, holds both servers' errors.
func (p *Pair) Reserve(ctx context.Context, tag string) (segment.Block, error) {
	if p.closed.Load() {
		return segment.Block{}, fmt.Errorf("%w: pair: reserve for tag %q", ErrClosed, tag)
	}
	if err := segment.CheckTag(tag); err != nil {
		return segment.Block{}, fmt.Errorf("mysqlstore: %w", err)
	}
	first := int(p.turn.Add(1) % 2)
	var errs [2]error
	for k := range 2 {
		i := (first + k) % 2
		b, err := p.sides[i].ReserveBlock(ctx, tag, 1)
		if err == nil {
			return b, nil
		}
		errs[i] = fmt.Errorf("server %c: %w", 'A'+i, err)
		if errors.Is(err, segment.ErrInvalid) || errors.Is(err, segment.ErrExhausted) || ctx.Err() != nil {
			return segment.Block{}, fmt.Errorf("mysqlstore: pair: %w", errs[i])
		}
	}
	return segment.Block{}, fmt.Errorf("mysqlstore: pair: both servers failed: %w", errors.Join(errs[0], errs[1]))
}

// Close closes the connections to both servers; later calls fail with
// ErrClosed.
func (p *Pair) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, s := range p.sides {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}
