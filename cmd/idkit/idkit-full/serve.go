package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"path"
	"runtime/debug"
	"slices"
	"strconv"
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
	                      launch log file is removed or replaced (then
	                      restart the server), the launch log does not
	                      answer, a segment tag's
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
	                    or 1.3. A pair that does not load (a file missing,
	                    half copied, or a key that does not match) is
	                    logged, counted and reported by /readyz, and the
	                    last pair that loaded stays in use
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
	                    --max-conns, with caps of its own, 2 s from a
	                    connection's accept to its request, 10 s idle
	--probe-max-conns N  most connections open at once on --probe-addr
	                    (default 16)
	--probe-max-conns-per-client N  most of them from one client address,
	                    busy or idle, 1 to --probe-max-conns (default 4;
	                    -1 for no limit): so that one address cannot keep
	                    the orchestrator's probes out
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
	--proxy-protocol CIDRS  comma-separated addresses or prefixes of the
	                    TCP proxies in front (HAProxy with send-proxy-v2)
	                    whose connections to --addr and --probe-addr may
	                    begin with a PROXY protocol header (v1 or v2): the
	                    client is then the address the header names, for
	                    every limit, share and log line. A header from any
	                    other address is not believed; a connection from
	                    one of them without one is the proxy's own
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
	--max-busy-conns-per-client N  most connections one client address
	                    may hold on --addr that are not idle (opening,
	                    sending a request, or waiting for its answer), 1
	                    to --max-conns-per-client (default a 64th of
	                    --max-conns, at least 2; -1 for no limit); a new
	                    one past it is closed at once. A new connection
	                    must send its first request's header, TLS
	                    handshake included, within 5 s, or it is closed
	--max-streams-per-client N  most HTTP/2 requests (RPCs included)
	                    one client address may have in flight on --addr
	                    over all its connections (default 64; -1 for no
	                    limit); one more is answered 429 at once. An
	                    HTTP/2 connection has at most 32 streams open
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

// serveFlags are serve's command line.
type serveFlags struct {
	fs                                    *flag.FlagSet
	addr, list, preset                    *string
	node                                  *int64
	threadBits, launch                    *int
	fields                                map[string]*int64
	where                                 *cli.StoreFlags
	tags                                  []string
	segmentStore                          *string
	tlsCert, tlsKey, tlsClientCA          *string
	tokenFile, metricsAddr, probeAddr     *string
	metricsMaxConns                       *int
	probeMaxConns, probeMaxConnsPerClient *int
	idleTimeout, grace                    *time.Duration
	maxN                                  *int
	idsPerClient, requestsPerClient       *float64
	idsPerNode                            *float64
	proxies, proxyProtocol                []netip.Prefix
	maxConns, maxConnsPerClient           *int
	maxBusyConnsPerClient                 *int
	maxStreamsPerClient                   *int
	inspectLaunches                       *bool
}

