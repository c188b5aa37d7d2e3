package fleettest

import (
	"bytes"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// process is a running etcd member: its command, the end of its output
// (kept for the error that says why it ended) and done, closed when it
// has exited.
type process struct {
	cmd  *exec.Cmd
	done chan struct{}

	mu  sync.Mutex
	out bytes.Buffer // the last outputKept bytes of its standard error and output
}

// outputKept bounds the output a process keeps.
const outputKept = 8 << 10

// stopWithin bounds how long stop waits for a graceful exit before it
// kills the process.
const stopWithin = 30 * time.Second

func startProcess(bin string, args []string) (*process, error) {
	p := &process{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = p, p
	p.cmd.SysProcAttr = sysProcAttr() // dies with the test process, however it ends
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Write keeps the end of what the process prints.
func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.out.Write(b)
	if over := p.out.Len() - outputKept; over > 0 {
		p.out.Next(over)
	}
	return len(b), nil
}

// output returns the end of what the process printed.
func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// stop sends sig and waits for the process to exit, killing it if a
// graceful stop takes longer than stopWithin.
func (p *process) stop(sig syscall.Signal) {
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(stopWithin):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}
