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
)

// TestUnanswered: every form in which the client reports that etcd gave
// no answer maps to ErrUnavailable, in claims and in the log alike, and
// etcd's refusals do not. "No leader" reaches the client as an
// rpctypes.EtcdError, which is no gRPC status.
func TestUnanswered(t *testing.T) {
	cases := []struct {
		err        error
		unanswered bool
		cancelled  bool
	}{
		{context.DeadlineExceeded, true, false},
		{context.Canceled, true, true},
		{clientv3.ErrNoAvailableEndpoints, true, true},
		{rpctypes.ErrNoLeader, true, false},
		{rpctypes.ErrGRPCNoLeader, true, false},
		{rpctypes.ErrTimeout, true, false},
		{status.Error(codes.Unavailable, "connection refused"), true, false},
		{status.Error(codes.DeadlineExceeded, "deadline"), true, false},
		{status.Error(codes.Canceled, "canceled"), true, true},
		{status.Error(codes.Unknown, "raft: stopped"), true, false},
		{status.Error(codes.Unknown, "not a primary lessor"), true, false},
		{raft.ErrStopped, true, false},
		{rpctypes.ErrGRPCStopped, true, false},
		{rpctypes.ErrLeaderChanged, true, false},
		{rpctypes.ErrGRPCRequestTooManyRequests, true, false},
		{rpctypes.ErrTooManyRequests, true, false},
		{rpctypes.ErrGRPCNoSpace, false, false},
		{status.Error(codes.Unknown, "something unknown"), false, false},
		{rpctypes.ErrLeaseNotFound, false, false},
		{rpctypes.ErrCompacted, false, false},
		{rpctypes.ErrPermissionDenied, false, false},
		{errors.New("something else"), false, false},
	}
	for _, c := range cases {
		for _, err := range []error{c.err, fmt.Errorf("wrapped: %w", c.err)} {
			assert.Equal(t, c.unanswered, unanswered(err), "unanswered(%v)", err)
			assert.Equal(t, c.cancelled, cancelled(err), "cancelled(%v)", err)
			wrapped := etcdError("claim node 7", err)
			assert.ErrorIs(t, wrapped, ErrUnavailable, "etcdError(%v) = %v", err, wrapped)
			assert.Equal(t, !c.unanswered, strings.Contains(wrapped.Error(), "etcd refused the request"), "etcdError(%v) = %v", err, wrapped)
			assert.ErrorIs(t, wrapped, c.err)
			assert.Contains(t, wrapped.Error(), "claim node 7: ")
		}
	}
}
