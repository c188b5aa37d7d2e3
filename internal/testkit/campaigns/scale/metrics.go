package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The etcd metrics the harness reads from the leader, to tell what a
// write waits for: the disk (WAL fsyncs, backend commits) or the raft
// loop (proposals committed, slow applies).
const (
	metricFsync     = "etcd_disk_wal_fsync_duration_seconds"
	metricCommit    = "etcd_disk_backend_commit_duration_seconds"
	metricProposals = "etcd_server_proposals_committed_total"
	metricSlow      = "etcd_server_slow_apply_total"
	metricElections = "etcd_server_leader_changes_seen_total"
)

// samples are the values of a Prometheus text exposition, keyed by a
// series' name and labels as written ("x_bucket{le=\"0.001\"}").
type samples map[string]float64

// scrape reads the samples of the metrics in names from the /metrics
// page of the member at clientURL.
func scrape(ctx context.Context, clientURL string, names ...string) (samples, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("etcd metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("etcd metrics: %s from %s/metrics", resp.Status, clientURL)
	}
	s := make(samples)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		if !ok || !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(series, n) }) {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("etcd metrics: %q: %w", line, err)
		}
		s[series] = v
	}
	return s, sc.Err()
}

// histogramDelta returns the observations of histogram metric between
// two scrapes, and the q-th quantile of them: the upper bound of the
// bucket that holds it (+Inf reads as the largest finite bound).
func histogramDelta(start, end samples, metric string, q float64) (count float64, quantile time.Duration) {
	type bucket struct{ le, n float64 }
	var bs []bucket
	prefix := metric + `_bucket{le="`
	for series, v := range end {
		le, ok := strings.CutPrefix(series, prefix)
		if !ok {
			continue
		}
		bound, err := strconv.ParseFloat(strings.TrimSuffix(le, `"}`), 64)
		if err != nil {
			continue
		}
		bs = append(bs, bucket{bound, v - start[series]})
	}
	slices.SortFunc(bs, func(a, b bucket) int { return cmp.Compare(a.le, b.le) })
	count = end[metric+"_count"] - start[metric+"_count"]
	if count == 0 || len(bs) == 0 {
		return count, 0
	}
	for i, b := range bs {
		if b.n >= q*count {
			if math.IsInf(b.le, 1) && i > 0 {
				return count, time.Duration(bs[i-1].le * float64(time.Second))
			}
			return count, time.Duration(b.le * float64(time.Second))
		}
	}
	return count, 0
}

// hostCPU is the host's CPU time so far, from the first line of
// /proc/stat: busy (user, nice, system, irq, softirq, steal) and waiting
// for I/O.
type hostCPU struct{ busy, iowait time.Duration }

func readHostCPU() (hostCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return hostCPU{}, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return hostCPU{}, fmt.Errorf("/proc/stat: first line %q, want the cpu totals", line)
	}
	ticks := make([]int64, 8)
	for i := range ticks {
		if ticks[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return hostCPU{}, fmt.Errorf("/proc/stat: %w", err)
		}
	}
	// user nice system idle iowait irq softirq steal
	busy := ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
	return hostCPU{
		busy:   time.Duration(busy) * time.Second / clockTicks,
		iowait: time.Duration(ticks[4]) * time.Second / clockTicks,
	}, nil
}
