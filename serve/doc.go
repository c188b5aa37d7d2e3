// Package serve is idkit's ID service: an http.Handler that issues and
// explains IDs for clients in any language, with Prometheus metrics and a
// health check, and the production settings of the http.Server around it.
//
// # Endpoints
//
//	GET /v1/{scheme}?n=N     N new IDs (default 1, at most Options.MaxN):
//	                         {"ids":["...","..."]}, or one ID a line for
//	                         Accept: text/plain
//	GET /v1/{scheme}/{id}    the parts of an ID, as "idkit inspect --json"
//	                         prints them; traceid takes ?at=RFC3339
//	GET /v1/segment/{tag}?n=N      IDs of a segment allocator's tag
//	GET /v1/segment/{tag}/{id}     the tag and the ID
//	GET /livez               200 while the process serves (liveness: a
//	                         store outage never fails it)
//	GET /readyz              200 {"status":"ok",...}; 503 when a node claim
//	                         is lost, the launch log file is removed or
//	                         replaced, the store does not answer or its
//	                         last write failed (a full disk, EIO), a
//	                         segment tag's last block reservation failed,
//	                         a watched file holds nothing valid, or the
//	                         server is shutting down (readiness; /healthz
//	                         is the same)
//	GET /metrics             Prometheus text format
//	GET /openapi.json        the OpenAPI 3.1 document of these endpoints
//
// IDs are JSON strings, since JavaScript numbers lose integers above 2^53.
// Every error is JSON, {"error":"..."}, with status 400 (bad n, an ID that
// is not one of the scheme, an unknown parameter), 404 (unknown scheme or
// path), 405, 406 (an Accept header that allows neither JSON nor text), 413
// (a request with a body) or 503 (the generator cannot issue: a lost node
// claim, a failing store, a clock far behind); the message names the
// problem in words a client can act on, and nothing internal: a 404 does
// not list the schemes served, and a 503 names the kind of failure while
// the store's own error (files, hosts) goes to Options.Logger. Responses
// carry Cache-Control: no-store.
//
// # RPC
//
// The same port answers idkit.v1.IDService (proto/idkit/v1/idkit.proto) over
// gRPC, gRPC-Web and Connect, binary or JSON, through connectrpc.com/connect:
// Next issues IDs as fixed64 (12 bytes each for objectid), or as text, or
// in both forms when the request's format asks, each ID once otherwise;
// Inspect gives the parts GET /v1/{scheme}/{id} gives. A plain-text server speaks HTTP/2
// with prior knowledge (h2c) to gRPC clients, beside HTTP/1.1. Calls are
// authenticated, limited and refused as HTTP requests are, with the gRPC
// codes of the statuses: InvalidArgument (400), NotFound (404),
// Unauthenticated (401), ResourceExhausted (429) and Unavailable (503), the
// last two with a google.rpc.RetryInfo detail and Retry-After. They are
// counted in idkit_rpc_requests_total and idkit_rpc_request_duration_seconds,
// by procedure and scheme. gRPC's health service (grpc.health.v1.Health)
// answers with the readiness of /readyz, Check once and Watch at every
// change until the client leaves or the server shuts down, and server
// reflection lets a client such as grpcurl list and call the service
// without the .proto.
//
// # Listeners, reloads and bounds
//
// Serve runs the main port; ServeProbes runs /livez and /readyz alone on a
// listener of its own (no token, no client certificate, a cap, a share
// per address and short timeouts of its own) and ServeMetrics /metrics
// alone. At every listener's connection cap the connection idle longest
// makes room for a new client; on the main port one client address holds
// no more than its share (Limits.MaxConnsPerClient), and no more than
// Limits.MaxBusyConnsPerClient that are not idle; a new connection that
// has not sent its first request's header within the header timeout of
// its accept is closed. Behind a TCP proxy that sends the PROXY protocol
// (Options.ProxyProtocol), each of these sees the client's address. The
// token file and client CAs are read again as they change and fail
// closed: what a file no longer holds is no longer in use, a bad line or
// PEM block is skipped and logged, and a file with nothing valid leaves
// nothing in use and /readyz 503; a certificate that does not load leaves
// the last pair in use (see TLSFiles and Options.TokenFile). An RPC to IDService without a credential is refused
// before its body is read, and a message larger than 64 KiB once inflated
// is InvalidArgument. TLS 1.2 offers AEAD suites only; failed handshakes
// are counted, and logged once a minute at most.
//
// Limits bound each client (a token, a certificate, or an address: the one
// a PROXY header names, see Options.ProxyProtocol, or the one
// X-Forwarded-For names when a trusted proxy sends it, see
// Options.TrustedProxies) and all clients together: a ceiling per scheme,
// shared so that the busiest clients leave the others their fair share.
//
// # Schemes
//
// Options names the generators to serve by their options: traceid and
// snowflake (a fixed node, or a fleet.Claim), decimalid (a launch and a
// generator-id source), objectid, and segment allocators, one per tag.
// New builds them. With Options.Store (launchlog.Log or fleet.Log) traceid
// and snowflake keep high-water marks there and decimalid takes its
// generator ids from it; Options.Blocks reserves the segment blocks (the
// same launch log, or a PostgreSQL, MariaDB or Redis store), so that a
// restarted server never repeats an ID, whether it stopped cleanly or was
// killed; Options.Launches adds a launch's record to a DecimalId's
// inspection. A restarted traceid or snowflake generator waits, on its
// first request, until the clock has passed the marks the previous run
// left (about the lease, a second by default).
//
// Every generator is an idkit.Generator: the server takes IDs with
// FillContext under the request's context, so a request whose client has
// gone stops taking IDs, even while it waits for the clock or the store,
// and Shutdown and Close close every generator it built.
//
// # Metrics
//
// The server registers its metrics in a registry of its own (Registry), not
// the global one: IDs issued per scheme, request latency per route and
// scheme (a histogram with buckets from 25µs), requests by status, clock
// anomalies, waits and exhausted ticks read from the generators' Stats,
// store errors by operation, node claim state, the node claims lost and
// claimed again, and the Go and process collectors.
//
// # Speed
//
// A batch is filled from the generator in runs of up to 512 IDs (one
// atomic add each) into an array on the stack, and written into a pooled
// buffer with whole-array copies: an ID that is the last plus a power of
// ten (the next counter value) costs a carry in the last ID's digits, not a
// conversion. A request allocates the same few objects whatever N is.
package serve
