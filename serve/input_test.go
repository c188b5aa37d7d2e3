package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/objectid"
	idkitv1 "github.com/idkit/idkit/proto/idkit/v1"
)

// TestHeadIssuesNothing: HEAD /v1/{scheme}?n=1000 answers as a GET would,
// without a body, and issues nothing: idkit_ids_issued_total does not
// move, and the next GET's DecimalId is the one after the GET before.
func TestHeadIssuesNothing(t *testing.T) {
	t.Parallel()
	s := newServer(t, allSchemes(t))
	next := func() decimalid.ID {
		resp := get(t, s, "/v1/decimalid")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var got struct{ IDs []string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
		id, err := decimalid.Parse(got.IDs[0])
		require.NoError(t, err)
		return id
	}
	issued := func(scheme string) float64 {
		return metricValue(t, body(t, get(t, s, "/metrics")), `idkit_ids_issued_total{scheme="`+scheme+`"}`)
	}
	first := next()
	before := map[string]float64{}
	for _, scheme := range []string{"traceid", "decimalid"} {
		before[scheme] = issued(scheme)
	}
	for _, target := range []string{"/v1/traceid?n=1000", "/v1/decimalid?n=1000", "/v1/segment/order?n=1000"} {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(http.MethodHead, target, nil))
		assert.Equal(t, http.StatusOK, w.Code, target)
		assert.Equal(t, "application/json", w.Header().Get("Content-Type"), target)
		assert.Empty(t, w.Body.Bytes(), target)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/v1/traceid?n=0", nil))
	assert.Equal(t, http.StatusBadRequest, w.Code, "HEAD checks n as GET does")
	for scheme, n := range before {
		assert.Equal(t, n, issued(scheme), "%s issued by HEAD", scheme)
	}
	assert.Equal(t, first.Counter()+1, next().Counter(), "the GET after HEAD ?n=1000 takes the next DecimalId")
}

// TestErrorsQuoteLittle: an answer that names what a client sent quotes
// its first 64 bytes at most, over HTTP and RPC.
func TestErrorsQuoteLittle(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{ObjectID: &objectid.Options{}})
	long := strings.Repeat("x", 60_000)
	for _, target := range []string{"/v1/" + long[:4000], "/v1/objectid/" + long[:4000], "/v1/objectid?n=" + long[:4000], "/v1/objectid?" + long[:4000] + "=1", "/" + long[:4000]} {
		msg := body(t, get(t, s, target))
		assert.Contains(t, msg, "... (", target[:20])
		assert.Less(t, len(msg), 300, "the answer to %s...", target[:20])
	}
	url := listen(t, s)
	for _, p := range rpcProtocols {
		c := idClient(t, url, p.h2c, p.opts...)
		_, err := c.Next(context.Background(), connect.NewRequest(&idkitv1.NextRequest{Scheme: long}))
		require.Error(t, err, p.name)
		assert.Less(t, len(err.Error()), 300, "%s: %s...", p.name, err.Error()[:min(100, len(err.Error()))])
		assert.Contains(t, err.Error(), "(60000 bytes)", p.name)
		_, err = c.Inspect(context.Background(), connect.NewRequest(&idkitv1.InspectRequest{Scheme: "objectid", Id: long}))
		require.Error(t, err, p.name)
		assert.Less(t, len(err.Error()), 300, "%s: %s...", p.name, err.Error()[:min(100, len(err.Error()))])
	}
	assert.Equal(t, `"short"`, quote("short"))
	assert.Equal(t, strconv.Quote(strings.Repeat("y", 64))+"... (65 bytes)", quote(strings.Repeat("y", 65)))
}

// lockedBuffer is a buffer that several goroutines write, for a logger.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestUnauthenticatedRPCLogsNothing: calls without a token are refused
// over every protocol, Connect's with the WWW-Authenticate challenge, and
// none of them writes to the log (gRPC's error metadata travel as
// trailers, where the challenge is not allowed and would be logged).
func TestUnauthenticatedRPCLogsNothing(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	testcert.WriteFile(t, tokenFile, []byte("alice alice-0123456789abcdef\n"))
	var log lockedBuffer
	s := newServer(t, Options{ObjectID: &objectid.Options{}, TokenFile: tokenFile,
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	url := listen(t, s)
	for _, p := range rpcProtocols {
		c := idClient(t, url, p.h2c, p.opts...)
		for range 20 {
			_, err := c.Next(context.Background(), nextRequest("objectid", 1))
			require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%s: %v", p.name, err)
			if p.name == "connect" {
				var ce *connect.Error
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, `Bearer realm="idkit"`, ce.Meta().Get("WWW-Authenticate"))
			}
		}
	}
	assert.Empty(t, log.String(), "the log after 80 calls without a token")
}
