package fleet

import (
	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

// Errors of this package. Every error it returns wraps one of these (or,
// for the launch log, one of launchlog's, so that callers test both
// backends alike) and says what was asked of etcd.
var (
	// ErrInvalid: an option or argument out of its range.
	ErrInvalid = errkind.New(idkit.ErrInvalid, "fleet: invalid argument")
	// ErrUnavailable: etcd did not answer within the timeout (no quorum,
	// no reachable endpoint, or a cancelled context), or failed the
	// request in a way that may pass (no space until an operator
	// compacts, a compacted revision, ...): trying again later may
	// succeed.
	ErrUnavailable = errkind.New(idkit.ErrUnavailable, "fleet: etcd unavailable")
	// ErrRefused: etcd refused the request for a reason that retrying
	// does not change: permission denied, a failed login, a request too
	// large or invalid. The error names it.
	ErrRefused = errkind.New(idkit.ErrRefused, "fleet: etcd refused the request")
	// ErrClosed: the claim was closed; it holds its node no more.
	ErrClosed = errkind.New(idkit.ErrClosed, "fleet: node claim closed")
	// ErrNoFreeNode: every node number of the range is claimed.
	ErrNoFreeNode = errkind.New(idkit.ErrExhausted, "fleet: no free node")
	// ErrNodeLost: the claim passed its local deadline, or etcd revoked it.
	ErrNodeLost = errkind.New(idkit.ErrNodeLost, "fleet: node claim lost")
	// ErrClockSkew: this host's clock is further from the live holders'
	// than the bound allows.
	ErrClockSkew = errkind.New(idkit.ErrUnavailable, "fleet: clock skew")
	// ErrCorrupt: a key under the prefix holds a value this package did not
	// write.
	ErrCorrupt = errkind.New(idkit.ErrCorrupt, "fleet: corrupt value")
)