// newServeFlags defines serve's flags.
func newServeFlags() *serveFlags {
	fs := cli.NewFlags("serve")
	f := &serveFlags{fs: fs, fields: make(map[string]*int64)}
	f.addr = fs.String("addr", "127.0.0.1:8080", "address to listen on, host:port")
	f.list = fs.String("schemes", strings.Join(serveSchemes, ","), "schemes to serve, comma-separated")
	f.node = fs.Int64("node", 0, "node of traceid and snowflake")
	f.threadBits = fs.Int("thread-bits", 0, "traceid's thread bits, 0 to 16")
	f.preset = fs.String("preset", "twitter", "snowflake layout")
	for _, name := range cli.SnowflakeFieldNames() {
		f.fields[name] = fs.Int64(name, 0, "snowflake node field "+name)
	}
	f.where = cli.AddStoreFlags(fs, cli.DefaultLog)
	f.launch = fs.Int("launch", 0, "decimalid's launch, 1 to 99999 (default the current launch)")
	fs.Func("segment-tag", "serve a segment allocator's tag at /v1/segment/TAG (repeatable, or comma-separated)", func(v string) error {
		for tag := range strings.SplitSeq(v, ",") {
			if err := segment.CheckTag(tag); err != nil {
				return err
			}
			if slices.Contains(f.tags, tag) {
				return fmt.Errorf("tag %q given twice", tag)
			}
			f.tags = append(f.tags, tag)
		}
		return nil
	})
	f.segmentStore = fs.String("segment-store", os.Getenv(envSegmentStore), "where segment blocks are reserved: a postgres://, mysql:// or redis:// URL")
	f.tlsCert = fs.String("tls-cert", "", "PEM certificate for HTTPS")
	f.tlsKey = fs.String("tls-key", "", "PEM private key for HTTPS")
	f.tlsClientCA = fs.String("tls-client-ca", "", "PEM CAs of the client certificates to require")
	f.tokenFile = fs.String("token-file", "", "file of bearer tokens that /v1/ requires")
	f.metricsAddr = fs.String("metrics-addr", "", "serve /metrics on this address instead")
	f.metricsMaxConns = fs.Int("metrics-max-conns", serve.DefaultMetricsMaxConns, "most connections open at once on --metrics-addr")
	f.probeAddr = fs.String("probe-addr", "", "serve /livez and /readyz alone on this address too")
	f.probeMaxConns = fs.Int("probe-max-conns", serve.DefaultProbeMaxConns, "most connections open at once on --probe-addr")
	f.probeMaxConnsPerClient = fs.Int("probe-max-conns-per-client", serve.DefaultProbeMaxConnsPerClient, "most of them from one client address")
	f.idleTimeout = fs.Duration("idle-timeout", 2*time.Minute, "how long a kept-alive connection may stay idle")
	f.maxN = fs.Int("max-n", serve.DefaultMaxN, "most IDs a request may ask for")
	f.idsPerClient = fs.Float64("ids-per-client", serve.DefaultIDsPerSecond, "most IDs a client may take a second")
	f.requestsPerClient = fs.Float64("requests-per-client", serve.DefaultRequestsPerSecond, "most requests a client may make a second")
	f.idsPerNode = fs.Float64("ids-per-node", serve.DefaultNodeIDsPerSecond, "most IDs of one scheme the server issues a second to all clients")
	fs.Func("trusted-proxies", "addresses or prefixes of the proxies whose X-Forwarded-For is believed, comma-separated", prefixList(&f.proxies))
	fs.Func("proxy-protocol", "addresses or prefixes of the proxies whose connections may begin with a PROXY protocol header, comma-separated", prefixList(&f.proxyProtocol))
	f.maxConns = fs.Int("max-conns", serve.DefaultMaxConns, "most connections open at once")
	f.maxConnsPerClient = fs.Int("max-conns-per-client", 0, "most connections open at once from one client address (default a quarter of --max-conns)")
	f.maxBusyConnsPerClient = fs.Int("max-busy-conns-per-client", 0, "most connections from one client address that are not idle (default a 64th of --max-conns, at least 2)")
	f.maxStreamsPerClient = fs.Int("max-streams-per-client", 0, "most HTTP/2 requests from one client address in flight (default 64)")
	f.inspectLaunches = fs.Bool("inspect-launches", false, "show the launch record when a DecimalId is inspected")
	f.grace = fs.Duration("shutdown-timeout", 10*time.Second, "how long requests in flight may take to finish on SIGTERM")
	return f
}

// prefixList is the flag.Func of a comma-separated list of addresses and
// prefixes, appended to list.
func prefixList(list *[]netip.Prefix) func(string) error {
	return func(v string) error {
		for item := range strings.SplitSeq(v, ",") {
			p, err := parseProxy(strings.TrimSpace(item))
			if err != nil {
				return err
			}
			*list = append(*list, p)
		}
		return nil
	}
}

// isSet reports whether the command line sets the flag called name.
func (f *serveFlags) isSet(name string) bool { return cli.IsSet(f.fs, name) }

// claiming reports whether serve claims its nodes in etcd.
func (f *serveFlags) claiming() bool { return f.isSet("etcd") && !f.isSet("node") }

