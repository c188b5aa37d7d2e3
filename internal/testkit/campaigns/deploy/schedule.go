//go:build linux

package deploy

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"syscall"
	"time"
)

// A Fault is one kind of failure the schedule injects: Inject starts it
// on the fleet and returns the function that ends it.
type Fault struct {
	Kind   string
	Inject func(ctx context.Context, f *Fleet, r *rand.Rand) (target string, heal func() error, err error)
}

// A Window is one fault as it was injected: from Start to Healed, then a
// quiet time to Settled.
type Window struct {
	Kind, Target           string
	Start, Healed, Settled time.Time
}

// Faults are the kinds of failure a schedule draws from.
var Faults = []Fault{
	{"serve SIGKILL and restart", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		p := f.Serve[r.IntN(len(f.Serve))]
		if err := p.Stop(syscall.SIGKILL, 5*time.Second); err != nil {
			return p.Name, nil, err
		}
		return p.Name, p.Start, nil
	}},
	{"serve SIGSTOP and SIGCONT", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		p := f.Serve[r.IntN(len(f.Serve))]
		return p.Name, func() error { return p.Signal(syscall.SIGCONT) }, p.Signal(syscall.SIGSTOP)
	}},
	{"serve cut off", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		h := f.Serve[r.IntN(len(f.Serve))].Host
		return h.Name, f.Net.Heal, h.Cut()
	}},
	{"serve to etcd dropped one way", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		h := f.Serve[r.IntN(len(f.Serve))].Host
		return h.Name, f.Net.Heal, h.Drop(hosts(f.Etcd)...)
	}},
	{"etcd member SIGKILL and restart", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		p := f.Etcd[r.IntN(len(f.Etcd))]
		if err := p.Stop(syscall.SIGKILL, 5*time.Second); err != nil {
			return p.Name, nil, err
		}
		return p.Name, p.Start, nil
	}},
	{"etcd member SIGSTOP and SIGCONT", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		p := f.Etcd[r.IntN(len(f.Etcd))]
		return p.Name, func() error { return p.Signal(syscall.SIGCONT) }, p.Signal(syscall.SIGSTOP)
	}},
	{"etcd member cut off", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		h := f.Etcd[r.IntN(len(f.Etcd))].Host
		return h.Name, f.Net.Heal, h.Cut()
	}},
	{"etcd member to peers dropped one way", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		i := r.IntN(len(f.Etcd))
		var peers []*Host
		for j, p := range f.Etcd {
			if j != i {
				peers = append(peers, p.Host)
			}
		}
		h := f.Etcd[i].Host
		return h.Name, f.Net.Heal, h.Drop(peers...)
	}},
	{"2/1 split", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		major, minor := SplitSides(f)
		return "e1 e2 s1 s2 | e3 s3 s4", f.Net.Heal, Split(major, minor)
	}},
	{"rolling restart of serve", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		for _, p := range f.Serve {
			if err := p.Stop(syscall.SIGTERM, 20*time.Second); err != nil {
				return "s1 to s4", nil, err
			}
			if err := p.Start(); err != nil {
				return "s1 to s4", nil, err
			}
			if err := f.WaitReady(ctx, p); err != nil {
				return "s1 to s4", nil, err
			}
		}
		return "s1 to s4", func() error { return nil }, nil
	}},
	{"load balancer SIGKILL and restart", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		p := f.LB[r.IntN(len(f.LB))]
		if err := p.Stop(syscall.SIGKILL, 5*time.Second); err != nil {
			return p.Name, nil, err
		}
		return p.Name, func() error {
			if err := p.Start(); err != nil {
				return err
			}
			return f.WaitLB(context.WithoutCancel(ctx), p)
		}, nil
	}},
	{"load balancer cut off", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		h := f.LB[r.IntN(len(f.LB))].Host
		return h.Name, f.Net.Heal, h.Cut()
	}},
	{"etcd member certificate renewed", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		p := f.Etcd[r.IntN(len(f.Etcd))]
		if err := f.IssueMember(p.Name); err != nil {
			return p.Name, nil, err
		}
		// etcd reads its certificate at each new connection, to its
		// clients and its peers alike.
		return p.Name, func() error { return nil }, f.WaitCertificate(ctx, p, f.Serial())
	}},
	{"etcd member replaced with a fresh data directory", func(ctx context.Context, f *Fleet, r *rand.Rand) (string, func() error, error) {
		p := f.Etcd[r.IntN(len(f.Etcd))]
		return p.Name, func() error { return nil }, f.ReplaceMember(ctx, p)
	}},
}

// SplitSides are the sides of the 2/1 split: e1, e2, s1 and s2 hold the
// majority, e3, s3 and s4 the minority.
func SplitSides(f *Fleet) (major, minor []*Host) {
	for _, n := range []string{"e1", "e2", "s1", "s2"} {
		major = append(major, f.Net.Host(n))
	}
	for _, n := range []string{"e3", "s3", "s4"} {
		minor = append(minor, f.Net.Host(n))
	}
	return major, minor
}

