package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/raft/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/idkit/idkit"
)

// TestUnanswered: every form in which the client reports that etcd gave
// no answer maps to ErrUnavailable, in claims and in the log alike;
// etcd's refusals for good (permission denied, a failed login, a request
// too large) map to ErrRefused, and its other failures to ErrUnavailable. "No leader" reaches the client as an
// rpctypes.EtcdError, which is no gRPC status.
func TestUnanswered(t *testing.T) {
	cases := []struct {
		err        error
		unanswered bool
		cancelled  bool
		refused    bool
	}{
		{context.DeadlineExceeded, true, false, false},
		{context.Canceled, true, true, false},
		{clientv3.ErrNoAvailableEndpoints, true, true, false},
		{rpctypes.ErrNoLeader, true, false, false},
		{rpctypes.ErrGRPCNoLeader, true, false, false},
		{rpctypes.ErrTimeout, true, false, false},
		{status.Error(codes.Unavailable, "connection refused"), true, false, false},
		{status.Error(codes.DeadlineExceeded, "deadline"), true, false, false},
		{status.Error(codes.Canceled, "canceled"), true, true, false},
		{status.Error(codes.Unknown, "raft: stopped"), true, false, false},
		{status.Error(codes.Unknown, "not a primary lessor"), true, false, false},
		{raft.ErrStopped, true, false, false},
		{rpctypes.ErrGRPCStopped, true, false, false},
		{rpctypes.ErrLeaderChanged, true, false, false},
		{rpctypes.ErrGRPCRequestTooManyRequests, true, false, false},
		{rpctypes.ErrTooManyRequests, true, false, false},
		{rpctypes.ErrGRPCNoSpace, false, false, false},
		{status.Error(codes.Unknown, "something unknown"), false, false, false},
		{rpctypes.ErrLeaseNotFound, false, false, false},
		{rpctypes.ErrCompacted, false, false, false},
		{rpctypes.ErrPermissionDenied, false, false, true},
		{rpctypes.ErrGRPCPermissionDenied, false, false, true},
		{rpctypes.ErrGRPCRequestTooLarge, false, false, true},
		{rpctypes.ErrGRPCTooManyOps, false, false, true},
		{rpctypes.ErrGRPCAuthFailed, false, false, true},
		{status.Error(codes.PermissionDenied, "denied"), false, false, true},
		{errors.New("something else"), false, false, false},
	}
	for _, c := range cases {
		for _, err := range []error{c.err, fmt.Errorf("wrapped: %w", c.err)} {
			assert.Equal(t, c.unanswered, unanswered(err), "unanswered(%v)", err)
			assert.Equal(t, c.cancelled, cancelled(err), "cancelled(%v)", err)
			wrapped := etcdError("claim node 7", err)
			if c.refused {
				assert.ErrorIs(t, wrapped, ErrRefused, "etcdError(%v) = %v", err, wrapped)
				assert.ErrorIs(t, wrapped, idkit.ErrRefused)
				assert.NotErrorIs(t, wrapped, idkit.ErrUnavailable, "not retryable")
			} else {
				assert.ErrorIs(t, wrapped, ErrUnavailable, "etcdError(%v) = %v", err, wrapped)
				assert.NotErrorIs(t, wrapped, idkit.ErrRefused)
				assert.Equal(t, !c.unanswered, strings.Contains(wrapped.Error(), "etcd failed the request"), "etcdError(%v) = %v", err, wrapped)
			}
			assert.ErrorIs(t, wrapped, c.err)
			assert.Contains(t, wrapped.Error(), "claim node 7: ")
		}
	}
}
