package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/serve"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

func init() { cli.Provide("serve", serveHelp, runServe) }

// serveHelp is the help of "idkit serve".
var serveHelp = `
Serve answers HTTP requests for IDs until it receives SIGTERM or SIGINT; it
then stops accepting connections, lets the requests in flight finish (up to
--shutdown-timeout) and releases its node claims.

	GET /v1/SCHEME?n=N    N new IDs (default 1, up to --max-n) as
	                      {"ids":["...",...]}, or one a line for
	                      Accept: text/plain
	GET /v1/SCHEME/ID     the parts of an ID as JSON, as inspect --json
	GET /v1/segment/TAG?n=N   dense IDs of a --segment-tag
	GET /livez            200 while the process serves (liveness)
	GET /readyz           200, or 503 once a node claim is lost, the
	                      launch log does not answer, a segment tag's
	                      store refused or failed its last reservation,
	                      the token file or a TLS file holds nothing
	                      valid, or while stopping (readiness; /healthz
	                      is the same)
	GET /metrics          Prometheus metrics
	GET /openapi.json     the OpenAPI 3.1 document of the HTTP API
	idkit.v1.IDService    Next and Inspect over gRPC (h2c without TLS),
	                      gRPC-Web and Connect JSON on the same port, e.g.
	                      POST /idkit.v1.IDService/Next with
	                      {"scheme":"traceid","n":3}; with gRPC health
	                      checks (Check and Watch) and server reflection
	                      (grpcurl list)

Error bodies name the kind of failure; the details (files, endpoints, store
errors) go to the log on stderr.

Errors are JSON {"error":"..."} with status 400, 404, 405, 406, 413 or 503.

Flags:

	--addr HOST:PORT    where to listen (default 127.0.0.1:8080; port 0
	                    picks a free one). The address is printed on stderr.
	                    On an address other hosts reach, serve warns at
	                    start if it asks no credential, or takes tokens
	                    without TLS
	--schemes LIST      comma-separated, of traceid, snowflake, decimalid,
	                    objectid (default all four; decimalid only when the
	                    launch log has a launch, unless named)
	--node N            node of traceid (0 to 65535) and of snowflake (all
	                    node fields as one number); required without --etcd
	--thread-bits T     traceid's thread bits, 0 to 16
	--preset NAME       snowflake layout (default twitter), one of
	                    ` + strings.Join(snowflake.PresetNames(), ", ") + `
	--FIELD V           a snowflake node field by name (such as --datacenter,
	                    --worker), instead of --node for snowflake
	--log FILE          the launch log (default idkit.db): high-water marks
	                    of traceid and snowflake, decimalid's launch and
	                    generator ids
	--etcd ENDPOINTS    the launch log in etcd instead; without --node,
	                    claim free nodes for traceid and snowflake there
	--etcd-prefix P     key prefix in etcd (default "idkit/")
	--launch N          decimalid's launch (default the current launch)
	--segment-tag TAG   also serve dense IDs of TAG from blocks reserved in
	                    the launch log (or etcd), at /v1/segment/TAG;
	                    repeatable, or comma-separated
` + segmentStoreHelp + `	--tls-cert FILE, --tls-key FILE
	                    serve HTTPS with this PEM certificate and key, read
	                    again when the files change (no restart, no
	                    dropped connection); TLS 1.2 with AEAD suites only,
	                    or 1.3. A pair that no longer loads leaves no
	                    certificate in use until it loads again
	--tls-client-ca FILE  require client certificates signed by these CAs
	                    (mutual TLS); a verified certificate authenticates
	                    a client as a token does. Read again when it
	                    changes: a CA taken out is no longer trusted, a
	                    bad PEM block is skipped and logged, and a bundle
	                    with no certificate trusts no client
	--token-file FILE   require a bearer token on /v1/ (Authorization:
	                    Bearer TOKEN): one a line, "NAME TOKEN" or TOKEN,
	                    16 characters or more; read again when it changes,
	                    once a second at most. Without one, /v1/ answers
	                    401. A bad line is skipped and logged with its
	                    number; a file emptied or deleted leaves no token
	                    valid and /readyz 503. /livez, /readyz and
	                    /metrics need none
	--probe-addr HOST:PORT  serve /livez and /readyz alone there too, for
	                    an orchestrator's probes: no token, no client
	                    certificate (HTTPS with --tls-cert), outside
	                    --max-conns (16 connections of its own), 2 s to
	                    read a request, 10 s idle
	--metrics-addr HOST:PORT  serve /metrics there instead, alone, on a
	                    listener of its own: plain HTTP, 5 s to read a
	                    request, 15 s to answer, 30 s idle
	--metrics-max-conns N  most connections open at once on --metrics-addr
	                    (default 64)
	--max-n N           most IDs a request may ask for (default 10000)
	--ids-per-client N  most IDs a client (a token, a client certificate, or
	                    else a remote host) may take a second (default
	                    1000000; -1 for no limit); over it, 429 with
	                    Retry-After. It also bounds how fast a client grows
	                    a segment tag's step
	--requests-per-client N  most requests to /v1/ a client may make a
	                    second (default 10000; -1 for no limit)
	--ids-per-node N    most IDs of one scheme the server issues a second
	                    to all clients together (default 4000000, just
	                    under a TraceId node; -1 for no ceiling). Each
	                    client that asked in the last second has a fair
	                    share of it; past its share a client gets only
	                    what the others under theirs leave, or 429
	--trusted-proxies CIDRS  comma-separated addresses or prefixes (such as
	                    10.0.0.0/8) of the proxies in front of the server:
	                    for a request from one of them, without a token
	                    or client certificate, the client is the address
	                    X-Forwarded-For names before the trusted proxies.
	                    Without it, every client behind a proxy is the
	                    proxy's address and shares its limits
	--max-conns N       most connections open at once on --addr (default
	                    4096; -1 for no limit); at the cap a new client
	                    closes the connection idle longest, or waits if
	                    none is idle. At start the limit on open files
	                    (RLIMIT_NOFILE) must cover the three listeners'
	                    caps and 64 more, or serve exits naming the numbers
	--max-conns-per-client N  most of them one client address (the
	                    connection's remote IP; behind a proxy, the
	                    proxy's) may hold, 1 to --max-conns (default a
	                    quarter of --max-conns, 1024; -1 for no limit).
	                    At it a new connection of that address closes
	                    the address's connection idle longest, or is
	                    closed at once if none is idle
	--idle-timeout D    how long a kept-alive connection may stay idle on
	                    --addr (default 2m)
	--inspect-launches  show the launch record (ticket, by, note) when a
	                    DecimalId is inspected; off by default, since any
	                    client may ask
	--shutdown-timeout D  how long requests in flight may take to finish
	                    on SIGTERM (default 10s)

The server holds its traceid and snowflake nodes in the launch log (--log)
while it runs: a second server, or an 'idkit new' call, for the same node
and log fails at once, naming the holder, and a server that finds its node
held refuses to start. A server that dies frees its nodes at once.

A restarted server never repeats an ID, whether stopped with SIGTERM or
killed: traceid and snowflake keep high-water marks in the launch log and a
restarted generator answers its first request once the clock has passed
them (about a second); decimalid takes a fresh generator id each start;
segment tags continue above the blocks reserved before; objectid draws
fresh random process bytes.

Examples:

	idkit launch begin --ticket REL-42
	idkit serve --node 1
	curl 'http://127.0.0.1:8080/v1/traceid?n=3'
	curl -H 'Accept: text/plain' 'http://127.0.0.1:8080/v1/snowflake?n=3'
	curl http://127.0.0.1:8080/v1/traceid/4649612847423160321
	idkit serve --addr :8080 --etcd 10.0.0.5:2379 --schemes traceid,decimalid
	idkit serve --node 7 --segment-tag order,invoice
	curl 'http://127.0.0.1:8080/v1/segment/order?n=5'
`