func hosts(ps []*Proc) []*Host {
	var hs []*Host
	for _, p := range ps {
		hs = append(hs, p.Host)
	}
	return hs
}

// A Schedule injects faults, drawn from a seed, one after another until
// its context ends: every kind once in a shuffled round, then another
// round.
type Schedule struct {
	Seed   uint64
	Faults []Fault       // the kinds drawn from; nil means Faults
	Hold   time.Duration // how long a fault lasts
	Settle time.Duration // the quiet time after one
	// During, if set, runs while the fault holds (the checks of the 2/1
	// split); its error fails the run.
	During func(ctx context.Context, w Window) error
	Logf   func(format string, args ...any)
}

// Run injects faults until ctx ends, and returns the windows.
func (s *Schedule) Run(ctx context.Context, f *Fleet) ([]Window, error) {
	r := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	faults := s.Faults
	if faults == nil {
		faults = Faults
	}
	var windows []Window
	for ctx.Err() == nil {
		for _, i := range r.Perm(len(faults)) {
			if ctx.Err() != nil {
				break
			}
			fault := faults[i]
			w := Window{Kind: fault.Kind, Start: time.Now()}
			target, heal, err := fault.Inject(ctx, f, r)
			w.Target = target
			if err != nil {
				return windows, fmt.Errorf("%s %s: %w", fault.Kind, target, err)
			}
			s.Logf("%s: %s on %s", w.Start.UTC().Format("15:04:05"), fault.Kind, target)
			var during error
			if s.During != nil {
				during = s.During(ctx, w)
			} else {
				sleep(ctx, s.Hold)
			}
			if err := heal(); err != nil {
				return windows, fmt.Errorf("healing %s %s: %w", fault.Kind, target, err)
			}
			w.Healed = time.Now()
			if during != nil {
				return append(windows, w), during
			}
			// Every process is running and ready again before the next
			// fault, so that faults do not pile up.
			for _, p := range f.Serve {
				if !p.Running() {
					if err := p.Start(); err != nil {
						return windows, err
					}
				}
			}
			for _, p := range f.LB {
				if err := f.WaitLB(context.WithoutCancel(ctx), p); err != nil {
					return windows, fmt.Errorf("after %s %s: %w", fault.Kind, target, err)
				}
			}
			for _, p := range f.Serve {
				if err := f.WaitReady(context.WithoutCancel(ctx), p); err != nil {
					return windows, fmt.Errorf("after %s %s: %w", fault.Kind, target, err)
				}
			}
			if err := f.WaitEtcd(context.WithoutCancel(ctx)); err != nil {
				return windows, fmt.Errorf("after %s %s: %w", fault.Kind, target, err)
			}
			sleep(ctx, s.Settle)
			w.Settled = time.Now()
			windows = append(windows, w)
		}
	}
	return windows, nil
}

// CheckSplit watches a 2/1 split for hold: the minority's serve processes
// turn unready within ttl and then answer 503 with Retry-After, while the
// majority's stay ready.
func CheckSplit(ctx context.Context, f *Fleet, start time.Time, ttl, hold time.Duration, token string) error {
	minority := []*Proc{f.Serve[2], f.Serve[3]}
	majority := []*Proc{f.Serve[0], f.Serve[1]}
	for _, p := range minority {
		err := poll(ctx, time.Until(start.Add(ttl+time.Second)), p.Name+" on the minority side to turn unready within the TTL", func() error {
			code, err := f.Ready(p)
			if err == nil && code != http.StatusServiceUnavailable {
				err = fmt.Errorf("/readyz %d", code)
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: f.TLS(), DisableKeepAlives: true}}
	for time.Since(start) < hold && ctx.Err() == nil {
		for _, p := range minority {
			code, retry, err := get(client, p, token)
			if err == nil && (code != http.StatusServiceUnavailable || retry == "") {
				return fmt.Errorf("%s on the minority side answered %d (Retry-After %q) %v into the split, want 503 with Retry-After", p.Name, code, retry, time.Since(start).Round(time.Millisecond))
			}
		}
		for _, p := range majority {
			if code, err := f.Ready(p); err != nil || code != http.StatusOK {
				return fmt.Errorf("%s on the majority side: /readyz %d, %v, %v into the split", p.Name, code, err, time.Since(start).Round(time.Millisecond))
			}
		}
		sleep(ctx, 500*time.Millisecond)
	}
	return nil
}

func get(client *http.Client, p *Proc, token string) (code int, retryAfter string, err error) {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://%s:%d/v1/traceid?n=1", p.Host.IP, servePort), nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
