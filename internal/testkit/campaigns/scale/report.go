package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idkit/idkit/fleet"
)

// window is the measuring window: its bounds, the cluster's leader at
// both ends, and the CPU times and the leader's metrics at both ends.
type window struct {
	start, end        time.Time
	leader, endLeader *member
	etcd              [2][]time.Duration // each member's CPU time
	holders           [2]time.Duration   // the holder processes' CPU time
	host              [2]hostCPU
	metrics           [2]samples // the leader's, at the start
	status            *clientv3.StatusResponse
	load              string
}

// measure reads the CPU times and the metrics of the window's start
// (i = 0) or end (i = 1).
func (w *window) measure(ctx context.Context, i int, cl *cluster, fl *holderFleet) error {
	var err error
	if w.metrics[i], err = scrape(ctx, w.leader.clientURL, metricFsync, metricCommit, metricProposals, metricSlow, metricElections); err != nil {
		return err
	}
	if w.etcd[i], err = cl.cpuTimes(); err != nil {
		return err
	}
	if w.holders[i], err = fl.cpuTime(); err != nil {
		return err
	}
	if w.host[i], err = readHostCPU(); err != nil {
		return err
	}
	if i == 0 {
		w.start = time.Now()
	} else {
		w.end = time.Now()
	}
	return nil
}

// openWindow starts the window now.
func openWindow(ctx context.Context, cli *clientv3.Client, cl *cluster, fl *holderFleet) (*window, error) {
	leader, err := cl.waitLeader(ctx, cli, leaderBound)
	if err != nil {
		return nil, fmt.Errorf("find the etcd leader at the window's start: %w", err)
	}
	w := &window{leader: leader}
	return w, w.measure(ctx, 0, cl, fl)
}