func runServe(c *cli.Console, args []string) error {
	f := newServeFlags()
	if err := cli.ParseFlags(f.fs, args); err != nil {
		return err
	}
	if f.fs.NArg() > 0 {
		return cli.Usagef("unexpected argument %q", f.fs.Arg(0))
	}
	if err := f.checkRanges(); err != nil {
		return err
	}
	want, err := serveSchemeList(*f.list)
	if err != nil {
		return err
	}
	// Check every flag before opening the store or claiming a node.
	nodes, err := f.checkNodes(want)
	if err != nil {
		return err
	}
	cfg := serve.Options{}
	if err := f.access(&cfg); err != nil {
		return err
	}
	if err := f.limits(&cfg); err != nil {
		return err
	}
	l, err := f.where.Open(c)
	if err != nil {
		return err
	}
	if err := checkLog(c, f, l); err != nil {
		return err
	}
	if err := f.generators(c, &cfg, l, want, nodes); err != nil {
		return err
	}
	if limit, ok := memoryLimit(os.Getenv, os.ReadFile); ok {
		debug.SetMemoryLimit(limit)
		fmt.Fprintf(c.Stderr, "idkit serve: Go memory limit %d MiB, 90%% of the cgroup's memory.max; GOMEMLIMIT sets another\n", limit>>20)
	}
	return serveUntilStopped(c, f, cfg)
}

// memoryLimit returns the Go memory limit for a server in a cgroup with
// a memory cap (systemd's MemoryMax=, a container's limit): 90% of its
// memory.max, so that the garbage collector works harder as the heap
// nears the cap rather than let the kernel kill the process at it. It
// returns false where GOMEMLIMIT is set (the user's choice), without a
// cgroup v2 cap, or where the files cannot be read.
func memoryLimit(getenv func(string) string, readFile func(string) ([]byte, error)) (int64, bool) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, false
	}
	b, err := readFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	var dir string
	for line := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			dir = p
		}
	}
	if dir == "" {
		return 0, false
	}
	b, err = readFile(path.Join("/sys/fs/cgroup", dir, "memory.max"))
	if err != nil {
		return 0, false
	}
	max, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || max <= 0 { // "max": no cap
		return 0, false
	}
	return max / 10 * 9, true
}

// checkRanges checks the flags that stand alone.
func (f *serveFlags) checkRanges() error {
	switch {
	case *f.maxN < 1 || *f.maxN > 1_000_000:
		return cli.Usagef("--max-n %d out of range, want 1 to 1000000", *f.maxN)
	case *f.grace < 0:
		return cli.Usagef("--shutdown-timeout %v is negative", *f.grace)
	case *f.idleTimeout <= 0:
		return cli.Usagef("--idle-timeout %v, want a positive duration such as 2m", *f.idleTimeout)
	case *f.metricsMaxConns < 1:
		return cli.Usagef("--metrics-max-conns %d, want 1 or more", *f.metricsMaxConns)
	case *f.probeMaxConns < 1:
		return cli.Usagef("--probe-max-conns %d, want 1 or more", *f.probeMaxConns)
	case *f.probeMaxConnsPerClient != -1 && (*f.probeMaxConnsPerClient < 1 || *f.probeMaxConnsPerClient > *f.probeMaxConns):
		return cli.Usagef("--probe-max-conns-per-client %d out of range, want 1 to %d (--probe-max-conns), or -1 for no limit", *f.probeMaxConnsPerClient, *f.probeMaxConns)
	case f.isSet("launch") && (*f.launch < 1 || *f.launch > decimalid.MaxLaunch):
		return cli.Usagef("--launch %d out of range, want 1 to %d", *f.launch, decimalid.MaxLaunch)
	}
	return nil
}

// serveNodes are the nodes the flags give traceid and snowflake, when
// serve does not claim them.
type serveNodes struct {
	layout snowflake.Layout
	sfNode map[string]int64
}

