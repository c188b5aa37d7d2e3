package serve

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/proto/idkit/v1/idkitv1connect"
	"github.com/idkit/idkit/traceid"
)

// TestRPCHealthWatch: grpc.health.v1.Health/Watch, called with grpc-go's
// client as a gRPC load balancer or Kubernetes' gRPC probe calls it,
// sends the status at once and then each change, as the checks of /readyz
// find it every ProbeInterval on the server's clock; Shutdown sends
// NOT_SERVING and ends the stream instead of waiting for it.
func TestRPCHealthWatch(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(start)
	tc := &claim{node: 3}
	s, err := New(context.Background(), Options{TraceID: &traceid.Options{Claim: tc}, Clock: clk})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	t.Cleanup(func() { s.Close() })
	hc := healthpb.NewHealthClient(grpcConn(t, "http://"+ln.Addr().String()))
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Bound)
	defer cancel()

	unknown, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: "nope.v1.Nope"})
	require.NoError(t, err)
	_, err = unknown.Recv()
	assert.Equal(t, codes.NotFound, status.Code(err), "a service not served: %v", err)

	stream, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: idkitv1connect.IDServiceName})
	require.NoError(t, err)
	type msg struct {
		status healthpb.HealthCheckResponse_ServingStatus
		err    error
	}
	msgs := make(chan msg, 8)
	go func() {
		for {
			m, err := stream.Recv()
			msgs <- msg{m.GetStatus(), err}
			if err != nil {
				return
			}
		}
	}()
	next := func(what string) msg { t.Helper(); return testwait.Recv(t, msgs, what) }

	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, next("the status at once").status)
	tc.lost.Store(true)
	testwait.Sleepers(t, clk, 1) // the watch waits for its next check
	clk.Advance(time.Second)
	assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, next("the change to NOT_SERVING").status, "the node claim is lost")
	tc.lost.Store(false)
	testwait.Sleepers(t, clk, 1)
	clk.Advance(time.Second)
	assert.Equal(t, healthpb.HealthCheckResponse_SERVING, next("the change back to SERVING").status)
	testwait.Sleepers(t, clk, 1)
	clk.Advance(time.Second) // no change: nothing is sent

	stopped := make(chan error, 1)
	go func() { stopped <- s.Shutdown(ctx) }()
	require.NoError(t, testwait.Recv(t, stopped, "return from Shutdown with a watch open"))
	assert.ErrorIs(t, testwait.Recv(t, served, "return from Serve"), http.ErrServerClosed)
	m := next("the status sent at Shutdown")
	require.NoError(t, m.err)
	assert.Equal(t, healthpb.HealthCheckResponse_NOT_SERVING, m.status, "a server that stops is not serving")
	assert.ErrorIs(t, next("the end of the stream").err, io.EOF)
}
