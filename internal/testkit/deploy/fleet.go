//go:build linux

package deploy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// Ports of every serve host, as deploy/idkit.env has them.
const (
	servePort  = 8443
	probePort  = 8081
	metricPort = 9090
)

// Config says where the harness finds its programs and files.
type Config struct {
	Dir       string // a fresh directory for data, logs, keys and tokens
	DeployDir string // the repository's deploy directory
	Etcd      string // the etcd server binary
	Idkit     string // the idkit-full binary
	CAFile    string // the CA of the servers' certificate
	CertFile  string // the servers' TLS certificate, for localhost
	KeyFile   string
	Token     string // the one bearer token the servers take
}

// A Fleet is the deployed topology: etcd members e1 to e3 and serve
// processes s1 to s4, each on a host of its own, and HAProxy in the host
// namespace in front of the serve processes.
type Fleet struct {
	Config
	Net    *Net
	Etcd   []*Proc
	Serve  []*Proc
	LB     *Proc
	LBAddr string // HAProxy's frontend, 127.0.0.1:PORT

	etcdFlags map[string]string // deploy/etcd.env
	tls       *tls.Config       // a client's of the serve processes
	tokens    string            // the serve processes' token file
	probe     *http.Client
	members   map[string]uint64 // etcd member ids by name
}

// Start sets up the network and starts every process, and returns once
// etcd has a leader, every serve process is ready and HAProxy listens.
func Start(ctx context.Context, cfg Config) (f *Fleet, err error) {
	f = &Fleet{Config: cfg, members: make(map[string]uint64)}
	defer func() {
		if err != nil {
			f.Close()
			f = nil
		}
	}()
	if f.etcdFlags, err = readEnvFile(filepath.Join(cfg.DeployDir, "etcd.env")); err != nil {
		return f, err
	}
	if f.Net, err = NewNet("e1", "e2", "e3", "s1", "s2", "s3", "s4"); err != nil {
		return f, err
	}
	pem, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return f, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return f, fmt.Errorf("%s holds no PEM certificate", cfg.CAFile)
	}
	f.tls = &tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	f.tokens = filepath.Join(cfg.Dir, "tokens")
	if err := os.WriteFile(f.tokens, []byte("harness "+cfg.Token+"\n"), 0o600); err != nil {
		return f, err
	}
	f.probe = &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{TLSClientConfig: f.TLS(), DisableKeepAlives: true},
	}
	for _, name := range []string{"e1", "e2", "e3"} {
		p, err := f.newEtcd(name, "new")
		if err != nil {
			return f, err
		}
		f.Etcd = append(f.Etcd, p)
	}
	for _, p := range f.Etcd {
		if err := p.Start(); err != nil {
			return f, err
		}
	}
	if err := f.WaitEtcd(ctx); err != nil {
		return f, err
	}
	for _, name := range []string{"s1", "s2", "s3", "s4"} {
		p, err := f.newServe(name)
		if err != nil {
			return f, err
		}
		f.Serve = append(f.Serve, p)
		if err := p.Start(); err != nil {
			return f, err
		}
	}
	for _, p := range f.Serve {
		if err := f.WaitReady(ctx, p); err != nil {
			return f, err
		}
	}
	if err := f.startLB(ctx); err != nil {
		return f, err
	}
	return f, nil
}

// TLS is the configuration of a client of the serve processes: their
// certificate is for localhost, whatever address is dialled.
func (f *Fleet) TLS() *tls.Config { return f.tls.Clone() }

// Endpoints are the etcd members' client URLs.
func (f *Fleet) Endpoints() []string {
	var eps []string
	for _, p := range f.Etcd {
		eps = append(eps, "http://"+p.Host.IP.String()+":2379")
	}
	return eps
}

// newEtcd returns member name, with deploy/etcd.env's flags and the
// addresses, name and data directory of this fleet; state is "new" or
// "existing".
func (f *Fleet) newEtcd(name, state string) (*Proc, error) {
	h := f.Net.Host(name)
	var cluster []string
	for _, m := range []string{"e1", "e2", "e3"} {
		cluster = append(cluster, m+"=http://"+f.Net.Host(m).IP.String()+":2380")
	}
	flags := make(map[string]string)
	for k, v := range f.etcdFlags {
		flags[k] = v
	}
	ip := h.IP.String()
	for k, v := range map[string]string{
		"ETCD_NAME":                        name,
		"ETCD_DATA_DIR":                    filepath.Join(f.Dir, name+".etcd"),
		"ETCD_LISTEN_PEER_URLS":            "http://" + ip + ":2380",
		"ETCD_LISTEN_CLIENT_URLS":          "http://" + ip + ":2379",
		"ETCD_INITIAL_ADVERTISE_PEER_URLS": "http://" + ip + ":2380",
		"ETCD_ADVERTISE_CLIENT_URLS":       "http://" + ip + ":2379",
		"ETCD_INITIAL_CLUSTER":             strings.Join(cluster, ","),
		"ETCD_INITIAL_CLUSTER_STATE":       state,
	} {
		if _, ok := flags[k]; !ok {
			return nil, fmt.Errorf("deploy/etcd.env sets no %s", k)
		}
		flags[k] = v
	}
	var env []string
	for k, v := range flags {
		env = append(env, k+"="+v)
	}
	return NewProc(name, h, []string{f.Config.Etcd}, env, filepath.Join(f.Dir, name+".log"))
}

