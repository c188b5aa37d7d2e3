package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// holderFleet is the harness's holder processes.
type holderFleet struct {
	cfg       config
	bin       string // this binary, run as a holder process
	endpoints string
	dir       string // for the processes' stderr
	procs     []*holderProc
}

// sizes returns how many holders each process claims: -per-process, and
// the rest in the last.
func (f *holderFleet) sizes() []int {
	var s []int
	for left := f.cfg.holders; left > 0; left -= f.cfg.perProcess {
		s = append(s, min(left, f.cfg.perProcess))
	}
	return s
}

// start starts the holder processes spread evenly over the ramp and waits
// until every one has claimed its nodes, for at most bound from now. A
// process that exits or has not claimed by then fails the start, with the
// end of its stderr.
func (f *holderFleet) start(ctx context.Context, bound time.Duration) error {
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return err
	}
	deadline := time.Now().Add(bound)
	sizes := f.sizes()
	begin := time.Now()
	for i, n := range sizes {
		at := begin.Add(f.cfg.ramp * time.Duration(i) / time.Duration(len(sizes)))
		if err := f.sleepAlive(ctx, time.Until(at)); err != nil {
			return err
		}
		p, err := f.startProc(i, n)
		if err != nil {
			return err
		}
		f.procs = append(f.procs, p)
	}
	for _, p := range f.procs {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.claimed:
		case <-p.exited:
			return p.failure("exited before it claimed its nodes")
		case <-time.After(time.Until(deadline)):
			return p.failure(fmt.Sprintf("had not claimed its %d nodes %v after the first holder process started", p.size, bound))
		}
	}
	return nil
}

// startProc starts holder process i, which claims n nodes.
func (f *holderFleet) startProc(i, n int) (*holderProc, error) {
	p := &holderProc{
		index: i, size: n,
		stderrPath: filepath.Join(f.dir, fmt.Sprintf("holder-%04d.log", i)),
		claimed:    make(chan struct{}),
		exited:     make(chan struct{}),
	}
	stderr, err := os.Create(p.stderrPath)
	if err != nil {
		return nil, err
	}
	defer stderr.Close() // the child has its own copy
	p.cmd = exec.Command(f.bin, "-holder-process",
		"-endpoints", f.endpoints,
		"-per-process", strconv.Itoa(n),
		"-ttl", f.cfg.ttl.String(),
		"-interval", f.cfg.interval.String(),
		"-mark-lease", f.cfg.markLease.String(),
		"-every", f.cfg.every.String(),
		"-lease", f.cfg.lease,
	)
	// One P each: a holder process is mostly idle, and the scheduler's
	// spinning between two Ps would take CPU from etcd on the same host.
	p.cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	p.cmd.Stderr = stderr
	p.cmd.SysProcAttr = childAttr()
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start holder process %d: %w", i, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			p.addLine(sc.Bytes())
		}
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// sleepAlive waits for d and fails if a holder process exits meanwhile.
func (f *holderFleet) sleepAlive(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		for _, p := range f.procs {
			select {
			case <-p.exited:
				if !p.stopping.Load() {
					return p.failure("exited before the harness stopped it")
				}
			default:
			}
			if err := p.lineError(); err != nil {
				return p.failure(err.Error())
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			return nil
		case <-tick.C:
		}
	}
}

// waitLinesAfter waits, for at most bound, until every holder process has
// printed a counter line later than t.
func (f *holderFleet) waitLinesAfter(ctx context.Context, t time.Time, bound time.Duration) error {
	deadline := time.Now().Add(bound)
	for _, p := range f.procs {
		for {
			if c := p.lastCounts(); c != nil && c.Time > t.UnixNano() {
				break
			}
			if time.Now().After(deadline) {
				return p.failure(fmt.Sprintf("printed no counters after the window's end within %v", bound))
			}
			if err := f.sleepAlive(ctx, 100*time.Millisecond); err != nil {
				return err
			}
		}
	}
	return nil
}

