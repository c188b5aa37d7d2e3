//go:build linux

package deploy

import (
	"bufio"
	"context"
	"crypto/tls"
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

	"github.com/idkit/idkit/internal/testkit/testcert"
)

// Ports of every serve host, as deploy/idkit.env has them, and of the
// load balancers' frontends.
const (
	servePort  = 8443
	probePort  = 8081
	metricPort = 9090
	lbPort     = 8443
)

// Config says where the harness finds its programs and files.
type Config struct {
	Dir       string // a fresh directory for data, logs, keys and tokens
	DeployDir string // the repository's deploy directory
	Etcd      string // the etcd server binary
	Etcdctl   string // etcdctl, which runs deploy/etcd-auth.sh
	Idkit     string // the idkit-full binary
	CA        *testcert.CA
	Token     string // the one bearer token the servers take
	// UID, if not 0, is the user the serve processes run as, as
	// systemd's DynamicUser runs them: they read their secrets only
	// through the credentials the unit loads.
	UID int
}

// A Fleet is the deployed topology: etcd members e1 to e3 and serve
// processes s1 to s4, each on a host of its own, and HAProxy on hosts lb1
// and lb2 in front of the serve processes. Every file comes from deploy/,
// with this fleet's addresses and the places of its files.
type Fleet struct {
	Config
	Net    *Net
	Etcd   []*Proc
	Serve  []*Proc
	LB     []*Proc
	Bases  []string // the load balancers' frontends, https://IP:PORT
	RunDir string   // the serve processes' credentials, which their user reaches

	etcdFlags map[string]string // deploy/etcd.env
	tls       *tls.Config       // a client's of the serve processes
	probe     *http.Client
	members   map[string]uint64 // etcd member ids by name
	serial    int64             // the last certificate serial issued
}

// The names of the harness's files: the CA, and etcd's root client.
const (
	caFile   = "ca.crt"
	rootName = "root"
)

// Start sets up the network and starts every process, and returns once
// etcd has a leader and its authentication is on, every serve process is
// ready and both load balancers listen.
func Start(ctx context.Context, cfg Config) (f *Fleet, err error) {
	f = &Fleet{Config: cfg, members: make(map[string]uint64), serial: 100}
	defer func() {
		if err != nil {
			f.Close()
			f = nil
		}
	}()
	if f.etcdFlags, err = readEnvFile(filepath.Join(cfg.DeployDir, "etcd.env")); err != nil {
		return f, err
	}
	if f.RunDir, err = os.MkdirTemp("", "idkit-deploy-run-"); err != nil {
		return f, err
	}
	if err := os.Chmod(f.RunDir, 0o711); err != nil {
		return f, err
	}
	if f.Net, err = NewNet("e1", "e2", "e3", "s1", "s2", "s3", "s4", "lb1", "lb2"); err != nil {
		return f, err
	}
	if err := f.issueAll(); err != nil {
		return f, err
	}
	f.tls = &tls.Config{RootCAs: cfg.CA.Pool(), ServerName: "localhost", MinVersion: tls.VersionTLS12}
	f.probe = &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{TLSClientConfig: f.TLS(), DisableKeepAlives: true},
	}
	if err := f.startEtcd(ctx); err != nil {
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
	for _, name := range []string{"lb1", "lb2"} {
		if err := f.startLB(ctx, name); err != nil {
			return f, err
		}
	}
	return f, nil
}

// startEtcd starts the three members, waits for a leader, and turns
// authentication on with deploy/etcd-auth.sh.
func (f *Fleet) startEtcd(ctx context.Context) error {
	for _, name := range []string{"e1", "e2", "e3"} {
		p, err := f.newEtcd(name, "new")
		if err != nil {
			return err
		}
		f.Etcd = append(f.Etcd, p)
	}
	for _, p := range f.Etcd {
		if err := p.Start(); err != nil {
			return err
		}
	}
	if err := f.WaitEtcd(ctx); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(f.DeployDir, "etcd-auth.sh"))
	cmd.Env = append(os.Environ(),
		"PATH="+filepath.Dir(f.Etcdctl)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"ETCDCTL_ENDPOINTS="+strings.Join(f.Endpoints(), ","),
		"ETCDCTL_CACERT="+filepath.Join(f.Dir, "pki", caFile),
		"ETCDCTL_CERT="+filepath.Join(f.Dir, "pki", rootName+".crt"),
		"ETCDCTL_KEY="+filepath.Join(f.Dir, "pki", rootName+".key"))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("deploy/etcd-auth.sh: %v: %s", err, out)
	}
	return nil
}