// newServe returns serve process name, run as deploy/idkit.service's
// ExecStart runs it, with deploy/idkit.env's settings for this host.
func (f *Fleet) newServe(name string) (*Proc, error) {
	h := f.Net.Host(name)
	env, err := readEnvFile(filepath.Join(f.DeployDir, "idkit.env"))
	if err != nil {
		return nil, err
	}
	ip := h.IP.String()
	for k, v := range map[string]string{
		"IDKIT_ADDR":         net.JoinHostPort(ip, strconv.Itoa(servePort)),
		"IDKIT_PROBE_ADDR":   net.JoinHostPort(ip, strconv.Itoa(probePort)),
		"IDKIT_METRICS_ADDR": net.JoinHostPort(ip, strconv.Itoa(metricPort)),
		"IDKIT_ETCD":         strings.Join(f.Endpoints(), ","),
		"IDKIT_TLS_CERT":     f.CertFile,
		"IDKIT_TLS_KEY":      f.KeyFile,
		"IDKIT_TOKEN_FILE":   f.tokens,
		"IDKIT_PROXIES":      f.Net.Gateway().String() + "/32",
	} {
		if _, ok := env[k]; !ok {
			return nil, fmt.Errorf("deploy/idkit.env sets no %s", k)
		}
		env[k] = v
	}
	argv, err := execStart(filepath.Join(f.DeployDir, "idkit.service"), env)
	if err != nil {
		return nil, err
	}
	if argv[0] != "/usr/local/bin/idkit-full" {
		return nil, fmt.Errorf("deploy/idkit.service runs %s, want /usr/local/bin/idkit-full", argv[0])
	}
	argv[0] = f.Idkit
	return NewProc(name, h, argv, nil, filepath.Join(f.Dir, name+".log"))
}