// fileReserve is how many descriptors serve keeps for its files and
// stores (the launch log, the TLS and token files, etcd and segment store
// connections, standard streams) beside its listeners' connections.
const fileReserve = 64

// serveSchemes are the schemes serve offers, in order.
var serveSchemes = []string{"traceid", "snowflake", "decimalid", "objectid"}

// serveStops holds, for consoles that tests make, a context whose end
// stops serve as SIGTERM does.
var serveStops sync.Map // *cli.Console → context.Context

func runServe(c *cli.Console, args []string) error {
	fs := cli.NewFlags("serve")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on, host:port")
	list := fs.String("schemes", strings.Join(serveSchemes, ","), "schemes to serve, comma-separated")
	node := fs.Int64("node", 0, "node of traceid and snowflake")
	threadBits := fs.Int("thread-bits", 0, "traceid's thread bits, 0 to 16")
	preset := fs.String("preset", "twitter", "snowflake layout")
	fields := make(map[string]*int64)
	for _, name := range cli.SnowflakeFieldNames() {
		fields[name] = fs.Int64(name, 0, "snowflake node field "+name)
	}
	where := cli.AddStoreFlags(fs, cli.DefaultLog)
	launch := fs.Int("launch", 0, "decimalid's launch, 1 to 99999 (default the current launch)")
	var tags []string
	fs.Func("segment-tag", "serve a segment allocator's tag at /v1/segment/TAG (repeatable, or comma-separated)", func(v string) error {
		for tag := range strings.SplitSeq(v, ",") {
			if err := segment.CheckTag(tag); err != nil {
				return err
			}
			if slices.Contains(tags, tag) {
				return fmt.Errorf("tag %q given twice", tag)
			}
			tags = append(tags, tag)
		}
		return nil
	})
	segmentStore := fs.String("segment-store", os.Getenv(envSegmentStore), "where segment blocks are reserved: a postgres://, mysql:// or redis:// URL")
	tlsCert := fs.String("tls-cert", "", "PEM certificate for HTTPS")
	tlsKey := fs.String("tls-key", "", "PEM private key for HTTPS")
	tlsClientCA := fs.String("tls-client-ca", "", "PEM CAs of the client certificates to require")
	tokenFile := fs.String("token-file", "", "file of bearer tokens that /v1/ requires")
	metricsAddr := fs.String("metrics-addr", "", "serve /metrics on this address instead")
	metricsMaxConns := fs.Int("metrics-max-conns", serve.DefaultMetricsMaxConns, "most connections open at once on --metrics-addr")
	probeAddr := fs.String("probe-addr", "", "serve /livez and /readyz alone on this address too")
	idleTimeout := fs.Duration("idle-timeout", 2*time.Minute, "how long a kept-alive connection may stay idle")
	maxN := fs.Int("max-n", serve.DefaultMaxN, "most IDs a request may ask for")
	idsPerClient := fs.Float64("ids-per-client", serve.DefaultIDsPerSecond, "most IDs a client may take a second")
	requestsPerClient := fs.Float64("requests-per-client", serve.DefaultRequestsPerSecond, "most requests a client may make a second")
	idsPerNode := fs.Float64("ids-per-node", serve.DefaultNodeIDsPerSecond, "most IDs of one scheme the server issues a second to all clients")
	var proxies []netip.Prefix
	fs.Func("trusted-proxies", "addresses or prefixes of the proxies whose X-Forwarded-For is believed, comma-separated", func(v string) error {
		for item := range strings.SplitSeq(v, ",") {
			p, err := parseProxy(strings.TrimSpace(item))
			if err != nil {
				return err
			}
			proxies = append(proxies, p)
		}
		return nil
	})
	maxConns := fs.Int("max-conns", serve.DefaultMaxConns, "most connections open at once")
	maxConnsPerClient := fs.Int("max-conns-per-client", 0, "most connections open at once from one client address (default a quarter of --max-conns)")
	inspectLaunches := fs.Bool("inspect-launches", false, "show the launch record when a DecimalId is inspected")
	grace := fs.Duration("shutdown-timeout", 10*time.Second, "how long requests in flight may take to finish on SIGTERM")
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", fs.Arg(0))
	}
	want, err := serveSchemeList(*list)
	if err != nil {
		return err
	}
	switch {
	case *maxN < 1 || *maxN > 1_000_000:
		return cli.Usagef("--max-n %d out of range, want 1 to 1000000", *maxN)
	case *grace < 0:
		return cli.Usagef("--shutdown-timeout %v is negative", *grace)
	case *idleTimeout <= 0:
		return cli.Usagef("--idle-timeout %v, want a positive duration such as 2m", *idleTimeout)
	case *metricsMaxConns < 1:
		return cli.Usagef("--metrics-max-conns %d, want 1 or more", *metricsMaxConns)
	case cli.IsSet(fs, "launch") && (*launch < 1 || *launch > decimalid.MaxLaunch):
		return cli.Usagef("--launch %d out of range, want 1 to %d", *launch, decimalid.MaxLaunch)
	}
	claiming := cli.IsSet(fs, "etcd") && !cli.IsSet(fs, "node")

	// Check every flag before opening the store or claiming a node.
	var layout snowflake.Layout
	if want["traceid"] {
		if !cli.IsSet(fs, "node") && !claiming {
			return cli.Usagef("traceid needs --node (0 to %d), or --etcd to claim one; --schemes leaves it out", traceid.MaxNode)
		}
		if cli.IsSet(fs, "node") && (*node < 0 || *node > traceid.MaxNode) {
			return cli.Usagef("--node %d out of range for traceid, want 0 to %d", *node, traceid.MaxNode)
		}
		if *threadBits < 0 || *threadBits > traceid.MaxThreadBits {
			return cli.Usagef("--thread-bits %d out of range, want 0 to %d", *threadBits, traceid.MaxThreadBits)
		}
	}
	var sfNode map[string]int64
	if want["snowflake"] {
		if layout, err = cli.PresetFlag(*preset); err != nil {
			return err
		}
		if !claiming {
			if sfNode, err = serveSnowflakeNode(fs, layout, *node, fields); err != nil {
				return err
			}
		}
	}

	l, err := where.Open(c)
	if err != nil {
		return err
	}
	cfg := serve.Options{
		Store:  l,
		Blocks: l,
		MaxN:   *maxN,
		Clock:  c.Clock,
		Logger: slog.New(slog.NewTextHandler(c.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if want["traceid"] {
		o := traceid.Options{Node: int(*node), ThreadBits: *threadBits}
		cfg.TraceID = &o
	}
	if want["snowflake"] {
		o := snowflake.Options{Layout: layout, Node: sfNode}
		cfg.Snowflake = &o
	}
	if want["decimalid"] {
		if !cli.IsSet(fs, "launch") {
			cur, err := l.Current(context.Background())
			switch {
			case errors.Is(err, launchlog.ErrNoLaunch) && !cli.IsSet(fs, "schemes"):
				fmt.Fprintf(c.Stderr, "idkit serve: decimalid not served: no launch in %s yet; record one with 'idkit launch begin %s'\n", where.Name(), where.Hint())
			case errors.Is(err, launchlog.ErrNoLaunch):
				return fmt.Errorf("decimalid: no launch in %s yet; record one with 'idkit launch begin %s', or give --launch N", where.Name(), where.Hint())
			case err != nil:
				return err
			default:
				*launch = cur.ID
			}
		}
		if *launch != 0 {
			cfg.DecimalID = &decimalid.Options{Launch: *launch}
		}
	}
	if want["objectid"] {
		cfg.ObjectID = &objectid.Options{}
	}
	if *inspectLaunches {
		cfg.Launches = l
	}
	if claiming {
		// The server claims the nodes, and claims again when a claim is
		// lost, under the fleet's fencing.
		cfg.Claims = func(ctx context.Context, scheme string) (store.Claim, error) {
			if scheme == "snowflake" {
				return cli.ClaimSnowflake(c, where, fs, layout, fields)
			}
			return where.Claim(c, "traceid", 0, traceid.MaxNode)
		}
	}
	switch {
	case (*tlsCert == "") != (*tlsKey == ""):
		return cli.Usagef("--tls-cert and --tls-key go together")
	case *tlsClientCA != "" && *tlsCert == "":
		return cli.Usagef("--tls-client-ca needs --tls-cert and --tls-key")
	case *tlsCert != "":
		cfg.TLS = &serve.TLSFiles{CertFile: *tlsCert, KeyFile: *tlsKey, ClientCAFile: *tlsClientCA}
	}
	cfg.TokenFile = *tokenFile
	for _, f := range []struct {
		name string
		v    float64
	}{{"--ids-per-client", *idsPerClient}, {"--requests-per-client", *requestsPerClient}, {"--ids-per-node", *idsPerNode}, {"--max-conns", float64(*maxConns)}} {
		if f.v == 0 || (f.v < 0 && f.v != -1) {
			return cli.Usagef("%s %v, want a positive number, or -1 for no limit", f.name, f.v)
		}
	}
	if cli.IsSet(fs, "max-conns-per-client") && *maxConnsPerClient != -1 {
		switch {
		case *maxConns > 0 && (*maxConnsPerClient < 1 || *maxConnsPerClient > *maxConns):
			return cli.Usagef("--max-conns-per-client %d out of range, want 1 to %d (--max-conns), or -1 for no limit", *maxConnsPerClient, *maxConns)
		case *maxConnsPerClient < 1:
			return cli.Usagef("--max-conns-per-client %d out of range, want 1 or more, or -1 for no limit", *maxConnsPerClient)
		}
	}
	cfg.Limits = serve.Limits{IDsPerSecond: *idsPerClient, RequestsPerSecond: *requestsPerClient, NodeIDsPerSecond: *idsPerNode,
		MaxConns: *maxConns, MaxConnsPerClient: *maxConnsPerClient}
	cfg.TrustedProxies = proxies
	cfg.SeparateMetrics = *metricsAddr != ""
	cfg.MetricsMaxConns = *metricsMaxConns
	cfg.IdleTimeout = *idleTimeout
	if *segmentStore != "" {
		if len(tags) == 0 {
			return cli.Usagef("--segment-store (or $%s) without --segment-tag: no tag to serve from it", envSegmentStore)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		blocks, closeBlocks, err := openSegmentStore(ctx, *segmentStore)
		cancel()
		if err != nil {
			return err
		}
		defer closeBlocks()
		cfg.Blocks = blocks
	}
	for _, tag := range tags {
		cfg.Segments = append(cfg.Segments, segment.Options{Tag: tag})
	}
	if cfg.TraceID == nil && cfg.Snowflake == nil && cfg.DecimalID == nil && cfg.ObjectID == nil && len(cfg.Segments) == 0 {
		return errors.New("no scheme left to serve")
	}

	// Stop on SIGTERM or SIGINT from here on, before the address is
	// printed, so that a signal sent as soon as it is known stops the
	// server gracefully.
	stop := context.Background()
	if ctx, ok := serveStops.Load(c); ok {
		stop = ctx.(context.Context)
	}
	stop, cancel := signal.NotifyContext(stop, os.Interrupt, syscall.SIGTERM)
	defer cancel()

	srv, err := serve.New(stop, cfg) // a signal ends a start that waits on a store or a claim
	if err != nil {
		return err
	}
	defer srv.Shutdown(context.Background()) // closes the generators if serving never starts
	if *maxConns < 0 {
		fmt.Fprintln(c.Stderr, "idkit serve: --max-conns -1: connections on --addr are bounded only by the limit on open files, which they may use up")
	} else if err := srv.CheckFileLimit(fileReserve); err != nil {
		return err
	}
	proto := "http"
	if cfg.TLS != nil {
		proto = "https"
	}
	if *metricsAddr != "" {
		mln, err := net.Listen("tcp", *metricsAddr)
		if err != nil {
			return err
		}
		go srv.ServeMetrics(mln)
		fmt.Fprintf(c.Stderr, "idkit serve: metrics on http://%s/metrics\n", mln.Addr())
	}
	if *probeAddr != "" {
		pln, err := net.Listen("tcp", *probeAddr)
		if err != nil {
			return err
		}
		go srv.ServeProbes(pln)
		fmt.Fprintf(c.Stderr, "idkit serve: probes on %s://%s/livez and /readyz\n", proto, pln.Addr())
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Stderr, "idkit serve: listening on %s://%s (%s)\n", proto, ln.Addr(), strings.Join(srv.Schemes(), ", "))
	for _, w := range exposureWarnings(ln.Addr(), cfg.TLS != nil, cfg.TokenFile != "", *tlsClientCA != "") {
		fmt.Fprintln(c.Stderr, "idkit serve: warning: "+w)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-stop.Done():
	}
	ctx, cancelGrace := context.WithTimeout(context.Background(), *grace)
	defer cancelGrace()
	if err := srv.Shutdown(ctx); err != nil {
		// Either part may fail: requests that outlast --shutdown-timeout,
		// or node claims that cannot be released (a store that does not
		// answer); the error names which.
		return fmt.Errorf("stopping (--shutdown-timeout %v): %w", *grace, err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(c.Stderr, "idkit serve: stopped")
	return nil
}

// serveSchemeList reads --schemes.
func serveSchemeList(list string) (map[string]bool, error) {
	want := make(map[string]bool)
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(serveSchemes, name) {
			return nil, cli.Usagef("--schemes: unknown scheme %q, want some of %s", name, strings.Join(serveSchemes, ", "))
		}
		want[name] = true
	}
	if len(want) == 0 {
		return nil, cli.Usagef("--schemes %q names no scheme, want some of %s", list, strings.Join(serveSchemes, ", "))
	}
	return want, nil
}

// serveSnowflakeNode returns snowflake's node fields: the fields given by
// name (missing ones 0), or else --node split into the layout's fields.
func serveSnowflakeNode(fs *flag.FlagSet, layout snowflake.Layout, node int64, fields map[string]*int64) (map[string]int64, error) {
	values, _, err := cli.NamedFields(fs, layout, fields)
	if err != nil {
		return nil, err
	}
	switch {
	case len(values) > 0 || len(layout.Fields) == 0:
		return values, nil
	case !cli.IsSet(fs, "node"):
		return nil, cli.Usagef("snowflake needs --node (0 to %d) or the preset's fields (%s), or --etcd to claim them; --schemes leaves it out",
			int64(1)<<layout.NodeBits()-1, cli.DescribeFields(layout))
	}
	if max := int64(1)<<layout.NodeBits() - 1; node < 0 || node > max {
		return nil, cli.Usagef("--node %d out of range for snowflake preset %s, want 0 to %d; give its fields (%s) instead, or leave it out with --schemes",
			node, layout.Name, max, cli.DescribeFields(layout))
	}
	return layout.SplitNode(node)
}

// parseProxy reads one entry of --trusted-proxies: a prefix such as
// 10.0.0.0/8, or one address.
func parseProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		a = a.Unmap()
		return netip.PrefixFrom(a, a.BitLen()), nil
	}
	return netip.Prefix{}, fmt.Errorf("%q is not an address or a prefix, want such as 10.0.0.5 or 10.0.0.0/8", s)
}

// exposureWarnings returns the warnings for a main port at addr that
// other hosts can reach without the protection it needs: bearer tokens
// sent in plain text, or no credential asked for at all.
func exposureWarnings(addr net.Addr, tls, tokens, clientCA bool) []string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || tcp.IP.IsLoopback() {
		return nil
	}
	where := tcp.String() + " (other hosts can reach it)"
	if tcp.IP.IsUnspecified() {
		where = "all addresses (" + tcp.String() + ")"
	}
	var warnings []string
	if tokens && !tls {
		warnings = append(warnings, fmt.Sprintf("--token-file without --tls-cert on %s: bearer tokens cross the network in plain text, "+
			"where anyone on the path can read and replay them; give --tls-cert and --tls-key, or listen on 127.0.0.1 behind a proxy that speaks TLS", where))
	}
	if !tokens && !clientCA {
		warnings = append(warnings, fmt.Sprintf("listening on %s without --token-file or --tls-client-ca: "+
			"any client that reaches the port may take IDs; give credentials, or listen on one address a firewall guards", where))
	}
	return warnings
}
