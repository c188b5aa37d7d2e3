package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// withTimeout runs one etcd request under ctx bounded by d.
func withTimeout[T any](ctx context.Context, d time.Duration, do func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return do(ctx)
}

// etcdError wraps an error of the etcd client: ErrUnavailable when etcd
// did not answer (see unanswered), with what was being done in front.
func etcdError(what string, err error) error {
	if unanswered(err) {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
	}
	return fmt.Errorf("fleet: %s: %w", what, err)
}

// unanswered reports whether err means that etcd gave no answer: a timeout
// or cancellation, no endpoint to send to, or gRPC's Unavailable (no
// leader, a leader change, a request timed out inside etcd, a lost
// connection). The client reports the server's reasons as
// rpctypes.EtcdError, which carries a code but is no gRPC status, so both
// forms are checked.
func unanswered(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, clientv3.ErrNoAvailableEndpoints) {
		return true
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code() == codes.Unavailable
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}

// cancelled reports whether err means the request was cancelled, or had
// nowhere to go: waiting longer will not help.
func cancelled(err error) bool {
	return errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled ||
		errors.Is(err, clientv3.ErrNoAvailableEndpoints)
}
