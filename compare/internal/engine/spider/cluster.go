package spider

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"

	"github.com/idkit/idkit/compare/internal/engine/innodb"
)

// Limits of a cluster.
const (
	DefaultShards = 4
	MinShards     = 2
	MaxShards     = 16
	// startTimeout bounds the start of one server, and stopTimeout its
	// shutdown.
	startTimeout = 60 * time.Second
	stopTimeout  = 60 * time.Second
)

// ErrMissing says that what a cluster needs is not on the machine:
// MariaDB's server, its install program or the Spider plugin.
var ErrMissing = errkind.New(idkit.ErrUnavailable, "compare: spider: not installed")

// Cluster is a Spider cluster the run starts on this machine and removes
// at the end: N backend MariaDB servers, each holding one shard of every
// table, and a front server whose Spider tables spread their partitions
// over the backends. Each server has a data directory and a Unix socket
// of its own under the run's directory, and no TCP port: nothing outside
// the run reaches them, and the run touches no server of the user's.
type Cluster struct {
	dir      string
	front    *server
	backends []*server
	version  string
	closed   bool
}

// server is one mariadbd of a cluster.
type server struct {
	name   string // "front", "shard0", ...
	dir    string
	socket string
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has exited
	log    string        // the server's error log
	db     *sql.DB
	conn   *sql.Conn
}

// Start starts a cluster of shards backends and a front under dir, which
// it creates and, on Close, removes. It fails with ErrMissing, naming the
// package to install, when mariadbd, mariadb-install-db or the Spider
// plugin is missing.
func Start(ctx context.Context, dir string, shards int) (*Cluster, error) {
	if shards < MinShards || shards > MaxShards {
		return nil, fmt.Errorf("compare: spider: %d shards, want %d..=%d", shards, MinShards, MaxShards)
	}
	mariadbd, err := lookPath("mariadbd", "/usr/sbin/mariadbd")
	if err != nil {
		return nil, fmt.Errorf("%w: no mariadbd (Debian: apt-get install mariadb-server mariadb-plugin-spider): %v", ErrMissing, err)
	}
	install, err := lookPath("mariadb-install-db", "/usr/bin/mariadb-install-db")
	if err != nil {
		return nil, fmt.Errorf("%w: no mariadb-install-db (Debian: apt-get install mariadb-server): %v", ErrMissing, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("compare: spider: %w", err)
	}
	c := &Cluster{dir: dir}
	template := filepath.Join(dir, "template")
	args := []string{"--no-defaults", "--datadir=" + template, "--auth-root-authentication-method=normal", "--skip-test-db"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	if out, err := exec.CommandContext(ctx, install, args...).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("compare: spider: mariadb-install-db: %w: %s", err, lastLines(out, 5))
	}
	names := []string{"front"}
	for i := range shards {
		names = append(names, "shard"+strconv.Itoa(i))
	}
	for _, name := range names {
		s := &server{name: name, dir: filepath.Join(dir, name), socket: filepath.Join(dir, name+".sock")}
		if err := exec.CommandContext(ctx, "cp", "-a", template, s.dir).Run(); err != nil {
			c.Close(ctx)
			return nil, fmt.Errorf("compare: spider: copy the data directory for %s: %w", name, err)
		}
		if name == "front" {
			c.front = s
		} else {
			c.backends = append(c.backends, s)
		}
	}
	os.RemoveAll(template)
	for _, s := range append([]*server{c.front}, c.backends...) {
		if err := s.start(ctx, mariadbd, s == c.front); err != nil {
			c.Close(ctx)
			return nil, err
		}
	}
	if err := c.front.conn.QueryRowContext(ctx, "SELECT VERSION()").Scan(&c.version); err != nil {
		c.Close(ctx)
		return nil, fmt.Errorf("compare: spider: front: %w", err)
	}
	var spider int
	if err := c.front.conn.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.ENGINES WHERE ENGINE = 'SPIDER' AND SUPPORT IN ('YES', 'DEFAULT')").Scan(&spider); err != nil || spider == 0 {
		c.Close(ctx)
		return nil, fmt.Errorf("%w: the front server has no SPIDER engine (Debian: apt-get install mariadb-plugin-spider, at the server's version %s): %v", ErrMissing, c.version, err)
	}
	for i, b := range c.backends {
		if _, err := b.conn.ExecContext(ctx, "CREATE DATABASE idkit"); err != nil {
			c.Close(ctx)
			return nil, fmt.Errorf("compare: spider: %s: %w", b.name, err)
		}
		if _, err := c.front.conn.ExecContext(ctx, fmt.Sprintf(
			"CREATE SERVER s%d FOREIGN DATA WRAPPER mysql OPTIONS (SOCKET '%s', USER 'root', PASSWORD '', DATABASE 'idkit')", i, b.socket)); err != nil {
			c.Close(ctx)
			return nil, fmt.Errorf("compare: spider: front: name %s: %w", b.name, err)
		}
	}
	if _, err := c.front.conn.ExecContext(ctx, "CREATE DATABASE idkit"); err != nil {
		c.Close(ctx)
		return nil, fmt.Errorf("compare: spider: front: %w", err)
	}
	return c, nil
}

