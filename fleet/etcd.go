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

// request sends one etcd request and retries it, within timeout, while no
// member can serve it (see retry). what says what was asked, for errors.
func request[T any](ctx context.Context, timeout time.Duration, what string, do func(context.Context) (T, error)) (T, error) {
	var out T
	err := retry(ctx, timeout, what, func(ctx context.Context) error {
		var err error
		if out, err = do(ctx); err != nil {
			return clientError{err}
		}
		return nil
	})
	return out, err
}

// retry runs attempt until it succeeds, within timeout under ctx: at once
// when it reports errConflict (another writer got there first; every
// write compares what it read, so trying again is safe), and after a short
// pause when the etcd client reports that no member could serve it (see
// unanswered), so that the client can move to another member. Each attempt
// gets a quarter of the timeout (at least a second, at most the timeout):
// a request that reached a member just as the leader failed gets no answer
// for several seconds, while a retry is served as soon as a new leader is
// elected.
//
// attempt marks the etcd client's errors as clientError; they are wrapped
// with what, as ErrUnavailable when no member answered. Its other errors
// pass through.
func retry(ctx context.Context, timeout time.Duration, what string, attempt func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	each := min(max(timeout/4, time.Second), timeout)
	pause := 10 * time.Millisecond
	for {
		actx, acancel := context.WithTimeout(ctx, each)
		err := attempt(actx)
		expired := actx.Err() != nil
		acancel()
		if err == nil {
			return nil
		}
		if errors.Is(err, errConflict) {
			continue
		}
		var ce clientError
		if !errors.As(err, &ce) {
			return err
		}
		err = ce.err
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("%w: %s: no answer within %v: %w", ErrUnavailable, what, timeout, err)
		case expired:
			continue // this attempt's share of the timeout ran out; try again
		case cancelled(err), !unanswered(err):
			return etcdError(what, err)
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %s: no answer within %v: %w", ErrUnavailable, what, timeout, err)
		}
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// errConflict reports that another writer changed a key between read and
// write; retry tries again.
var errConflict = errors.New("fleet: conflict")

// clientError is an error of the etcd client, which retry classifies.
type clientError struct{ err error }

func (e clientError) Error() string { return e.err.Error() }
func (e clientError) Unwrap() error { return e.err }

// etcdError wraps an error of the etcd client, with what was being done
// in front: in ErrUnavailable if etcd did not answer (see unanswered) or
// failed the request in a way that may pass, in ErrRefused if it refused
// the request for good (see refusedForGood).
func etcdError(what string, err error) error {
	switch {
	case unanswered(err):
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, err)
	case refusedForGood(err):
		return fmt.Errorf("%w: %s: %w", ErrRefused, what, err)
	}
	return fmt.Errorf("%w: %s: etcd failed the request: %w", ErrUnavailable, what, err)
}

// refusedForGood reports whether err is etcd's refusal of a request that
// no retry changes: permission denied, a failed authentication, or an
// invalid request (too large, too many operations in one transaction).
func refusedForGood(err error) bool {
	var code codes.Code
	var ee rpctypes.EtcdError
	var se interface{ GRPCStatus() *status.Status }
	switch {
	case errors.As(err, &ee):
		code = ee.Code()
	case errors.As(err, &se):
		code = se.GRPCStatus().Code()
	default:
		return false
	}
	return code == codes.PermissionDenied || code == codes.Unauthenticated || code == codes.InvalidArgument
}

// unanswered reports whether err means that no member could serve the
// request now, so that another member, or the same one a moment later,
// may: a timeout or cancellation, no endpoint to send to, gRPC's
// Unavailable (no leader, a leader change, a request timed out inside
// etcd, a stopped server, a lost connection), a member whose raft node is
// stopping ("raft: stopped", which etcd passes on as an unknown error), a
// member whose lessor is changing hands ("not a primary lessor", also
// unknown), or a member shedding load ("too many requests"). The client reports the
// server's reasons as rpctypes.EtcdError, which carries a code but is no
// gRPC status, so both forms are checked.
func unanswered(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, clientv3.ErrNoAvailableEndpoints) || says(err, errStopped) {
		return true
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code() == codes.Unavailable || ee.Error() == rpctypes.ErrTooManyRequests.Error()
	}
	var se interface{ GRPCStatus() *status.Status }
	if !errors.As(err, &se) {
		return false
	}
	switch s := se.GRPCStatus(); s.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	case codes.Unknown:
		return s.Message() == errStopped || s.Message() == errNotPrimary
	case codes.ResourceExhausted:
		return s.Message() == rpctypes.ErrTooManyRequests.Error()
	}
	return false
}

// errStopped is the text of raft's ErrStopped, which a member returns
// while its raft node stops: in process as itself, over gRPC as an
// unknown error. Matching its text spares the module all of raft.
const errStopped = "raft: stopped"

// says reports whether err, or an error it wraps, reads text.
func says(err error, text string) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == text {
			return true
		}
	}
	return false
}

// errNotPrimary is the text of etcd's lease.ErrNotPrimary, which a member
// returns for a lease request while its lessor is changing hands with the
// leadership, and which reaches the client as an unknown error.
const errNotPrimary = "not a primary lessor"

// cancelled reports whether err means the request was cancelled, or had
// nowhere to go: waiting longer will not help.
func cancelled(err error) bool {
	return errors.Is(err, context.Canceled) || status.Code(err) == codes.Canceled ||
		errors.Is(err, clientv3.ErrNoAvailableEndpoints)
}
