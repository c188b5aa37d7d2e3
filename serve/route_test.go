package serve

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/traceid"
)

// TestIDsRouteAsMux checks that the route matched before the multiplexer
// takes only requests that the multiplexer sends to GET /v1/{scheme},
// with the same scheme name, all of them but those with escapes in the
// path, and leaves every other request to it.
func TestIDsRouteAsMux(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{TraceID: &traceid.Options{Node: 7}})
	// The multiplexer's answer for {scheme}, from a multiplexer with the
	// server's patterns.
	var got string
	var hit bool
	ref := http.NewServeMux()
	ref.HandleFunc("GET /v1/{scheme}", func(_ http.ResponseWriter, r *http.Request) { got, hit = r.PathValue("scheme"), true })
	ref.HandleFunc("GET /v1/segment/{tag}", func(http.ResponseWriter, *http.Request) {})
	ref.HandleFunc("GET /v1/{scheme}/{id}", func(http.ResponseWriter, *http.Request) {})
	ref.HandleFunc("/", func(http.ResponseWriter, *http.Request) {})
	matched, want := 0, 0
	for _, line := range []string{
		"GET /v1/traceid", "HEAD /v1/traceid", "GET /v1/traceid?n=3", "GET /v1/segment", "GET /v1/nope",
		"POST /v1/traceid", "PUT /v1/traceid", "OPTIONS /v1/traceid", "DELETE /v1/traceid",
		"GET /v1/", "GET /v1", "GET /v1//traceid", "GET /v1/./traceid", "GET /v1/.", "GET /v1/..", "GET /v1/traceid/",
		"GET /v1/trace%69d", "GET /v1/trace%2Fid", "GET /v1/a%20b", "GET /v1/segment/order", "GET /v1/traceid/1",
		"GET //v1/traceid", "GET /V1/traceid", "GET /v1/traceid#x", "GET http://example.com/v1/traceid",
	} {
		r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(line + " HTTP/1.1\r\nHost: example.com\r\n\r\n")))
		require.NoError(t, err, line)
		got, hit = "", false
		ref.ServeHTTP(httptest.NewRecorder(), r) // sets hit and got
		if hit && r.URL.RawPath == "" {
			want++
		}
		name, ok := idsRoute(r)
		if !ok {
			// Left to the multiplexer: every other route, and paths with
			// escapes, which it unescapes segment by segment.
			assert.True(t, !hit || r.URL.RawPath != "", "%s: the multiplexer sends it to GET /v1/{scheme}", line)
			continue
		}
		if assert.True(t, hit, "%s: the multiplexer does not send it to GET /v1/{scheme}", line) {
			matched++
			assert.Equal(t, got, name, line)
		}
	}
	assert.Equal(t, want, matched, "requests routed before the multiplexer")
	assert.GreaterOrEqual(t, matched, 5)
	// And the server answers them as before.
	assert.Equal(t, http.StatusOK, get(t, s, "/v1/traceid?n=2").StatusCode)
	assert.Equal(t, http.StatusNotFound, get(t, s, "/v1/segment").StatusCode)
}