// issueAll writes the fleet's certificates and keys where the deploy
// files name them, in this fleet's directory: the CA, each etcd member's
// (for its address), etcd's root and idkit clients', the servers' (for
// localhost and their addresses), and the token file.
func (f *Fleet) issueAll() error {
	pki := filepath.Join(f.Dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return err
	}
	if err := writeSecret(filepath.Join(pki, caFile), f.CA.PEM); err != nil {
		return err
	}
	if err := f.issue(filepath.Join(pki, rootName), rootName, false); err != nil {
		return err
	}
	for _, name := range []string{"e1", "e2", "e3"} {
		if err := f.IssueMember(name); err != nil {
			return err
		}
	}
	secrets := f.secretsDir()
	if err := os.MkdirAll(secrets, 0o700); err != nil {
		return err
	}
	if err := f.issue(filepath.Join(secrets, "etcd"), "idkit", false); err != nil {
		return err
	}
	if err := writeSecret(filepath.Join(secrets, "etcd-ca.crt"), f.CA.PEM); err != nil {
		return err
	}
	hosts := []string{"localhost", "127.0.0.1"}
	for _, name := range []string{"s1", "s2", "s3", "s4"} {
		hosts = append(hosts, f.Net.Host(name).IP.String())
	}
	if err := f.issue(filepath.Join(secrets, "tls"), "idkit serve", true, hosts...); err != nil {
		return err
	}
	return writeSecret(filepath.Join(secrets, "tokens"), []byte("harness "+f.Token+"\n"))
}

// secretsDir is where the harness keeps what deploy/idkit.service loads
// from /etc/idkit.
func (f *Fleet) secretsDir() string { return filepath.Join(f.Dir, "etc-idkit") }

// memberPKI is where member name keeps what deploy/etcd.env names in
// /etc/etcd/pki.
func (f *Fleet) memberPKI(name string) string { return filepath.Join(f.Dir, name+".pki") }

// issue writes a certificate for common name cn, and its key, to
// path.crt and path.key.
func (f *Fleet) issue(path, cn string, server bool, hosts ...string) error {
	f.serial++
	cert, key, err := f.CA.Sign(cn, f.serial, server, hosts...)
	if err != nil {
		return err
	}
	if err := writeSecret(path+".key", key); err != nil {
		return err
	}
	return writeSecret(path+".crt", cert)
}

// memberCN is the common name of every member's certificate, the one
// deploy/etcd.env's peer port takes.
const memberCN = "etcd-member"

