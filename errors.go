// Package idkit holds what every idkit package shares: the shape of a
// generator ([Generator], [Stats]) and the kinds of error its generators
// and stores return.
//
// Every generator (traceid, snowflake, decimalid, objectid, flake128, and
// segment's Allocator) is a Generator of its own ID type, so that one
// function serves any of them:
//
//	func take[ID any](ctx context.Context, g idkit.Generator[ID], n int) ([]ID, error) {
//		ids := make([]ID, n)
//		k, err := g.FillContext(ctx, ids) // ctx ends a wait for the clock or the store
//		return ids[:k], err
//	}
//
// Each package keeps sentinels of its own, whose messages name the package
// (traceid.ErrStore, segment.ErrUnavailable, ...), and each of those is of
// one kind below, so that a caller holding IDs of several schemes tests
// one error:
//
//	if errors.Is(err, idkit.ErrUnavailable) { // traceid.ErrStore, segment.ErrUnavailable, fleet.ErrUnavailable, ...
//		// retry later: no ID was issued
//	}
//
// A store that refuses a request for good (a missing privilege, a failed
// login) says so with kind ErrRefused, which retrying does not help.
//
// A closed generator fails every call with an error of kind ErrClosed,
// never ErrUnavailable, so that a caller does not retry it:
//
//	if errors.Is(err, idkit.ErrClosed) { // traceid.ErrClosed, segment.ErrClosed, ...
//		// stop: this generator issues no more IDs
//	}
//
// The package sentinels stay: errors.Is(err, traceid.ErrStore) holds as
// before.
package idkit

import "errors"

// The kinds of error. Every package sentinel of an ID package, store or
// the service is one of these kinds, or of none where it is particular to
// its package (a parse error of a key file, a clock skew).
var (
	// ErrInvalid: an option, argument or text outside what is allowed.
	// The error names what was wrong and the allowed range.
	ErrInvalid = errors.New("idkit: invalid")
	// ErrUnavailable: the store a generator needs did not answer, or
	// failed, or the clock it reads stands too far back, so no ID could be
	// issued safely. Trying again later may succeed.
	ErrUnavailable = errors.New("idkit: store unavailable")
	// ErrNotDurable: a store whose writes could be lost in a crash, which
	// could hand out IDs again; refused unless the caller accepts that.
	ErrNotDurable = errors.New("idkit: store not durable")
	// ErrExhausted: the IDs of a unit ran out (a second's counters, a
	// tag's 2^63-1, a launch's generator ids); some recover as time
	// passes, others never do, as each sentinel says.
	ErrExhausted = errors.New("idkit: exhausted")
	// ErrNodeLost: the generator's node claim is lost, so it issues no
	// more IDs; a new claim is needed.
	ErrNodeLost = errors.New("idkit: node claim lost")
	// ErrHeld: another live process (or another generator of this one)
	// holds the node in the store, so issuing under it here would repeat
	// its IDs. The error names the holder. Retrying does not help while it
	// runs: use another node, stop the holder, or claim nodes in etcd.
	ErrHeld = errors.New("idkit: node held by another process")
	// ErrCorrupt: a store holds data that idkit did not write or that
	// breaks its rules (a damaged file, a foreign value, a bad block).
	// Nothing is issued from it, and retrying does not help: an operator
	// has to look.
	ErrCorrupt = errors.New("idkit: corrupt store")
	// ErrRefused: the store refused the request for a reason that trying
	// again does not change: a missing privilege, a failed login, a
	// request larger than it accepts. The error names the reason; an
	// operator has to act.
	ErrRefused = errors.New("idkit: refused by the store")
	// ErrClosed: the generator, store, claim or server was closed. No
	// call succeeds after Close, at once and for good, so retrying does
	// not help: use another one.
	ErrClosed = errors.New("idkit: closed")
)