// close ends the window now.
func (w *window) close(ctx context.Context, cli *clientv3.Client, cl *cluster, fl *holderFleet) error {
	if err := w.measure(ctx, 1, cl, fl); err != nil {
		return err
	}
	var err error
	if w.endLeader, err = cl.waitLeader(ctx, cli, leaderBound); err != nil {
		return fmt.Errorf("find the etcd leader at the window's end: %w", err)
	}
	if w.status, err = cl.status(ctx, cli, w.endLeader); err != nil {
		return err
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		w.load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	return nil
}

// Report is what a run measured. Rates are requests a second over the
// window, summed over the holder processes. Latencies are client-side,
// from the moment a request was sent to its answer, retries within the
// etcd client included, each known to within 10% (the histograms'
// buckets); a request that failed counts at the time it failed, so on an
// overloaded cluster fleet's timeouts cap the quantiles. CPU is in cores
// (CPU seconds a second).
type Report struct {
	Holders   int     `json:"holders"`
	Processes int     `json:"processes"`
	TTL       float64 `json:"ttl_s"`
	Interval  float64 `json:"interval_s"`   // how often each claim renews
	MarkLease float64 `json:"mark_lease_s"` // 0: the claim's suggestion
	Every     float64 `json:"every_s"`
	LeaseMode string  `json:"lease_mode"`
	Window    float64 `json:"window_s"`

	Rates  map[string]float64 `json:"rates"`  // by request kind
	Total  float64            `json:"total"`  // of all kinds
	Failed map[string]uint64  `json:"failed"` // failed requests in the window, by kind
	IDs    float64            `json:"ids_per_s"`

	Writes       uint64  `json:"writes"` // write requests in the window
	WriteP50     float64 `json:"write_p50_s"`
	WriteP99     float64 `json:"write_p99_s"`
	KeepAliveP99 float64 `json:"keep_alive_p99_s"`

	HostCores  int     `json:"host_cores"`
	HostBusy   float64 `json:"host_busy"`   // cores busy, of HostCores
	HostIOWait float64 `json:"host_iowait"` // cores idle waiting for I/O
	EtcdCPU    float64 `json:"etcd_cpu"`    // the three members'
	HolderCPU  float64 `json:"holder_cpu"`  // the holder processes'

	Proposals     float64 `json:"proposals_per_s"` // raft entries committed
	Fsyncs        float64 `json:"fsyncs_per_s"`    // the leader's WAL fsyncs
	FsyncP99      float64 `json:"fsync_p99_s"`
	CommitP99     float64 `json:"backend_commit_p99_s"`
	SlowApplies   float64 `json:"slow_applies"`   // over 100ms, in the window
	LeaderChanges float64 `json:"leader_changes"` // in the window, as the leader saw them

	Leader      string             `json:"leader"`
	LeaderEnd   string             `json:"leader_end"` // differs from Leader after an election in the window
	LeaderCPU   float64            `json:"leader_cpu"`
	CPU         map[string]float64 `json:"cpu"` // by member
	DBSize      int64              `json:"db_size"`
	DBSizeInUse int64              `json:"db_size_in_use"`
	Load        string             `json:"load"` // the host's load averages at the window's end

	Claims   int     `json:"claims"`
	ClaimP50 float64 `json:"claim_p50_s"`
	ClaimP99 float64 `json:"claim_p99_s"`
	ClaimMax float64 `json:"claim_max_s"`
	// Attempts to claim a node and start its generator that failed for
	// want of an answer from etcd, or lost the claim, and were tried again.
	ClaimRetries int `json:"claim_retries"`

	// Over the whole run, not the window only.
	IDErrors     uint64 `json:"id_errors"`
	IDUnavail    uint64 `json:"id_unavailable"` // of IDErrors, those of idkit.ErrUnavailable: etcd did not answer in time
	ClaimsLost   uint64 `json:"claims_lost"`
	HolderErrors uint64 `json:"holder_errors"` // IDErrors + ClaimsLost
	LastError    string `json:"last_error,omitempty"`

	FreeAfterKill    float64 `json:"free_after_kill_s"`
	FreeBound        float64 `json:"free_bound_s"`       // TTL + 1s
	KilledNodes      int     `json:"killed_nodes"`       // the nodes it still held
	KilledLostBefore int     `json:"killed_lost_before"` // the nodes it had lost before
	KilledPID        int     `json:"killed_pid"`
}

// buildReport merges the holder processes' counters over the window w.
// Each process's rates are its counters' growth between its first and
// last line within the window, over the time between them.
func buildReport(cfg config, fl *holderFleet, cl *cluster, w *window) (*Report, error) {
	r := &Report{
		Holders: cfg.holders, Processes: len(fl.procs),
		TTL: cfg.ttl.Seconds(), Interval: renewInterval(cfg.ttl, cfg.interval).Seconds(),
		MarkLease: cfg.markLease.Seconds(), Every: cfg.every.Seconds(), LeaseMode: cfg.lease,
		Window: w.end.Sub(w.start).Seconds(),
		Rates:  make(map[string]float64), Failed: make(map[string]uint64), CPU: make(map[string]float64),
		Leader: w.leader.name, LeaderEnd: w.endLeader.name,
		DBSize: w.status.DbSize, DBSizeInUse: w.status.DbSizeInUse, Load: w.load,
		FreeBound: (cfg.ttl + time.Second).Seconds(),
	}
	var writes, keepAlive histogram
	var claims []time.Duration
	for _, p := range fl.procs {
		first, last, ok := p.countsWithin(w.start, w.end)
		if !ok {
			return nil, p.failure("printed fewer than two counter lines within the window")
		}
		dt := time.Duration(last.Time - first.Time).Seconds()
		for kind, n := range last.Requests {
			r.Rates[kind] += float64(n-first.Requests[kind]) / dt
		}
		for kind, n := range last.Failed {
			if d := n - first.Failed[kind]; d > 0 {
				r.Failed[kind] += d
			}
		}
		r.IDs += float64(last.IDs-first.IDs) / dt
		writes.add(last.Writes.sub(first.Writes))
		keepAlive.add(last.KeepAlive.sub(first.KeepAlive))

		end := p.lastCounts()
		r.IDErrors += end.IDErrors
		r.IDUnavail += end.IDUnavail
		r.ClaimsLost += end.Lost
		if r.LastError == "" {
			r.LastError = end.LastError
		}
		r.ClaimRetries += p.claimedLine().Retries
		for _, ns := range p.claimedLine().ClaimNS {
			claims = append(claims, time.Duration(ns))
		}
	}
	for _, v := range r.Rates {
		r.Total += v
	}
	r.HolderErrors = r.IDErrors + r.ClaimsLost
	r.Writes = writes.count()
	r.WriteP50 = writes.quantile(0.50).Seconds()
	r.WriteP99 = writes.quantile(0.99).Seconds()
	r.KeepAliveP99 = keepAlive.quantile(0.99).Seconds()
	for i, m := range cl.members {
		r.CPU[m.name] = (w.etcd[1][i] - w.etcd[0][i]).Seconds() / r.Window
		r.EtcdCPU += r.CPU[m.name]
	}
	r.LeaderCPU = r.CPU[r.Leader]
	r.HostCores = runtime.NumCPU()
	r.HostBusy = (w.host[1].busy - w.host[0].busy).Seconds() / r.Window
	r.HostIOWait = (w.host[1].iowait - w.host[0].iowait).Seconds() / r.Window
	r.HolderCPU = (w.holders[1] - w.holders[0]).Seconds() / r.Window
	m0, m1 := w.metrics[0], w.metrics[1]
	r.Proposals = (m1[metricProposals] - m0[metricProposals]) / r.Window
	fsyncs, fsyncP99 := histogramDelta(m0, m1, metricFsync, 0.99)
	r.Fsyncs, r.FsyncP99 = fsyncs/r.Window, fsyncP99.Seconds()
	_, commitP99 := histogramDelta(m0, m1, metricCommit, 0.99)
	r.CommitP99 = commitP99.Seconds()
	r.SlowApplies = m1[metricSlow] - m0[metricSlow]
	r.LeaderChanges = m1[metricElections] - m0[metricElections]
	slices.Sort(claims)
	r.Claims = len(claims)
	if len(claims) > 0 {
		r.ClaimP50 = claims[(len(claims)-1)*50/100].Seconds()
		r.ClaimP99 = claims[(len(claims)-1)*99/100].Seconds()
		r.ClaimMax = claims[len(claims)-1].Seconds()
	}
	return r, nil
}

// kill is what freeAfterKill measured: the time from the kill of a
// holder process until etcd deleted the last of the node keys it still
// held, how many it held, how many of its nodes it had lost before, and
// its pid.
type kill struct {
	free       time.Duration
	held, gone int
	pid        int
}

// setKill records k.
func (r *Report) setKill(k kill) {
	r.FreeAfterKill, r.KilledNodes, r.KilledLostBefore, r.KilledPID = k.free.Seconds(), k.held, k.gone, k.pid
}

// freeAfterKill SIGKILLs holder process p and measures the time from the
// kill until etcd deleted the last of the node keys it still held,
// watched from before the kill. It fails if a key is not deleted within
// bound, or if p held none of its nodes any more.
func freeAfterKill(ctx context.Context, cli *clientv3.Client, p *holderProc, bound time.Duration) (kill, error) {
	k := kill{pid: p.pid()}
	dir := fleet.DefaultPrefix + "nodes/" + space + "/"
	node := func(key []byte) int {
		n, err := strconv.Atoi(strings.TrimPrefix(string(key), dir))
		if err != nil {
			return -1
		}
		return n
	}
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	resp, err := cli.Get(gctx, dir, clientv3.WithPrefix())
	cancel()
	if err != nil {
		return k, fmt.Errorf("list the claimed nodes before the kill: %w", err)
	}
	// The nodes that p still holds: their records name its pid. A node
	// that p lost may be another holder's since.
	want := make(map[int]bool)
	for _, kv := range resp.Kvs {
		var rec fleet.Record
		if json.Unmarshal(kv.Value, &rec) == nil && rec.PID == k.pid {
			want[node(kv.Key)] = true
		}
	}
	k.held, k.gone = len(want), len(p.claimedLine().Nodes)-len(want)
	if len(want) == 0 {
		return k, p.failure("held none of its nodes any more when the harness came to kill it")
	}

	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := cli.Watch(wctx, dir, clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1),
		clientv3.WithCreatedNotify(), clientv3.WithFilterPut())
	select {
	case wr, ok := <-wch:
		if !ok || !wr.Created {
			return k, fmt.Errorf("watch %s: not created: %v", dir, wr.Err())
		}
	case <-time.After(10 * time.Second):
		return k, fmt.Errorf("watch %s: not created within 10s", dir)
	}

	p.signal(syscall.SIGKILL)
	killed := time.Now()
	timeout := time.NewTimer(bound)
	defer timeout.Stop()
	for len(want) > 0 {
		select {
		case wr, ok := <-wch:
			if !ok || wr.Err() != nil {
				return k, fmt.Errorf("watch %s after the kill: %v", dir, wr.Err())
			}
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypeDelete {
					delete(want, node(ev.Kv.Key))
				}
			}
		case <-timeout.C:
			left := slices.Sorted(maps.Keys(want))
			return k, fmt.Errorf("etcd had not deleted the keys of nodes %v of holder process %d within %v of its SIGKILL", left, k.pid, bound)
		case <-ctx.Done():
			return k, ctx.Err()
		}
	}
	k.free = time.Since(killed)
	return k, nil
}

