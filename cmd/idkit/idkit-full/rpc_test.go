package main

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/testenv"
	idkitv1 "github.com/idkit/idkit/proto/idkit/v1"
	"github.com/idkit/idkit/proto/idkit/v1/idkitv1connect"
	"github.com/idkit/idkit/snowflake"
)

// startRPCServer runs "idkit serve" (this test binary as idkit) on a
// launch log with one launch, serving every scheme, snowflake with the
// jssafe preset, and the segment tag "order"; the test stops it with
// SIGTERM and checks that it stopped cleanly.
func startRPCServer(t *testing.T) *server {
	t.Helper()
	env := []string{clitest.OffsetEnv(0)}
	log := filepath.Join(t.TempDir(), "idkit.db")
	cmd := exec.Command(os.Args[0], "launch", "begin", "--log", log, "--ticket", "RPC")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	s := startServer(t, os.Args[0], env, "--node", "7", "--log", log, "--preset", "jssafe", "--segment-tag", "order")
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			assert.NoError(t, s.stop(t, syscall.SIGTERM), "exit after SIGTERM: %s", s.log())
		}
	})
	return s
}

// TestRPCClients calls a real serve process through the generated Connect
// client, over Connect and over gRPC (h2c), and through the generated
// grpc-go stub.
func TestRPCClients(t *testing.T) {
	t.Parallel()
	s := startRPCServer(t)
	ctx := context.Background()
	schemes := []string{"traceid", "snowflake", "decimalid", "objectid", "segment/order"}

	h1 := &http.Transport{}
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	defer h1.CloseIdleConnections()
	defer h2c.CloseIdleConnections()
	for _, tc := range []struct {
		name string
		tr   *http.Transport
		opts []connect.ClientOption
	}{
		{"connect", h1, nil},
		{"grpc", h2c, []connect.ClientOption{connect.WithGRPC()}},
	} {
		c := idkitv1connect.NewIDServiceClient(&http.Client{Transport: tc.tr}, s.url, tc.opts...)
		for _, scheme := range schemes {
			n := int64(1000)
			resp, err := c.Next(ctx, connect.NewRequest(&idkitv1.NextRequest{Scheme: scheme, N: &n, Format: idkitv1.Format_FORMAT_TEXT_AND_BINARY}))
			require.NoError(t, err, "%s: %s", tc.name, scheme)
			require.Len(t, resp.Msg.Ids, 1000, "%s: %s", tc.name, scheme)
			if scheme == "snowflake" {
				for _, v := range resp.Msg.Values {
					require.LessOrEqual(t, v, uint64(1)<<53, "a jssafe snowflake")
				}
			}
			got, err := c.Inspect(ctx, connect.NewRequest(&idkitv1.InspectRequest{Scheme: scheme, Id: resp.Msg.Ids[999]}))
			require.NoError(t, err, "%s: %s", tc.name, scheme)
			assert.Equal(t, resp.Msg.Ids[999], got.Msg.Parts[1].GetText())
		}
		_, err := c.Next(ctx, connect.NewRequest(&idkitv1.NextRequest{Scheme: "uuid"}))
		assert.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%s: %v", tc.name, err)
	}

	conn, err := grpc.NewClient("passthrough:///"+strings.TrimPrefix(s.url, "http://"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	gc := idkitv1.NewIDServiceClient(conn) // the generated grpc-go stub
	for _, scheme := range schemes {
		out, err := gc.Next(ctx, &idkitv1.NextRequest{Scheme: scheme}) // the binary form alone
		require.NoError(t, err, scheme)
		if scheme == "objectid" {
			assert.Len(t, out.Raw, 1)
			continue
		}
		require.Len(t, out.Values, 1, scheme)
		id := strconv.FormatUint(out.Values[0], 10)
		inspected, err := gc.Inspect(ctx, &idkitv1.InspectRequest{Scheme: scheme, Id: id})
		require.NoError(t, err)
		assert.Equal(t, id, inspected.Parts[1].GetText())
		if scheme == "snowflake" {
			assert.Equal(t, snowflake.JSSafe().Name, inspected.Parts[2].GetText(), "the preset")
		}
	}
	n := int64(0)
	_, err = gc.Next(ctx, &idkitv1.NextRequest{Scheme: "traceid", N: &n})
	assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)

	health := grpchealth.NewClient(&http.Client{Transport: h2c}, s.url, connect.WithGRPC())
	hr, err := health.Check(ctx, &grpchealth.CheckRequest{Service: idkitv1connect.IDServiceName})
	require.NoError(t, err)
	assert.Equal(t, grpchealth.StatusServing, hr.Status)
}

// TestJSClient runs the JavaScript client's tests (clients/js, with
// node --test) against a real serve process. Without node it skips, and
// fails under CI=true.
func TestJSClient(t *testing.T) {
	t.Parallel()
	node := testenv.Tool(t, "node", "install Node.js 20 or later (apt-get install nodejs)")
	s := startRPCServer(t)
	cmd := exec.Command(node, "--test", "--test-reporter=tap", filepath.Join("..", "..", "..", "clients", "js")+string(filepath.Separator))
	cmd.Env = append(os.Environ(), "IDKIT_URL="+s.url)
	out, err := cmd.CombinedOutput()
	t.Logf("node --test clients/js/:\n%s", out)
	require.NoError(t, err, "the JavaScript client's tests failed")
	assert.Contains(t, string(out), "# fail 0")
	assert.NotContains(t, string(out), "# pass 0")
	assert.Contains(t, string(out), "# skipped 0")
}
