//go:build linux

package deploy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A Proc is a server process that the harness starts, kills, stops and
// starts again on one host, with the same command line each time.
type Proc struct {
	Name string
	Host *Host
	argv []string
	env  []string
	log  *os.File // stdout and stderr of every run, appended

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current run ends
	runs   int
}

// NewProc returns a process that runs argv in host's namespace with env
// added to the harness's environment, its output appended to logPath.
func NewProc(name string, host *Host, argv, env []string, logPath string) (*Proc, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &Proc{Name: name, Host: host, argv: argv, env: env, log: log}, nil
}

// Start starts a run; the process must not be running.
func (p *Proc) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s: already running (pid %d)", p.Name, p.cmd.Process.Pid)
	}
	var cmd *exec.Cmd
	if p.Host != nil {
		cmd = p.Host.Command(p.argv[0], p.argv[1:]...)
	} else {
		cmd = exec.Command(p.argv[0], p.argv[1:]...)
	}
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	// A harness that dies takes its processes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p.runs++
	fmt.Fprintf(p.log, "--- %s: run %d: %s\n", time.Now().UTC().Format(time.RFC3339Nano), p.runs, strings.Join(p.argv, " "))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited = cmd, exited
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(p.log, "--- %s: run ended: %v\n", time.Now().UTC().Format(time.RFC3339Nano), err)
		p.mu.Lock()
		if p.cmd == cmd {
			p.cmd = nil
		}
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

// Running reports whether a run is going on.
func (p *Proc) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// Signal sends sig to the current run.
func (p *Proc) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return fmt.Errorf("%s: not running", p.Name)
	}
	return p.cmd.Process.Signal(sig)
}

// Stop ends the current run with sig (SIGTERM, or SIGKILL) and waits up to
// wait for it to exit, then kills it.
func (p *Proc) Stop(sig syscall.Signal, wait time.Duration) error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot act on SIGTERM
	cmd.Process.Signal(sig)
	select {
	case <-exited:
		return nil
	case <-time.After(wait):
	}
	cmd.Process.Kill()
	select {
	case <-exited:
		return fmt.Errorf("%s: did not exit within %v of %v; killed", p.Name, wait, sig)
	case <-time.After(10 * time.Second):
		return errors.New(p.Name + ": did not exit after SIGKILL")
	}
}

// Close kills any run and closes the log.
func (p *Proc) Close() error {
	err := p.Stop(syscall.SIGKILL, 5*time.Second)
	p.log.Close()
	return err
}