// startLB checks deploy/haproxy.cfg and starts HAProxy with it, its
// frontend on a free port of 127.0.0.1 and the four serve processes
// behind it.
func (f *Fleet) startLB(ctx context.Context) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	f.LBAddr = l.Addr().String()
	l.Close()
	env := []string{"IDKIT_LB_ADDR=" + f.LBAddr, "IDKIT_PROBE_PORT=" + strconv.Itoa(probePort)}
	for i, p := range f.Serve {
		env = append(env, fmt.Sprintf("IDKIT_S%d=%s", i+1, net.JoinHostPort(p.Host.IP.String(), strconv.Itoa(servePort))))
	}
	cfg := filepath.Join(f.DeployDir, "haproxy.cfg")
	check := exec.Command("haproxy", "-c", "-q", "-f", cfg)
	check.Env = append(os.Environ(), env...)
	if out, err := check.CombinedOutput(); err != nil {
		return fmt.Errorf("haproxy -c -f deploy/haproxy.cfg: %v: %s", err, out)
	}
	if f.LB, err = NewProc("haproxy", nil, []string{"haproxy", "-W", "-db", "-f", cfg}, env, filepath.Join(f.Dir, "haproxy.log")); err != nil {
		return err
	}
	if err := f.LB.Start(); err != nil {
		return err
	}
	return poll(ctx, 10*time.Second, "HAProxy to listen on "+f.LBAddr, func() error {
		c, err := net.DialTimeout("tcp", f.LBAddr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
}

// EtcdClient returns a client of the cluster, from the host namespace.
func (f *Fleet) EtcdClient() (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: f.Endpoints(), DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
}

// WaitEtcd waits until every member answers as part of a cluster with a
// leader, and records the members' ids.
func (f *Fleet) WaitEtcd(ctx context.Context) error {
	cli, err := f.EtcdClient()
	if err != nil {
		return err
	}
	defer cli.Close()
	return poll(ctx, 60*time.Second, "etcd's members to answer with a leader", func() error {
		for _, ep := range f.Endpoints() {
			c, cancel := context.WithTimeout(ctx, time.Second)
			st, err := cli.Status(c, ep)
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %w", ep, err)
			}
			if st.Leader == 0 {
				return fmt.Errorf("%s: no leader", ep)
			}
		}
		c, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		ms, err := cli.MemberList(c)
		if err != nil {
			return err
		}
		for _, m := range ms.Members {
			f.members[m.Name] = m.ID
		}
		return nil
	})
}

// Ready reports whether p's /readyz answers 200.
func (f *Fleet) Ready(p *Proc) (int, error) {
	resp, err := f.probe.Get("https://" + net.JoinHostPort(p.Host.IP.String(), strconv.Itoa(probePort)) + "/readyz")
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// WaitReady waits until p's /readyz answers 200.
func (f *Fleet) WaitReady(ctx context.Context, p *Proc) error {
	return poll(ctx, 60*time.Second, p.Name+"'s /readyz to answer 200", func() error {
		code, err := f.Ready(p)
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("/readyz %d", code)
		}
		return err
	})
}

// ReplaceMember removes member p from the cluster, deletes its data,
// adds it again and starts it with a fresh data directory, as an operator
// replaces a failed disk.
func (f *Fleet) ReplaceMember(ctx context.Context, p *Proc) error {
	cli, err := f.EtcdClient()
	if err != nil {
		return err
	}
	defer cli.Close()
	if err := p.Stop(syscall.SIGTERM, 10*time.Second); err != nil {
		return err
	}
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.MemberRemove(c, f.members[p.Name]); err != nil {
		return fmt.Errorf("member remove %s: %w", p.Name, err)
	}
	if err := os.RemoveAll(filepath.Join(f.Dir, p.Name+".etcd")); err != nil {
		return err
	}
	// etcd refuses a member until the others have been connected to each
	// other for a few seconds: ask again until it takes it.
	var added *clientv3.MemberAddResponse
	err = poll(ctx, 30*time.Second, "etcd to take "+p.Name+" back", func() error {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		added, err = cli.MemberAdd(c, []string{"http://" + p.Host.IP.String() + ":2380"})
		return err
	})
	if err != nil {
		return err
	}
	f.members[p.Name] = added.Member.ID
	fresh, err := f.newEtcd(p.Name, "existing")
	if err != nil {
		return err
	}
	p.log.Close()
	p.argv, p.env, p.log = fresh.argv, fresh.env, fresh.log
	if err := p.Start(); err != nil {
		return err
	}
	return f.WaitEtcd(ctx)
}

// Close stops every process and removes the network.
func (f *Fleet) Close() error {
	var errs []error
	if f.LB != nil {
		errs = append(errs, f.LB.Close())
	}
	for _, p := range f.Serve {
		errs = append(errs, p.Close())
	}
	for _, p := range f.Etcd {
		errs = append(errs, p.Close())
	}
	if f.Net != nil {
		errs = append(errs, f.Net.Close())
	}
	return errors.Join(errs...)
}

// poll calls try until it returns nil, up to bound; the error names what
// was waited for and try's last error.
func poll(ctx context.Context, bound time.Duration, what string, try func() error) error {
	deadline := time.Now().Add(bound)
	for {
		err := try()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("waited %v for %s: %w", bound, what, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// readEnvFile reads KEY=VALUE lines, as systemd's EnvironmentFile and
// Debian's /etc/default files hold them, skipping comments and blanks.
func readEnvFile(path string) (map[string]string, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	env := make(map[string]string)
	s := bufio.NewScanner(file)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE", path, n)
		}
		env[k] = v
	}
	return env, s.Err()
}

var varRef = regexp.MustCompile(`\$\{(\w+)\}`)

// execStart returns the ExecStart command line of a systemd unit, its
// ${VAR} references replaced from env as systemd does.
func execStart(unit string, env map[string]string) ([]string, error) {
	b, err := os.ReadFile(unit)
	if err != nil {
		return nil, err
	}
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "ExecStart=")
		if !ok {
			continue
		}
		var argv []string
		for _, word := range strings.Fields(rest) {
			var missing []string
			word = varRef.ReplaceAllStringFunc(word, func(ref string) string {
				v, ok := env[ref[2:len(ref)-1]]
				if !ok {
					missing = append(missing, ref)
				}
				return v
			})
			if len(missing) > 0 {
				return nil, fmt.Errorf("%s: ExecStart uses %s, which the environment file does not set", unit, strings.Join(missing, ", "))
			}
			argv = append(argv, word)
		}
		return argv, nil
	}
	return nil, fmt.Errorf("%s: no ExecStart", unit)
}
