package crosscheck

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/instagram"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/ordinal"
	"github.com/idkit/idkit/otelid"
	"github.com/idkit/idkit/publicid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/mysqlstore"
	"github.com/idkit/idkit/segment/pgstore"
	"github.com/idkit/idkit/segment/redisstore"
	"github.com/idkit/idkit/serve"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// TestKinds holds every package's sentinels to their kind: the one error
// vocabulary that callers test across schemes and stores.
func TestKinds(t *testing.T) {
	t.Parallel()
	kinds := map[error][]error{
		idkit.ErrInvalid: {
			traceid.ErrSyntax, traceid.ErrRange, traceid.ErrInvalid,
			snowflake.ErrSyntax, snowflake.ErrRange, snowflake.ErrInvalid,
			flake128.ErrSyntax, flake128.ErrRange, flake128.ErrInvalid,
			decimalid.ErrSyntax, decimalid.ErrRange, decimalid.ErrInvalid,
			objectid.ErrSyntax, objectid.ErrRange, objectid.ErrInvalid,
			segment.ErrSyntax, segment.ErrRange, segment.ErrInvalid,
			launchlog.ErrInvalid, launchlog.ErrNetworkFS, fleet.ErrInvalid, instagram.ErrInvalid, ordinal.ErrInvalid,
			publicid.ErrSyntax, publicid.ErrRange, publicid.ErrInvalid,
			otelid.ErrNil, serve.ErrInvalid,
		},
		idkit.ErrUnavailable: {
			traceid.ErrStore, snowflake.ErrStore, flake128.ErrStore, decimalid.ErrSource,
			segment.ErrUnavailable, fleet.ErrUnavailable, launchlog.ErrLocked, launchlog.ErrOpen,
		},
		idkit.ErrNotDurable: {pgstore.ErrNotDurable, mysqlstore.ErrNotDurable, redisstore.ErrNotDurable},
		idkit.ErrExhausted: {
			traceid.ErrExhausted, snowflake.ErrExhausted, snowflake.ErrExpired, segment.ErrExhausted,
			launchlog.ErrLaunchesExhausted, launchlog.ErrGeneratorsExhausted, fleet.ErrNoFreeNode,
		},
		idkit.ErrNodeLost: {traceid.ErrNodeLost, snowflake.ErrNodeLost, fleet.ErrNodeLost},
		idkit.ErrHeld:     {launchlog.ErrHeld, &launchlog.HeldError{Key: "k"}},
		idkit.ErrClosed: {
			traceid.ErrClosed, snowflake.ErrClosed, decimalid.ErrClosed, objectid.ErrClosed, flake128.ErrClosed,
			segment.ErrClosed,
		},
	}
	all := []error{idkit.ErrInvalid, idkit.ErrUnavailable, idkit.ErrNotDurable, idkit.ErrExhausted, idkit.ErrNodeLost, idkit.ErrHeld, idkit.ErrClosed}
	for kind, errs := range kinds {
		for _, err := range errs {
			assert.ErrorIs(t, err, kind, "%q", err)
			for _, other := range all {
				if other != kind {
					assert.False(t, errors.Is(err, other), "%q is also %q", err, other)
				}
			}
		}
	}
	// Sentinels particular to their package are of no kind.
	for _, err := range []error{
		snowflake.ErrClockBackwards, flake128.ErrClockBackwards, segment.ErrBadBlock,
		launchlog.ErrNoLaunch, launchlog.ErrCorrupt, fleet.ErrClockSkew, fleet.ErrCorrupt,
	} {
		for _, kind := range all {
			assert.False(t, errors.Is(err, kind), "%q is %q", err, kind)
		}
	}
}
