package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

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
// did not answer (timeout, cancellation, no quorum or no endpoint), with
// what was being done in front.
func etcdError(what string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
	}
	return fmt.Errorf("fleet: %s: %w", what, err)
}
