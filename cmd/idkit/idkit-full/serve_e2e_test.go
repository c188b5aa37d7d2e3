package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// server is one "idkit serve" process.
type server struct {
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	stderr strings.Builder
	exited chan error
}

// startServer runs bin (the built idkit, or this test binary with env)
// as "idkit serve" with args on a free port, and waits until it listens.
func startServer(t *testing.T, bin string, env []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return startServerCmd(t, cmd)
}

// startServerCmd starts cmd, which runs "idkit serve" (perhaps through
// another program, such as unshare), and waits until it listens.
func startServerCmd(t *testing.T, cmd *exec.Cmd) *server {
	t.Helper()
	s := &server{cmd: cmd, exited: make(chan error, 1)}
	pipe, err := s.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, s.cmd.Start())
	listening := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.stderr.WriteString(line + "\n")
			s.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "idkit serve: listening on "); ok {
				listening <- strings.Fields(rest)[0]
			}
		}
		close(listening)
		s.exited <- s.cmd.Wait()
	}()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			<-s.exited
		}
	})
	select {
	case url, ok := <-listening:
		require.True(t, ok, "the server exited before listening: %s", s.log())
		s.url = url
	case <-time.After(testwait.Bound):
		t.Fatalf("the server did not listen within %v: %s", testwait.Bound, s.log())
	}
	return s
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

// stop sends sig and waits for the process to end.
func (s *server) stop(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(sig))
	select {
	case err := <-s.exited:
		return err
	case <-time.After(testwait.Bound):
		t.Fatalf("the server did not stop within %v of %v: %s", testwait.Bound, sig, s.log())
		return nil
	}
}

var e2eClient = &http.Client{Timeout: 30 * time.Second}

// fetch asks for n IDs of scheme, as JSON or text, and returns them.
func (s *server) fetch(scheme string, n int, asText bool) ([]string, error) {
	req, err := http.NewRequest(http.MethodGet, s.url+"/v1/"+scheme+"?n="+strconv.Itoa(n), nil)
	if err != nil {
		return nil, err
	}
	if asText {
		req.Header.Set("Accept", "text/plain")
	}
	resp, err := e2eClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	var ids []string
	if asText {
		ids = strings.Fields(string(b))
	} else {
		var v struct{ IDs []string }
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
		ids = v.IDs
	}
	if len(ids) != n {
		return nil, fmt.Errorf("got %d IDs, want %d", len(ids), n)
	}
	return ids, nil
}

// served collects the IDs a test received, per scheme, and finds repeats.
type served struct {
	mu      sync.Mutex
	ids     map[string]map[string]string // scheme → ID → the run that issued it
	repeats []string
}

func (v *served) add(run, scheme string, ids []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ids[scheme] == nil {
		v.ids[scheme] = make(map[string]string)
	}
	for _, id := range ids {
		if first, ok := v.ids[scheme][id]; ok {
			v.repeats = append(v.repeats, fmt.Sprintf("%s %s from %s, first from %s", scheme, id, run, first))
			continue
		}
		v.ids[scheme][id] = run
	}
}

// TestServeRestarts runs the real binary, fetches IDs of every scheme (and
// a segment tag) over
// HTTP, stops it with SIGTERM and with SIGKILL, each while clients keep
// asking, restarts it on the same launch log (once on a clock stepped back
// 3 s, through this test binary) and finds no ID issued twice.
func TestServeRestarts(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs idkit serve; skipped with -short")
	}
	bin := clitest.Build(t, "github.com/idkit/idkit/cmd/idkit/idkit-full")
	dir := t.TempDir()
	log := filepath.Join(dir, "idkit.db")
	out, err := exec.Command(bin, "launch", "begin", "--log", log, "--ticket", "E2E").CombinedOutput()
	require.NoError(t, err, "%s", out)

	schemes := []string{"traceid", "snowflake", "decimalid", "objectid", "segment/order"}
	got := &served{ids: make(map[string]map[string]string)}
	runs := []struct {
		name   string
		sig    syscall.Signal
		offset time.Duration // clock offset of the run, through the test binary
	}{
		{"first", syscall.SIGTERM, 0},
		{"after SIGTERM", syscall.SIGKILL, 0},
		{"after SIGKILL", syscall.SIGKILL, 0},
		{"after SIGKILL, clock 3s back", syscall.SIGTERM, -3 * time.Second},
		{"last", syscall.SIGTERM, 0},
	}
	for _, r := range runs {
		exe, env := bin, []string(nil)
		if r.offset != 0 {
			exe, env = os.Args[0], []string{clitest.OffsetEnv(r.offset)}
		}
		s := startServer(t, exe, env, "--node", "7", "--log", log, "--segment-tag", "order")

		// Every scheme, one ID and a batch, as JSON and as text.
		for _, scheme := range schemes {
			for _, n := range []int{1, 1000} {
				for _, asText := range []bool{false, true} {
					ids, err := s.fetch(scheme, n, asText)
					require.NoError(t, err, "%s: %s n=%d: %s", r.name, scheme, n, s.log())
					got.add(r.name, scheme, ids)
				}
			}
		}
		health, err := e2eClient.Get(s.url + "/healthz")
		require.NoError(t, err)
		health.Body.Close()
		assert.Equal(t, http.StatusOK, health.StatusCode)

		// Clients keep asking while the signal arrives.
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var mu sync.Mutex
		answered := 0
		var failures []error
		for i, scheme := range schemes {
			for j := range 2 {
				wg.Go(func() {
					for ctx.Err() == nil {
						ids, err := s.fetch(scheme, 1+(i*7+j*300)%500, j == 1)
						mu.Lock()
						if err != nil {
							failures = append(failures, err)
							mu.Unlock()
							return
						}
						answered++
						mu.Unlock()
						got.add(r.name, scheme, ids)
					}
				})
			}
		}
		testwait.Until(t, func() bool { mu.Lock(); defer mu.Unlock(); return answered >= 50 }, "answered 50 requests of the clients")
		err = s.stop(t, r.sig)
		cancel()
		wg.Wait()
		if r.sig == syscall.SIGTERM {
			require.NoError(t, err, "%s: exit after SIGTERM: %s", r.name, s.log())
			assert.Contains(t, s.log(), "idkit serve: stopped")
		} else {
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "%s: %v", r.name, err)
		}
		for _, f := range failures {
			// The only failures allowed are connections the stopped
			// server no longer accepts or had closed: never a response
			// cut short or one with an error status.
			// (A killed server may cut a response short.)
			assert.NotContains(t, f.Error(), "status", "%s", r.name)
			if r.sig == syscall.SIGTERM {
				assert.NotContains(t, f.Error(), "unexpected EOF", "%s", r.name)
				assert.NotContains(t, f.Error(), "IDs, want", "%s", r.name)
			}
		}
		t.Logf("%s: %d answers while %v arrived, %d connections refused or closed after it", r.name, answered, r.sig, len(failures))
	}
	require.Empty(t, got.repeats)
	for _, scheme := range schemes {
		assert.GreaterOrEqual(t, len(got.ids[scheme]), len(runs)*2*(1+1000), scheme)
		t.Logf("%s: %d IDs over %d runs, none twice", scheme, len(got.ids[scheme]), len(runs))
	}
}