// stop ends every holder process that still runs: SIGTERM, so that it
// closes its generators and claims, and SIGKILL for those that have not
// exited within wait. It reports the processes it had to kill.
func (f *holderFleet) stop(wait time.Duration) error {
	for _, p := range f.procs {
		p.signal(syscall.SIGTERM)
	}
	deadline := time.After(wait)
	var killed []string
	for _, p := range f.procs {
		select {
		case <-p.exited:
			continue
		case <-deadline:
		}
		p.signal(syscall.SIGKILL)
		<-p.exited
		killed = append(killed, strconv.Itoa(p.pid()))
	}
	if len(killed) > 0 {
		return fmt.Errorf("holder processes %s did not exit within %v of SIGTERM; killed", strings.Join(killed, ", "), wait)
	}
	return nil
}

// cpuTime returns the CPU time that the holder processes have used, of
// those still running.
func (f *holderFleet) cpuTime() (time.Duration, error) {
	var sum time.Duration
	for _, p := range f.procs {
		if p.stopping.Load() {
			continue
		}
		t, err := cpuTime(p.pid())
		if err != nil {
			return 0, fmt.Errorf("CPU time of holder process %d: %w", p.index, err)
		}
		sum += t
	}
	return sum, nil
}

// holderProc is one holder process and what it printed.
type holderProc struct {
	index, size int
	cmd         *exec.Cmd
	stderrPath  string
	stopping    atomic.Bool   // the harness ended it: its exit is expected
	claimed     chan struct{} // closed at its claimed line
	exited      chan struct{} // closed once it exited; then waitErr is set
	waitErr     error

	mu       sync.Mutex
	claim    *claimedLine
	counts   []countsLine
	badLines error
}

func (p *holderProc) pid() int { return p.cmd.Process.Pid }

// signal sends sig unless the process has exited.
func (p *holderProc) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
	default:
		p.stopping.Store(true)
		p.cmd.Process.Signal(sig)
	}
}

func (p *holderProc) addLine(b []byte) {
	var l holderLine
	err := json.Unmarshal(b, &l)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err != nil:
		p.badLines = fmt.Errorf("printed a line that is not a holder line: %q: %v", b, err)
	case l.Claimed != nil && p.claim == nil:
		p.claim = l.Claimed
		close(p.claimed)
	case l.Counts != nil:
		p.counts = append(p.counts, *l.Counts)
	}
}

func (p *holderProc) lineError() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.badLines
}

// claimedLine returns the process's claimed line; nil before it claimed.
func (p *holderProc) claimedLine() *claimedLine {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.claim
}

// lastCounts returns the latest counter line, or nil.
func (p *holderProc) lastCounts() *countsLine {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.counts) == 0 {
		return nil
	}
	return &p.counts[len(p.counts)-1]
}

// countsWithin returns the first and the last counter line printed within
// [from, to], or false if there are not two.
func (p *holderProc) countsWithin(from, to time.Time) (first, last countsLine, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := -1
	for k, c := range p.counts {
		if c.Time < from.UnixNano() || c.Time > to.UnixNano() {
			continue
		}
		if i < 0 {
			i = k
		}
		first, last = p.counts[i], c
	}
	return first, last, i >= 0 && last.Time > first.Time
}

// failure is an error saying that the process did what, with how it
// exited, if it did, and the end of its stderr.
func (p *holderProc) failure(what string) error {
	var how string
	select {
	case <-p.exited:
		how = fmt.Sprintf(" (%v)", p.waitErr)
	default:
	}
	return fmt.Errorf("holder process %d (pid %d, %d holders) %s%s; the end of its stderr (%s):\n%s",
		p.index, p.pid(), p.size, what, how, p.stderrPath, tail(p.stderrPath, 20))
}

// tail returns the last n lines of the file at path, or why it cannot.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	s := strings.Join(lines, "\n")
	if s == "" {
		return "(empty)"
	}
	return s
}