// Shards is the number of backends.
func (c *Cluster) Shards() int { return len(c.backends) }

// Version is the front server's version.
func (c *Cluster) Version() string { return c.version }

// start starts s and connects to it, within startTimeout.
func (s *server) start(ctx context.Context, mariadbd string, front bool) error {
	args := []string{"--no-defaults", "--datadir=" + s.dir, "--socket=" + s.socket, "--skip-networking",
		"--pid-file=" + s.dir + ".pid", "--skip-log-bin", "--innodb-buffer-pool-size=64M", "--innodb-log-file-size=32M",
		"--max-connections=64", "--skip-name-resolve", "--innodb-io-capacity=20000", "--innodb-io-capacity-max=40000",
		"--innodb-fast-shutdown=2"} // its data is thrown away: stop without flushing it
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	if front {
		args = append(args, "--plugin-load-add=ha_spider.so")
	}
	s.log = s.dir + ".log"
	logFile, err := os.Create(s.log)
	if err != nil {
		return fmt.Errorf("compare: spider: start %s: %w", s.name, err)
	}
	defer logFile.Close()
	s.cmd = exec.Command(mariadbd, args...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the run
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("compare: spider: start %s: %w", s.name, err)
	}
	s.exited = make(chan struct{})
	go func() { s.cmd.Wait(); close(s.exited) }()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.InterpolateParams = "root", "unix", s.socket, true
	innodb.SetSession(cfg)
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("compare: spider: %s: %w", s.name, err)
	}
	s.db = sql.OpenDB(connector)
	deadline := time.Now().Add(startTimeout)
	for {
		if s.conn, err = s.db.Conn(ctx); err == nil {
			return nil
		}
		select {
		case <-s.exited:
			out, _ := os.ReadFile(s.log)
			return fmt.Errorf("compare: spider: %s exited at start: %s", s.name, lastLines(out, 5))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("compare: spider: %s did not answer within %v: %v", s.name, startTimeout, err)
		}
	}
}

// stop shuts s down and waits for it, killing it after stopTimeout.
func (s *server) stop() error {
	if s.conn != nil {
		s.conn.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
	if s.cmd == nil || s.exited == nil {
		return nil
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil
	case <-time.After(stopTimeout):
		s.cmd.Process.Kill()
		<-s.exited
		return fmt.Errorf("compare: spider: %s did not stop within %v and was killed", s.name, stopTimeout)
	}
}

// Close stops every server of the cluster and removes its directory; a
// second Close does nothing.
func (c *Cluster) Close(ctx context.Context) error {
	if c.closed {
		return nil
	}
	c.closed = true
	servers := append([]*server{c.front}, c.backends...)
	errs := make([]error, len(servers)+1)
	var wg sync.WaitGroup
	for i, s := range servers {
		if s != nil {
			wg.Go(func() { errs[i] = s.stop() })
		}
	}
	wg.Wait()
	errs[len(servers)] = os.RemoveAll(c.dir)
	return errors.Join(errs...)
}

// status reads a global status counter of s.
func (s *server) status(ctx context.Context, name string) (int64, error) {
	var n string
	var v int64
	if err := s.conn.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&n, &v); err != nil {
		return 0, fmt.Errorf("%s: %s: %w", s.name, name, err)
	}
	return v, nil
}

// flush writes every dirty page of s to its files and waits until none is
// left and the purge of old row versions is done, so that
// Innodb_pages_written counts every page a load changed and nothing of the
// work before it.
func (s *server) flush(ctx context.Context, timeout time.Duration) error {
	if _, err := s.conn.ExecContext(ctx, "SET GLOBAL innodb_max_dirty_pages_pct = 0, innodb_max_dirty_pages_pct_lwm = 0"); err != nil {
		return fmt.Errorf("%s: %w", s.name, err)
	}
	defer s.conn.ExecContext(context.WithoutCancel(ctx), "SET GLOBAL innodb_max_dirty_pages_pct = DEFAULT, innodb_max_dirty_pages_pct_lwm = DEFAULT")
	deadline := time.Now().Add(timeout)
	for {
		dirty, err := s.status(ctx, "Innodb_buffer_pool_pages_dirty")
		if err != nil {
			return err
		}
		history, err := s.status(ctx, "Innodb_history_list_length")
		if err != nil {
			return err
		}
		if dirty == 0 && history == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %d pages still dirty and %d transactions' row versions not purged after %v", s.name, dirty, history, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func lookPath(name, fallback string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if _, err := os.Stat(fallback); err != nil {
		return "", err
	}
	return fallback, nil
}

// lastLines returns the last n lines of out, for an error message.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
