package fleet

import (
	"errors"

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
	// no reachable endpoint, or a cancelled context), or refused the
	// request (the error says "etcd refused the request").
	ErrUnavailable = errkind.New(idkit.ErrUnavailable, "fleet: etcd unavailable")
	// ErrNoFreeNode: every node number of the range is claimed.
	ErrNoFreeNode = errkind.New(idkit.ErrExhausted, "fleet: no free node")
	// ErrNodeLost: the claim passed its local deadline, or etcd revoked it.
	ErrNodeLost = errkind.New(idkit.ErrNodeLost, "fleet: node claim lost")
	// ErrClockSkew: this host's clock is further from the live holders'
	// than the bound allows.
	ErrClockSkew = errors.New("fleet: clock skew")
	// ErrCorrupt: a key under the prefix holds a value this package did not
	// write.
	ErrCorrupt = errors.New("fleet: corrupt value")
)
