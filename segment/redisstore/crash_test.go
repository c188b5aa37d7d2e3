package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/internal/testkit/suites/storetest"
	"github.com/idkit/idkit/internal/testkit/testwait"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/redisstore"
)

// ownServer is a redis-server of one test's own, on a free port with its
// files in a directory of the test, so that the test can kill it.
type ownServer struct {
	t      *testing.T
	bin    string
	addr   string
	dir    string
	args   []string // the persistence settings
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has exited
}

// startOwnServer starts redis-server with the given persistence settings.
// It needs the redis-server binary of the machine's Redis, which the
// environment's server implies: the test skips only where that is unset.
func startOwnServer(t *testing.T, persistence ...string) *ownServer {
	t.Helper()
	storetest.Server(t, envAddr, "Redis", "127.0.0.1:6379")
	bin, err := exec.LookPath("redis-server")
	require.NoError(t, err, "%s names a Redis server, so its redis-server binary should be installed", envAddr)
	s := &ownServer{t: t, bin: bin, dir: t.TempDir(), args: persistence}
	s.start()
	t.Cleanup(s.kill)
	return s
}

// start runs the server and waits until it answers. A server that
// exits before it answers (another process took its port, which start
// picked free a moment before) starts again on a new port, a few times.
func (s *ownServer) start() {
	s.t.Helper()
	for try := 1; ; try++ {
		if s.addr == "" {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(s.t, err)
			s.addr = ln.Addr().String()
			require.NoError(s.t, ln.Close())
		}
		err := s.run()
		if err == nil {
			return
		}
		if try == 3 {
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			s.t.Fatalf("redis-server %v: %v; its log:\n%s", s.args, err, log)
		}
		s.addr = ""
	}
}

// run starts the server on s.addr and waits until it answers, or returns
// why not.
func (s *ownServer) run() error {
	_, port, err := net.SplitHostPort(s.addr)
	require.NoError(s.t, err)
	args := append([]string{"--port", port, "--bind", "127.0.0.1", "--dir", s.dir,
		"--save", "", "--daemonize", "no", "--logfile", filepath.Join(s.dir, "redis.log")}, s.args...)
	s.cmd = exec.Command(s.bin, args...)
	require.NoError(s.t, s.cmd.Start())
	exited := make(chan struct{})
	go func(cmd *exec.Cmd) {
		_ = cmd.Wait()
		close(exited)
	}(s.cmd)
	s.exited = exited
	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer c.Close()
	// A server loading its AOF answers within milliseconds; the bound only
	// ends a wait for one that never does.
	deadline := time.Now().Add(testwait.Bound)
	for {
		info, err := c.Info(context.Background(), "server").Result()
		if err == nil {
			// The server on the port must be this one, not another that
			// took the port first.
			if strings.Contains(info, "process_id:"+strconv.Itoa(s.cmd.Process.Pid)+"\r\n") {
				return nil
			}
			s.kill()
			return errors.New("another server answers on its port")
		}
		select {
		case <-exited:
			return errors.New("exited before it answered")
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("no answer within %v: %w", testwait.Bound, err)
		}
	}
}

// kill ends the server with SIGKILL, as a crash would.
func (s *ownServer) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.exited
		s.cmd = nil
	}
}

// reserveAll reserves n blocks of tag in a store opened on s and returns
// the last one.
func (s *ownServer) reserveAll(opts redisstore.Options, tag string, n int) segment.Block {
	s.t.Helper()
	st, err := redisstore.Open(context.Background(), s.addr, opts)
	require.NoError(s.t, err)
	defer st.Close()
	var last segment.Block
	for range n {
		b, err := st.ReserveBlock(context.Background(), tag, 100)
		require.NoError(s.t, err)
		require.Greater(s.t, b.First, last.Last)
		last = b
	}
	return last
}

// TestServerCrash: on a server with appendonly yes and appendfsync always,
// which Open accepts without AllowVolatile, every block ReserveBlock
// returned survives a SIGKILL of Redis: after each restart the next block
// starts above it. The control shows what AllowVolatile accepts: a server
// without the AOF starts its counters again after the same crash. (A
// killed process leaves its writes in the kernel's page cache; that
// appendfsync always also survives a power loss needs a machine crash,
// which no test here causes.)
func TestServerCrash(t *testing.T) {
	t.Parallel()
	tag := "orders"
	t.Run("appendfsync always", func(t *testing.T) {
		t.Parallel()
		s := startOwnServer(t, "--appendonly", "yes", "--appendfsync", "always")
		var before segment.Block
		for round := range 5 {
			last := s.reserveAll(redisstore.Options{}, tag, 50)
			require.Greater(t, last.First, before.Last, "round %d: a block at or below one reserved before the crash", round)
			s.kill()
			s.start()
			before = last
		}
		after := s.reserveAll(redisstore.Options{}, tag, 1)
		assert.Equal(t, before.Last+1, after.First, "the block after the last crash continues the last one reserved")
	})
	t.Run("volatile", func(t *testing.T) {
		t.Parallel()
		s := startOwnServer(t, "--appendonly", "no")
		_, err := redisstore.Open(context.Background(), s.addr, redisstore.Options{})
		require.ErrorIs(t, err, redisstore.ErrNotDurable)
		opts := redisstore.Options{AllowVolatile: true}
		before := s.reserveAll(opts, tag, 50)
		s.kill()
		s.start()
		after := s.reserveAll(opts, tag, 1)
		assert.Equal(t, int64(1), after.First, "without the AOF the counter starts again, repeating block [1, 100] of %v", before)
	})
}