// IssueMember writes a new certificate and key for etcd member name, for
// its address, as an operator renews one: each file replaced at once.
// It returns the new certificate's serial number.
func (f *Fleet) IssueMember(name string) error {
	dir := f.memberPKI(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := writeSecret(filepath.Join(dir, caFile), f.CA.PEM); err != nil {
		return err
	}
	return f.issue(filepath.Join(dir, "member"), memberCN, true, f.Net.Host(name).IP.String())
}

// WaitCertificate waits until etcd member p serves the certificate with
// serial to a new connection, on its client and its peer port.
func (f *Fleet) WaitCertificate(ctx context.Context, p *Proc, serial int64) error {
	pair, err := tls.LoadX509KeyPair(filepath.Join(f.Dir, "pki", rootName+".crt"), filepath.Join(f.Dir, "pki", rootName+".key"))
	if err != nil {
		return err
	}
	cfg := &tls.Config{RootCAs: f.CA.Pool(), Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	for _, port := range []string{"2379", "2380"} {
		addr := net.JoinHostPort(p.Host.IP.String(), port)
		err := poll(ctx, 10*time.Second, p.Name+" to serve certificate "+strconv.FormatInt(serial, 10)+" on "+addr, func() error {
			c, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", addr, cfg)
			if err != nil {
				return err
			}
			defer c.Close()
			if got := c.ConnectionState().PeerCertificates[0].SerialNumber.Int64(); got != serial {
				return fmt.Errorf("serial %d", got)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Serial is the serial number of the last certificate issued.
func (f *Fleet) Serial() int64 { return f.serial }

// writeSecret replaces path's contents at once, with mode 0600.
func writeSecret(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// TLS is the configuration of a client of the serve processes: their
// certificate is for localhost, whatever address is dialled.
func (f *Fleet) TLS() *tls.Config { return f.tls.Clone() }

// Endpoints are the etcd members' client URLs.
func (f *Fleet) Endpoints() []string {
	var eps []string
	for _, p := range f.Etcd {
		eps = append(eps, f.etcdScheme()+p.Host.IP.String()+":2379")
	}
	return eps
}

// etcdScheme is the scheme of deploy/etcd.env's client URLs.
func (f *Fleet) etcdScheme() string {
	if strings.HasPrefix(f.etcdFlags["ETCD_LISTEN_CLIENT_URLS"], "https://") {
		return "https://"
	}
	return "http://"
}

// peerURL is member h's peer URL, in deploy/etcd.env's scheme.
func (f *Fleet) peerURL(h *Host) string {
	scheme := "http://"
	if strings.HasPrefix(f.etcdFlags["ETCD_LISTEN_PEER_URLS"], "https://") {
		scheme = "https://"
	}
	return scheme + h.IP.String() + ":2380"
}

// etcdPKI is the directory deploy/etcd.env keeps a member's certificates
// in.
const etcdPKI = "/etc/etcd/pki/"

// newEtcd returns member name, with deploy/etcd.env's flags and the
// addresses, name, data directory and certificates of this fleet; state
// is "new" or "existing".
func (f *Fleet) newEtcd(name, state string) (*Proc, error) {
	h := f.Net.Host(name)
	var cluster []string
	for _, m := range []string{"e1", "e2", "e3"} {
		cluster = append(cluster, m+"="+f.peerURL(f.Net.Host(m)))
	}
	flags := make(map[string]string)
	for k, v := range f.etcdFlags {
		if rest, ok := strings.CutPrefix(v, etcdPKI); ok {
			v = filepath.Join(f.memberPKI(name), rest)
		}
		flags[k] = v
	}
	client := f.etcdScheme() + h.IP.String() + ":2379"
	for k, v := range map[string]string{
		"ETCD_NAME":                        name,
		"ETCD_DATA_DIR":                    filepath.Join(f.Dir, name+".etcd"),
		"ETCD_LISTEN_PEER_URLS":            f.peerURL(h),
		"ETCD_LISTEN_CLIENT_URLS":          client,
		"ETCD_INITIAL_ADVERTISE_PEER_URLS": f.peerURL(h),
		"ETCD_ADVERTISE_CLIENT_URLS":       client,
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

// newServe returns serve process name, run as deploy/idkit.service runs
// it: its ExecStart with deploy/idkit.env's settings for this host, the
// unit's credentials copied from the harness's /etc/idkit into a
// directory of their own (%d) that only the process's user reads, as
// systemd does for a DynamicUser, and as that user.
func (f *Fleet) newServe(name string) (*Proc, error) {
	h := f.Net.Host(name)
	unit := filepath.Join(f.DeployDir, "idkit.service")
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
		"IDKIT_PROXIES":      f.Net.Host("lb1").IP.String() + "/32," + f.Net.Host("lb2").IP.String() + "/32",
	} {
		if _, ok := env[k]; !ok {
			return nil, fmt.Errorf("deploy/idkit.env sets no %s", k)
		}
		env[k] = v
	}
	creds := filepath.Join(f.RunDir, name+".credentials")
	if err := loadCredentials(unit, "/etc/idkit/", f.secretsDir(), creds, f.UID); err != nil {
		return nil, err
	}
	argv, err := execStart(unit, env, creds)
	if err != nil {
		return nil, err
	}
	if argv[0] != "/usr/local/bin/idkit-full" {
		return nil, fmt.Errorf("deploy/idkit.service runs %s, want /usr/local/bin/idkit-full", argv[0])
	}
	argv[0] = f.Idkit
	if f.UID != 0 {
		id := strconv.Itoa(f.UID)
		argv = append([]string{"setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups", "--"}, argv...)
	}
	return NewProc(name, h, argv, nil, filepath.Join(f.Dir, name+".log"))
}

// startLB checks deploy/haproxy.cfg and starts HAProxy with it on host
// name, its frontend on that host's address and the four serve processes
// behind it.
func (f *Fleet) startLB(ctx context.Context, name string) error {
	h := f.Net.Host(name)
	addr := net.JoinHostPort(h.IP.String(), strconv.Itoa(lbPort))
	env := []string{"IDKIT_LB_ADDR=" + addr, "IDKIT_PROBE_PORT=" + strconv.Itoa(probePort)}
	for i, p := range f.Serve {
		env = append(env, fmt.Sprintf("IDKIT_S%d=%s", i+1, net.JoinHostPort(p.Host.IP.String(), strconv.Itoa(servePort))))
	}
	cfg := filepath.Join(f.DeployDir, "haproxy.cfg")
	check := exec.Command("haproxy", "-c", "-q", "-f", cfg)
	check.Env = append(os.Environ(), env...)
	if out, err := check.CombinedOutput(); err != nil {
		return fmt.Errorf("haproxy -c -f deploy/haproxy.cfg: %v: %s", err, out)
	}
	p, err := NewProc(name, h, []string{"haproxy", "-db", "-f", cfg}, env, filepath.Join(f.Dir, name+".log"))
	if err != nil {
		return err
	}
	f.LB = append(f.LB, p)
	f.Bases = append(f.Bases, "https://"+addr)
	if err := p.Start(); err != nil {
		return err
	}
	return f.WaitLB(ctx, p)
}

// WaitLB waits until load balancer p takes connections.
func (f *Fleet) WaitLB(ctx context.Context, p *Proc) error {
	addr := net.JoinHostPort(p.Host.IP.String(), strconv.Itoa(lbPort))
	return poll(ctx, 10*time.Second, "HAProxy to listen on "+addr, func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
}

// EtcdClient returns a client of the cluster, from the host namespace,
// with etcd's root client certificate.
func (f *Fleet) EtcdClient() (*clientv3.Client, error) {
	return f.EtcdClientAs(rootName)
}

// EtcdClientAs returns a client of the cluster with the client
// certificate of path.crt in the harness's keys: "root", or "" for
// none.
func (f *Fleet) EtcdClientAs(user string) (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: f.Endpoints(), DialTimeout: 2 * time.Second, Logger: zap.NewNop()}
	if f.etcdScheme() == "https://" {
		cfg.TLS = &tls.Config{RootCAs: f.CA.Pool(), MinVersion: tls.VersionTLS12}
		var certFile, keyFile string
		switch user {
		case rootName:
			certFile, keyFile = filepath.Join(f.Dir, "pki", rootName+".crt"), filepath.Join(f.Dir, "pki", rootName+".key")
		case "idkit":
			certFile, keyFile = filepath.Join(f.secretsDir(), "etcd.crt"), filepath.Join(f.secretsDir(), "etcd.key")
		}
		if certFile != "" {
			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				return nil, err
			}
			cfg.TLS.Certificates = []tls.Certificate{pair}
		}
	}
	return clientv3.New(cfg)
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
		added, err = cli.MemberAdd(c, []string{f.peerURL(p.Host)})
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
	for _, p := range f.LB {
		errs = append(errs, p.Close())
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
	if f.RunDir != "" {
		errs = append(errs, os.RemoveAll(f.RunDir))
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
// ${VAR} references replaced from env and its %d specifiers by creds, the
// credentials directory, as systemd does.
func execStart(unit string, env map[string]string, creds string) ([]string, error) {
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
			word, err = specifiers(word, creds)
			if err != nil {
				return nil, fmt.Errorf("%s: ExecStart: %w", unit, err)
			}
			argv = append(argv, word)
		}
		return argv, nil
	}
	return nil, fmt.Errorf("%s: no ExecStart", unit)
}

// specifiers replaces systemd's %d (the credentials directory) and %% in
// word; any other specifier is an error, as the harness does not know it.
func specifiers(word, creds string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(word); i++ {
		if word[i] != '%' {
			b.WriteByte(word[i])
			continue
		}
		if i+1 == len(word) {
			return "", fmt.Errorf("%q ends in a lone %%", word)
		}
		i++
		switch word[i] {
		case 'd':
			if creds == "" {
				return "", fmt.Errorf("%q uses %%d, and the unit loads no credential", word)
			}
			b.WriteString(creds)
		case '%':
			b.WriteByte('%')
		default:
			return "", fmt.Errorf("%q uses %%%c, which the harness does not expand", word, word[i])
		}
	}
	return b.String(), nil
}

// credentials returns the LoadCredential= lines of a systemd unit: each
// credential's name and the file it is read from.
func credentials(unit string) ([][2]string, error) {
	b, err := os.ReadFile(unit)
	if err != nil {
		return nil, err
	}
	var creds [][2]string
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "LoadCredential=")
		if !ok {
			continue
		}
		name, path, ok := strings.Cut(rest, ":")
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("%s: LoadCredential=%s, want NAME:PATH", unit, rest)
		}
		creds = append(creds, [2]string{name, path})
	}
	return creds, nil
}

// loadCredentials does what systemd does for the unit's LoadCredential=
// lines: it copies each file, which the unit names under from and the
// harness keeps in dir, to creds, owned by uid and readable by it alone.
func loadCredentials(unit, from, dir, creds string, uid int) error {
	list, err := credentials(unit)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(creds, 0o500); err != nil {
		return err
	}
	for _, c := range list {
		rest, ok := strings.CutPrefix(c[1], from)
		if !ok {
			return fmt.Errorf("%s: LoadCredential=%s:%s reads outside %s", unit, c[0], c[1], from)
		}
		b, err := os.ReadFile(filepath.Join(dir, rest))
		if err != nil {
			return fmt.Errorf("%s: credential %s: %w", unit, c[0], err)
		}
		path := filepath.Join(creds, c[0])
		if err := os.WriteFile(path, b, 0o400); err != nil {
			return err
		}
		if err := os.Chown(path, uid, uid); err != nil {
			return err
		}
	}
	if err := os.Chmod(creds, 0o500); err != nil {
		return err
	}
	return os.Chown(creds, uid, uid)
}