// checkNodes checks the flags of traceid's and snowflake's nodes.
func (f *serveFlags) checkNodes(want map[string]bool) (serveNodes, error) {
	var n serveNodes
	if want["traceid"] {
		if !f.isSet("node") && !f.claiming() {
			return n, cli.Usagef("traceid needs --node (0 to %d), or --etcd to claim one; --schemes leaves it out", traceid.MaxNode)
		}
		if f.isSet("node") && (*f.node < 0 || *f.node > traceid.MaxNode) {
			return n, cli.Usagef("--node %d out of range for traceid, want 0 to %d", *f.node, traceid.MaxNode)
		}
		if *f.threadBits < 0 || *f.threadBits > traceid.MaxThreadBits {
			return n, cli.Usagef("--thread-bits %d out of range, want 0 to %d", *f.threadBits, traceid.MaxThreadBits)
		}
	}
	if want["snowflake"] {
		var err error
		if n.layout, err = cli.PresetFlag(*f.preset); err != nil {
			return n, err
		}
		if !f.claiming() {
			if n.sfNode, err = serveSnowflakeNode(f.fs, n.layout, *f.node, f.fields); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// access sets the TLS files and the token file.
func (f *serveFlags) access(cfg *serve.Options) error {
	switch {
	case (*f.tlsCert == "") != (*f.tlsKey == ""):
		return cli.Usagef("--tls-cert and --tls-key go together")
	case *f.tlsClientCA != "" && *f.tlsCert == "":
		return cli.Usagef("--tls-client-ca needs --tls-cert and --tls-key")
	case *f.tlsCert != "":
		cfg.TLS = &serve.TLSFiles{CertFile: *f.tlsCert, KeyFile: *f.tlsKey, ClientCAFile: *f.tlsClientCA}
	}
	cfg.TokenFile = *f.tokenFile
	return nil
}

// limits sets the limits, the listeners' caps and the proxies.
func (f *serveFlags) limits(cfg *serve.Options) error {
	for _, v := range []struct {
		name string
		v    float64
	}{{"--ids-per-client", *f.idsPerClient}, {"--requests-per-client", *f.requestsPerClient}, {"--ids-per-node", *f.idsPerNode}, {"--max-conns", float64(*f.maxConns)}} {
		if v.v == 0 || (v.v < 0 && v.v != -1) {
			return cli.Usagef("%s %v, want a positive number, or -1 for no limit", v.name, v.v)
		}
	}
	perClient := *f.maxConnsPerClient
	if f.isSet("max-conns-per-client") && perClient != -1 {
		switch {
		case *f.maxConns > 0 && (perClient < 1 || perClient > *f.maxConns):
			return cli.Usagef("--max-conns-per-client %d out of range, want 1 to %d (--max-conns), or -1 for no limit", perClient, *f.maxConns)
		case perClient < 1:
			return cli.Usagef("--max-conns-per-client %d out of range, want 1 or more, or -1 for no limit", perClient)
		}
	}
	if busy := *f.maxBusyConnsPerClient; f.isSet("max-busy-conns-per-client") && busy != -1 {
		most := *f.maxConns
		if perClient > 0 {
			most = perClient
		} else if perClient == 0 && most > 0 {
			most = serve.DefaultMaxConnsPerClient(most)
		}
		if busy < 1 || (most > 0 && busy > most) {
			return cli.Usagef("--max-busy-conns-per-client %d out of range, want 1 to %d (--max-conns-per-client), or -1 for no limit", busy, most)
		}
	}
	if streams := *f.maxStreamsPerClient; f.isSet("max-streams-per-client") && streams != -1 && streams < 1 {
		return cli.Usagef("--max-streams-per-client %d out of range, want 1 or more, or -1 for no limit", streams)
	}
	cfg.Limits = serve.Limits{IDsPerSecond: *f.idsPerClient, RequestsPerSecond: *f.requestsPerClient, NodeIDsPerSecond: *f.idsPerNode,
		MaxConns: *f.maxConns, MaxConnsPerClient: perClient, MaxBusyConnsPerClient: *f.maxBusyConnsPerClient,
		MaxStreamsPerClient: *f.maxStreamsPerClient}
	cfg.TrustedProxies, cfg.ProxyProtocol = f.proxies, f.proxyProtocol
	cfg.SeparateMetrics = *f.metricsAddr != ""
	cfg.MetricsMaxConns = *f.metricsMaxConns
	cfg.ProbeMaxConns, cfg.ProbeMaxConnsPerClient = *f.probeMaxConns, *f.probeMaxConnsPerClient
	cfg.IdleTimeout = *f.idleTimeout
	cfg.MaxN = *f.maxN
	return nil
}

// checkLog stops serve at start when the launch log cannot be used as
// given (a symbolic link, another user's file, a file it may not write),
// rather than let every request fail: it reads the log once.
func checkLog(c *cli.Console, f *serveFlags, l cli.Store) error {
	if f.isSet("etcd") {
		return nil // dialEtcd checked that etcd answers
	}
	ctx, cancel := context.WithTimeout(context.Background(), cli.EtcdTimeout)
	defer cancel()
	if _, err := l.Current(ctx); err != nil && !errors.Is(err, launchlog.ErrNoLaunch) {
		return fmt.Errorf("the launch log %s cannot be used: %w", f.where.Name(), err)
	}
	return nil
}

// generators sets the schemes to serve and their stores.
func (f *serveFlags) generators(c *cli.Console, cfg *serve.Options, l cli.Store, want map[string]bool, n serveNodes) error {
	cfg.Store, cfg.Blocks, cfg.Clock = l, l, c.Clock
	cfg.Logger = slog.New(slog.NewTextHandler(c.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if want["traceid"] {
		cfg.TraceID = &traceid.Options{Node: int(*f.node), ThreadBits: *f.threadBits}
	}
	if want["snowflake"] {
		cfg.Snowflake = &snowflake.Options{Layout: n.layout, Node: n.sfNode}
	}
	if want["decimalid"] {
		if err := f.decimalID(c, cfg, l); err != nil {
			return err
		}
	}
	if want["objectid"] {
		cfg.ObjectID = &objectid.Options{}
	}
	if *f.inspectLaunches {
		cfg.Launches = l
	}
	if f.claiming() {
		// The server claims the nodes, and claims again when a claim is
		// lost, under the fleet's fencing.
		cfg.Claims = func(ctx context.Context, scheme string) (store.Claim, error) {
			if scheme == "snowflake" {
				return cli.ClaimSnowflake(c, f.where, f.fs, n.layout, f.fields)
			}
			return f.where.Claim(c, "traceid", 0, traceid.MaxNode)
		}
	}
	if err := f.segments(c, cfg); err != nil {
		return err
	}
	if cfg.TraceID == nil && cfg.Snowflake == nil && cfg.DecimalID == nil && cfg.ObjectID == nil && len(cfg.Segments) == 0 {
		return errors.New("no scheme left to serve")
	}
	return nil
}

// decimalID sets decimalid's launch: --launch, or the current one.
func (f *serveFlags) decimalID(c *cli.Console, cfg *serve.Options, l cli.Store) error {
	launch := *f.launch
	if !f.isSet("launch") {
		cur, err := l.Current(context.Background())
		switch {
		case errors.Is(err, launchlog.ErrNoLaunch) && !f.isSet("schemes"):
			fmt.Fprintf(c.Stderr, "idkit serve: decimalid not served: no launch in %s yet; record one with 'idkit launch begin %s'\n", f.where.Name(), f.where.Hint())
		case errors.Is(err, launchlog.ErrNoLaunch):
			return fmt.Errorf("decimalid: no launch in %s yet; record one with 'idkit launch begin %s', or give --launch N", f.where.Name(), f.where.Hint())
		case err != nil:
			return err
		default:
			launch = cur.ID
		}
	}
	if launch != 0 {
		cfg.DecimalID = &decimalid.Options{Launch: launch}
	}
	return nil
}

// segments sets the segment tags and the store of their blocks.
func (f *serveFlags) segments(c *cli.Console, cfg *serve.Options) error {
	if *f.segmentStore != "" {
		if len(f.tags) == 0 {
			return cli.Usagef("--segment-store (or $%s) without --segment-tag: no tag to serve from it", envSegmentStore)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		blocks, closeBlocks, err := openSegmentStore(ctx, *f.segmentStore)
		cancel()
		if err != nil {
			return err
		}
		c.AtExit(func() { closeBlocks() })
		cfg.Blocks = blocks
	}
	for _, tag := range f.tags {
		cfg.Segments = append(cfg.Segments, segment.Options{Tag: tag})
	}
	return nil
}

// serveUntilStopped starts the server and its listeners, and serves until
// SIGTERM or SIGINT; it then stops gracefully.
func serveUntilStopped(c *cli.Console, f *serveFlags, cfg serve.Options) error {
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
	if *f.maxConns < 0 {
		fmt.Fprintln(c.Stderr, "idkit serve: --max-conns -1: connections on --addr are bounded only by the limit on open files, which they may use up")
	} else if err := srv.CheckFileLimit(fileReserve); err != nil {
		return err
	}
	served, err := listen(c, f, srv, cfg)
	if err != nil {
		return err
	}
	select {
	case err := <-served:
		return err
	case <-stop.Done():
	}
	ctx, cancelGrace := context.WithTimeout(context.Background(), *f.grace)
	defer cancelGrace()
	if err := srv.Shutdown(ctx); err != nil {
		// Either part may fail: requests that outlast --shutdown-timeout,
		// or node claims that cannot be released (a store that does not
		// answer); the error names which.
		return fmt.Errorf("stopping (--shutdown-timeout %v): %w", *f.grace, err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(c.Stderr, "idkit serve: stopped")
	return nil
}

// listen opens the metrics, probe and main listeners and serves them; the
// channel has the main listener's end.
func listen(c *cli.Console, f *serveFlags, srv *serve.Server, cfg serve.Options) (<-chan error, error) {
	proto := "http"
	if cfg.TLS != nil {
		proto = "https"
	}
	if *f.metricsAddr != "" {
		mln, err := net.Listen("tcp", *f.metricsAddr)
		if err != nil {
			return nil, err
		}
		go srv.ServeMetrics(mln)
		fmt.Fprintf(c.Stderr, "idkit serve: metrics on http://%s/metrics\n", mln.Addr())
	}
	if *f.probeAddr != "" {
		pln, err := net.Listen("tcp", *f.probeAddr)
		if err != nil {
			return nil, err
		}
		go srv.ServeProbes(pln)
		fmt.Fprintf(c.Stderr, "idkit serve: probes on %s://%s/livez and /readyz\n", proto, pln.Addr())
	}
	ln, err := net.Listen("tcp", *f.addr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c.Stderr, "idkit serve: listening on %s://%s (%s)\n", proto, ln.Addr(), strings.Join(srv.Schemes(), ", "))
	warnings := exposureWarnings(ln.Addr(), cfg.TLS != nil, cfg.TokenFile != "", *f.tlsClientCA != "")
	warnings = append(warnings, secretWarnings(map[string]string{"--token-file": *f.tokenFile, "--tls-key": *f.tlsKey})...)
	for _, w := range warnings {
		fmt.Fprintln(c.Stderr, "idkit serve: warning: "+w)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return served, nil
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

// secretWarnings returns a warning for each secret file, by its flag,
// that its group or other users may read or write: one of them could
// take a token or the server's key. Files not given or not there are the
// server's own errors to report.
func secretWarnings(files map[string]string) []string {
	var warnings []string
	for _, flag := range slices.Sorted(maps.Keys(files)) {
		path := files[flag]
		if path == "" {
			continue
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s %s has mode %04o: its group or other users may read it; chmod 600 %s (systemd's LoadCredential= gives the service a copy only it reads)",
			flag, path, fi.Mode().Perm(), path))
	}
	return warnings
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