// writeText prints the report for people, and as a Markdown table row.
func (r *Report) writeText(w io.Writer) {
	fmt.Fprintf(w, "\n%s holders in %d processes; TTL %s (renewed every %s), mark lease %s, lease %s, one ID per holder every %s\n",
		group(float64(r.Holders)), r.Processes, secs(r.TTL), secs(r.Interval), markLease(r.MarkLease), r.LeaseMode, secs(r.Every))
	fmt.Fprintf(w, "window        %.1fs; host load %s at its end\n", r.Window, r.Load)
	fmt.Fprintf(w, "requests/s   ")
	for _, k := range kinds {
		if v, ok := r.Rates[k]; ok {
			fmt.Fprintf(w, " %s %s,", k, group(v))
		}
	}
	fmt.Fprintf(w, " total %s\n", group(r.Total))
	if len(r.Failed) > 0 {
		fmt.Fprintf(w, "failed        %v (requests in the window)\n", r.Failed)
	}
	fmt.Fprintf(w, "writes        p50 %s, p99 %s (%s writes, client-side, failed ones at the time they failed)\n", ms(r.WriteP50), ms(r.WriteP99), group(float64(r.Writes)))
	fmt.Fprintf(w, "keep-alives   p99 %s\n", ms(r.KeepAliveP99))
	var cpu []string
	for _, name := range slices.Sorted(maps.Keys(r.CPU)) {
		cpu = append(cpu, fmt.Sprintf("%s %.2f", name, r.CPU[name]))
	}
	leader := r.Leader
	if r.LeaderEnd != r.Leader {
		leader += " (" + r.LeaderEnd + " at the end)"
	}
	fmt.Fprintf(w, "etcd CPU      leader %s %.2f cores; %s\n", leader, r.LeaderCPU, strings.Join(cpu, ", "))
	fmt.Fprintf(w, "host CPU      %.2f of %d cores busy: etcd %.2f, holders %.2f, the rest %.2f; iowait %.2f\n",
		r.HostBusy, r.HostCores, r.EtcdCPU, r.HolderCPU, max(r.HostBusy-r.EtcdCPU-r.HolderCPU, 0), r.HostIOWait)
	fmt.Fprintf(w, "etcd leader   %s proposals/s; WAL fsyncs %s/s, p99 %s; backend commits p99 %s; %.0f slow applies, %.0f leader changes\n",
		group(r.Proposals), group(r.Fsyncs), ms(r.FsyncP99), ms(r.CommitP99), r.SlowApplies, r.LeaderChanges)
	fmt.Fprintf(w, "database      %s, %s in use (leader, at the end)\n", mib(r.DBSize), mib(r.DBSizeInUse))
	fmt.Fprintf(w, "claims        %d: p50 %s, p99 %s, max %s (a fleet.ClaimNode call); %d failed attempts tried again\n",
		r.Claims, ms(r.ClaimP50), ms(r.ClaimP99), ms(r.ClaimMax), r.ClaimRetries)
	fmt.Fprintf(w, "IDs           %s/s; %d errors (%d of them etcd not answering in time) and %d claims lost in the run", group(r.IDs), r.IDErrors, r.IDUnavail, r.ClaimsLost)
	if r.LastError != "" {
		fmt.Fprintf(w, " (last: %s)", r.LastError)
	}
	fmt.Fprintln(w)
	verdict := "within"
	if r.FreeAfterKill > r.FreeBound {
		verdict = "beyond"
	}
	fmt.Fprintf(w, "free on kill  %.2fs for the %d nodes of pid %d: %s TTL + 1s (%s)",
		r.FreeAfterKill, r.KilledNodes, r.KilledPID, verdict, secs(r.FreeBound))
	if r.KilledLostBefore > 0 {
		fmt.Fprintf(w, "; it had lost %d more before the kill", r.KilledLostBefore)
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintln(w, "| holders | processes | TTL | mark lease | lease mode | keep-alive/s | record/s | mark write/s | claim/s | total/s | write p50 | write p99 | leader CPU | DB size | claim p99 | free after kill |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %s | %.1f s |\n",
		group(float64(r.Holders)), r.Processes, secs(r.TTL), markLease(r.MarkLease), r.LeaseMode,
		group(r.Rates[kindKeepAlive]), group(r.Rates[kindRecord]), group(r.Rates[kindMarkWrite]), group(r.Rates[kindClaim]), group(r.Total),
		ms(r.WriteP50), ms(r.WriteP99), r.LeaderCPU, mib(r.DBSize), ms(r.ClaimP99), r.FreeAfterKill)
}

// writeJSON writes the report to path.
func (r *Report) writeJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// group formats v rounded to a whole number, with thousands separated by
// commas.
func group(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ms formats seconds as milliseconds.
func ms(s float64) string {
	d := s * 1000
	if d < 10 {
		return fmt.Sprintf("%.1f ms", d)
	}
	return fmt.Sprintf("%.0f ms", d)
}

// secs formats seconds as a duration.
func secs(s float64) string { return time.Duration(s * float64(time.Second)).String() }

// markLease formats the -mark-lease of a report: 0 leaves it to the
// claim.
func markLease(s float64) string {
	if s == 0 {
		return "claim's"
	}
	return secs(s)
}

// mib formats bytes as MiB.
func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
