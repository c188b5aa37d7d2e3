package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/clock"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/traceid"
)

// loadOpenAPI loads and validates the OpenAPI document.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openAPI)
	require.NoError(t, err)
	require.True(t, doc.IsOpenAPI31OrLater(), "the document is OpenAPI %s, want 3.1", doc.OpenAPI)
	require.NoError(t, doc.Validate(context.Background()))
	return doc
}

// TestOpenAPI sends real requests to running servers, one for each
// documented path and status, and validates each request and response
// against the OpenAPI document with kin-openapi: a request the document
// calls invalid must be one the server refuses with 400, every response
// must be documented, with its status, headers and body, and every status
// the document names must have been seen.
func TestOpenAPI(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	router, err := gorillamux.NewRouter(doc)
	require.NoError(t, err)
	ctx := context.Background()

	// good serves every scheme; strict requires tokens and limits its
	// clients; broken has a store that fails, a block store that goes
	// down and a TraceId generator in its first second that does not wait.
	good := listen(t, newServer(t, allSchemes(t)))
	tokenFile := filepath.Join(t.TempDir(), "tokens")
	const token = "alice-0123456789abcdef"
	testcert.WriteFile(t, tokenFile, []byte("alice "+token+"\n"))
	strict := listen(t, newServer(t, Options{ObjectID: &objectid.Options{}, Blocks: newLog(t), Segments: []segment.Options{{Tag: "order"}},
		Clock: clock.NewFake(start), TokenFile: tokenFile, MaxN: 1000, Limits: Limits{IDsPerSecond: 1000, RequestsPerSecond: 100}}))
	st := &secretStore{Log: newLog(t)}
	blocks := &downBlocks{}
	brokenServer := newServer(t, Options{Store: st, Launches: st, Blocks: blocks, Clock: clock.NewFake(start),
		TraceID:   &traceid.Options{Node: 3, NoWait: true},
		DecimalID: &decimalid.Options{Launch: 1},
		Segments:  []segment.Options{{Tag: "t", Step: 10, MinStep: 10, MaxStep: 10, Timeout: testwait.Bound}}})
	broken := listen(t, brokenServer)

	client := httpClient(t, false)
	seen := make(map[string]bool) // "path status"
	type validity int
	const (
		valid   validity = iota // the document allows the request
		invalid                 // the document refuses it, as the server does
		either                  // the document cannot say (a format it does not assert)
	)
	do := func(base, target string, status int, v validity, header ...string) []byte {
		t.Helper()
		method, body := http.MethodGet, ""
		if strings.HasPrefix(target, "BODY ") {
			target, body = strings.TrimPrefix(target, "BODY "), "x"
		}
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, base+target, rd)
		require.NoError(t, err)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		route, params, err := router.FindRoute(req)
		require.NoError(t, err, "%s: no route in the document", target)
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		reqErr := openapi3filter.ValidateRequest(ctx, in)
		switch v {
		case valid:
			assert.NoError(t, reqErr, "%s: the document refuses the request", target)
		case invalid:
			assert.Error(t, reqErr, "%s: the document allows a request the server refuses", target)
		}
		if body != "" {
			req.Body = io.NopCloser(strings.NewReader(body)) // read by the validation
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, status, resp.StatusCode, "%s: %s", target, b)
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
			Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		out.SetBodyBytes(b)
		assert.NoError(t, openapi3filter.ValidateResponse(ctx, out), "%s: status %d: %s", target, status, b)
		seen[route.Path+" "+itoa(status)] = true
		return b
	}
	auth := []string{"Authorization", "Bearer " + token}

	// /v1/{scheme}
	do(good, "/v1/traceid", 200, valid)
	do(good, "/v1/snowflake?n=5", 200, valid)
	do(good, "/v1/decimalid?n=5", 200, valid, "Accept", "text/plain")
	do(good, "/v1/objectid?n=3", 200, valid, "Accept", "text/plain")
	do(good, "/v1/objectid?n=3", 200, valid)
	do(good, "/v1/traceid?n=0", 400, invalid)
	do(good, "/v1/traceid?n=abc", 400, invalid)
	do(good, "/v1/traceid?n=10001", 400, valid) // within the document's bound, beyond this server's
	do(good, "/v1/uuid", 404, valid)
	do(good, "/v1/segment", 404, valid)
	do(good, "/v1/traceid", 406, valid, "Accept", "image/png")
	do(good, "BODY /v1/traceid", 413, valid)
	do(strict, "/v1/objectid", 401, valid)
	do(strict, "/v1/objectid?n=1000", 200, valid, auth...)
	do(strict, "/v1/objectid", 429, valid, auth...)
	do(broken, "/v1/traceid", 503, valid)

	// /v1/{scheme}/{id}
	do(good, "/v1/traceid/4649612847423160321", 200, valid)
	do(good, "/v1/traceid/4649612847423160321?at=2027-01-01T00:00:00Z", 200, valid)
	do(good, "/v1/snowflake/1541815603606036480", 200, valid)
	do(good, "/v1/decimalid/1415-00092-00001", 200, valid)
	do(good, "/v1/objectid/65f1a2b3c4d5e6f708091a2b", 200, valid)
	do(good, "/v1/traceid/abc", 400, valid)
	do(good, "/v1/traceid/4649612847423160321?at=yesterday", 400, either)
	do(good, "/v1/snowflake/1?x=1", 400, valid)
	do(good, "/v1/uuid/1", 404, valid)
	do(good, "/v1/decimalid/10000100099", 404, valid)
	do(strict, "/v1/objectid/65f1a2b3c4d5e6f708091a2b", 401, valid)

	// /v1/segment/{tag}
	do(good, "/v1/segment/order", 200, valid)
	do(good, "/v1/segment/invoice?n=3", 200, valid, "Accept", "text/plain")
	do(good, "/v1/segment/order?n=0", 400, invalid)
	do(good, "/v1/segment/user", 404, valid)
	do(good, "/v1/segment/order", 406, valid, "Accept", "image/png")
	do(good, "BODY /v1/segment/order", 413, valid)
	do(strict, "/v1/segment/order", 401, valid)
	do(strict, "/v1/segment/order", 429, valid, auth...) // the objectid requests took the second's IDs

	// /v1/segment/{tag}/{id}
	do(good, "/v1/segment/order/1415", 200, valid)
	do(good, "/v1/segment/order/x", 400, valid)
	do(good, "/v1/segment/user/5", 404, valid)
	do(strict, "/v1/segment/order/5", 401, valid)

	// The rest, healthy.
	for _, p := range []string{"/livez", "/readyz", "/healthz", "/metrics"} {
		do(good, p, 200, valid)
	}
	var served map[string]any
	require.NoError(t, json.Unmarshal(do(good, "/openapi.json", 200, valid), &served))
	assert.Equal(t, "3.1.0", served["openapi"])

	// The broken server: its segment tag's blocks in hand run out once the
	// block store is down; its launch log and high-water store fail.
	do(broken, "/v1/segment/t?n=5", 200, valid)
	testwait.Until(t, func() bool {
		blocks.mu.Lock()
		defer blocks.mu.Unlock()
		return blocks.last == 20
	}, "the next block reserved ahead")
	blocks.mu.Lock()
	blocks.down = true
	blocks.mu.Unlock()
	do(broken, "/v1/segment/t?n=15", 200, valid)
	do(broken, "/v1/segment/t", 503, valid)
	st.fail.Store(true)
	do(broken, "/v1/decimalid/10000100001", 503, valid)
	do(broken, "/readyz", 503, valid)
	do(broken, "/healthz", 503, valid)
	do(broken, "/livez", 200, valid)

	// Every status the document names was seen.
	var missing []string
	for path, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for code := range op.Responses.Map() {
				if !seen[path+" "+code] {
					missing = append(missing, path+" "+code)
				}
			}
		}
	}
	slices.Sort(missing)
	assert.Empty(t, missing, "documented, but never provoked")
}

// TestOpenAPIServed: GET /openapi.json serves the document as it is in
// the repository, and other methods get 405.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	s := newServer(t, Options{ObjectID: &objectid.Options{}})
	resp := get(t, s, "/openapi.json")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, string(openAPI), body(t, resp))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/openapi.json", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
}
