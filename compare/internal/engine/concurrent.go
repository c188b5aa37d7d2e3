package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// ConcurrentLoad is a K-writer key set inserted into a server by K
// connections at once, each inserting the keys of its own writer (its own
// node or shard) in the order that writer made them, a batch per
// transaction. Unlike the interleaved load through one connection, whose
// page counts are the same from run to run, it measures what the
// sessions do to one another: latch and lock waits on the index's right
// edge or its random leaves. Its figures are timings, and vary.
type ConcurrentLoad struct {
	// Connections is K, the sessions that inserted at once.
	Connections int `json:"connections"`
	// InsertsPerSecond is all the keys over the wall time from the first
	// batch to the last.
	InsertsPerSecond float64 `json:"inserts_per_second"`
	// BatchP50Ms and BatchP99Ms are the latencies of one batch's insert
	// and commit, over every batch of every connection.
	BatchP50Ms float64 `json:"batch_p50_ms"`
	BatchP99Ms float64 `json:"batch_p99_ms"`
	// Sessions are the server's names of the K sessions (process or
	// thread ids).
	Sessions []string `json:"sessions"`
	// Samples is how many times a session of the load was seen running a
	// statement, sampled every SampleEvery; SessionsSeen how many distinct
	// sessions were, and MostAtOnce the most seen in one sample.
	Samples      int `json:"samples"`
	SessionsSeen int `json:"sessions_seen"`
	MostAtOnce   int `json:"most_at_once"`
	// Waits are what the sampled sessions were waiting on, most often
	// first, with the share of the samples: PostgreSQL's wait events
	// (pg_stat_activity; "CPU" is a running session with none), and
	// MariaDB/MySQL's thread states (PROCESSLIST).
	Waits []WaitShare `json:"waits"`
	// Server are server-wide counters over the load, which other sessions
	// add to: InnoDB's row lock waits and redo log buffer waits.
	Server map[string]float64 `json:"server,omitempty"`
}

// WaitShare is one wait and its share of a concurrent load's samples.
type WaitShare struct {
	Event string  `json:"event"`
	Share float64 `json:"share"`
}

// SampleEvery is how often a concurrent load samples what its sessions
// wait on.
const SampleEvery = 5 * time.Millisecond

// Session is one of the K connections of a concurrent load: insert puts
// the keys of the given indices in one transaction.
type Session struct {
	ID     string // the server's name for it: a process or thread id
	Insert func(ctx context.Context, idx []int) error
}

// sampled is what one sample saw: for each session of the load running a
// statement, its id and what it waits on.
type Sampler func(ctx context.Context) (ids, events []string, err error)

// RunConcurrent inserts the n keys of l through sessions at once, session
// w taking the keys w, w+K, w+2K, ... that writer w made, in batches of
// l.batch, and samples what the sessions wait on until they are done.
func RunConcurrent(ctx context.Context, l Load, sessions []Session, sample Sampler) (*ConcurrentLoad, error) {
	k, n := len(sessions), l.Keys.N()
	out := &ConcurrentLoad{Connections: k}
	for _, s := range sessions {
		out.Sessions = append(out.Sessions, s.ID)
	}
	var (
		mu        sync.Mutex
		latencies []time.Duration
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	events := map[string]int{}
	seen := map[string]bool{}
	var sampleErr error
	var sampler sync.WaitGroup
	sampler.Go(func() {
		t := time.NewTicker(SampleEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			ids, evs, err := sample(ctx)
			if err != nil {
				if ctx.Err() == nil {
					sampleErr = fmt.Errorf("sample the sessions' waits: %w", err)
				}
				return
			}
			for i, id := range ids {
				seen[id] = true
				events[evs[i]]++
				out.Samples++
			}
			out.MostAtOnce = max(out.MostAtOnce, len(ids))
		}
	})
	errs := make([]error, k)
	var writers sync.WaitGroup
	start := time.Now()
	for w, s := range sessions {
		writers.Go(func() {
			var own []time.Duration
			defer func() {
				mu.Lock()
				latencies = append(latencies, own...)
				mu.Unlock()
			}()
			batch := make([]int, 0, l.Batch)
			flush := func() error {
				began := time.Now()
				if err := s.Insert(ctx, batch); err != nil {
					return fmt.Errorf("session %d (%s): insert keys %d..%d: %w", w, s.ID, batch[0], batch[len(batch)-1], err)
				}
				own = append(own, time.Since(began))
				batch = batch[:0]
				return nil
			}
			for i := w; i < n; i += k {
				if batch = append(batch, i); len(batch) == l.Batch {
					if errs[w] = flush(); errs[w] != nil {
						cancel()
						return
					}
				}
			}
			if len(batch) > 0 {
				if errs[w] = flush(); errs[w] != nil {
					cancel()
				}
			}
		})
	}
	writers.Wait()
	spent := time.Since(start)
	close(done)
	sampler.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if sampleErr != nil {
		return nil, sampleErr
	}
	out.InsertsPerSecond = Rate(n, spent)
	slices.Sort(latencies)
	out.BatchP50Ms = Ms(Quantile(latencies, 0.5))
	out.BatchP99Ms = Ms(Quantile(latencies, 0.99))
	out.SessionsSeen = len(seen)
	for e, c := range events {
		out.Waits = append(out.Waits, WaitShare{Event: e, Share: float64(c) / float64(out.Samples)})
	}
	slices.SortFunc(out.Waits, func(a, b WaitShare) int {
		return cmp.Or(cmp.Compare(b.Share, a.Share), cmp.Compare(a.Event, b.Event))
	})
	return out, nil
}

// Quantile returns the q quantile of sorted durations, 0 when empty.
func Quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TopWaits formats the first three waits of c with their shares.
func TopWaits(c *ConcurrentLoad) string {
	if c == nil || len(c.Waits) == 0 {
		return "-"
	}
	var b []byte
	for i, w := range c.Waits[:min(3, len(c.Waits))] {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "%s %s", w.Event, Pct(w.Share))
	}
	return string(b)
}
