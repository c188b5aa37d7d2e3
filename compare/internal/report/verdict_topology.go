package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/scheme"
)

// Topologies is a verdict on each topology the run measured: one server
// (the report's own verdict), a table sharded by range of the key, and
// one sharded by its hash; and what each costs, said from the run's
// figures.
type Topologies struct {
	// Verdicts are the single server's verdict and then one per sharded
	// engine measured.
	Verdicts []*Verdict `json:"verdicts"`
	// Changes are sentences on the trade-off between them.
	Changes []string `json:"changes"`
}

// TopologiesTitle heads what changes between one server and shards.
const TopologiesTitle = "ONE SERVER AGAINST SHARDS — what time-ordered and spread keys cost on each, from the figures of this run"

// DecideTopologies returns the verdicts on the sharded engines measured
// beside single, the verdict on one server, or nil when the run measured
// no sharded engine.
func (r *Report) DecideTopologies(need Need, single *Verdict) (*Topologies, error) {
	t := &Topologies{}
	if single != nil && !sharded(single.Engine) {
		t.Verdicts = append(t.Verdicts, single)
	}
	measured := r.Measured()
	for _, eng := range []string{engine.SpiderRange, engine.SpiderHash} {
		if !slices.Contains(measured, eng) {
			continue
		}
		v := single
		if v == nil || v.Engine != eng {
			var err error
			if v, err = r.Decide(need, eng); err != nil {
				return nil, err
			}
		}
		t.Verdicts = append(t.Verdicts, v)
	}
	if !slices.ContainsFunc(t.Verdicts, func(v *Verdict) bool { return sharded(v.Engine) }) {
		return nil, nil
	}
	t.Changes = r.topologyChanges(t.Verdicts)
	return t, nil
}

// topologyChanges says what time-ordered keys cost on ranges, what the
// spread keys cost on one server, and how the rate through one
// connection changes with the spread.
func (r *Report) topologyChanges(vs []*Verdict) []string {
	var out []string
	byEngine := map[string]*Verdict{}
	for _, v := range vs {
		byEngine[v.Engine] = v
	}
	ri := len(r.WriterCounts()) - 1
	share := func(s *Result, eng string) (float64, bool) { return Figure(s, eng, ri, busiestShare) }
	var ordered, spread []*Result // by their share on ranges
	for si := range r.Schemes {
		s := &r.Schemes[si]
		x, ok := share(s, engine.SpiderRange)
		switch {
		case !ok:
		case x > 0.9:
			ordered = append(ordered, s)
		case x < 2*r.evenShare():
			spread = append(spread, s)
		}
	}
	names := func(ss []*Result) string {
		var n []string
		for _, s := range ss {
			n = append(n, s.Name)
		}
		return strings.Join(n, ", ")
	}
	if len(ordered) > 0 {
		line := fmt.Sprintf("on ranges, %s put more than 90%% of their inserts on one of %d shards: the cluster writes at one server's rate, and the shard that takes them all is the one that fills",
			names(ordered), r.shards())
		if after, ok := Figure(ordered[0], engine.SpiderRange, ri, "split_busiest_share_after"); ok {
			line += fmt.Sprintf("; splitting that range moves rows but not the inserts (%s: %s of the later inserts on the new upper half)", ordered[0].Name, engine.Pct(after))
		}
		out = append(out, line)
	}
	if len(spread) > 0 {
		lo, hi := 1.0, 0.0
		for _, s := range spread {
			x, _ := share(s, engine.SpiderRange)
			lo, hi = min(lo, x), max(hi, x)
		}
		out = append(out, fmt.Sprintf("on ranges, %s spread their inserts: the busiest shard took %s to %s, against an even %s",
			names(spread), engine.Pct(lo), engine.Pct(hi), engine.Pct(r.evenShare())))
	}
	if single, ok := byEngine[r.singleEngine(vs)]; ok && len(spread) > 0 && len(single.Figures) > 0 {
		if line := r.spreadOnOneServer(single, spread, ri); line != "" {
			out = append(out, line)
		}
	}
	if v, ok := byEngine[engine.SpiderHash]; ok {
		lo, hi := 1.0, 0.0
		for si := range r.Schemes {
			if x, ok := share(&r.Schemes[si], engine.SpiderHash); ok {
				lo, hi = min(lo, x), max(hi, x)
			}
		}
		line := fmt.Sprintf("on hash buckets every scheme spreads (the busiest shard took %s to %s), time-ordered keys included", engine.Pct(lo), engine.Pct(hi))
		if len(ordered) > 0 && len(spread) > 0 {
			o, ok1 := Figure(ordered[0], engine.SpiderHash, ri, "pages_written_per_1000")
			s, ok2 := Figure(spread[0], engine.SpiderHash, ri, "pages_written_per_1000")
			if ok1 && ok2 {
				line += fmt.Sprintf(", which still append within each bucket: %s wrote %s pages per 1,000 inserts, %s %s", ordered[0].Name, FmtInt(o), spread[0].Name, FmtInt(s))
			}
		}
		line += "; but a scan of recent rows visits every shard, and a new shard takes whole buckets (verdict: " + firstRanked(v) + ")"
		out = append(out, line)
	}
	if len(ordered) > 0 && len(spread) > 0 {
		o, ok1 := Figure(ordered[0], engine.SpiderRange, ri, "inserts_per_second")
		s, ok2 := Figure(spread[0], engine.SpiderRange, ri, "inserts_per_second")
		if ok1 && ok2 && o > 0 {
			out = append(out, fmt.Sprintf("through one connection, %s inserted %s rows/s and %s %s: a batch of spread keys waits for every shard it touches; the spread pays off with writers on machines of their own, which this run's shards, all on one machine, do not have",
				ordered[0].Name, FmtInt(o), spread[0].Name, FmtInt(s)))
		}
	}
	return out
}

// spreadOnOneServer says what the spread keys cost on the single server:
// their first verdict figure over the single verdict's first choice's.
func (r *Report) spreadOnOneServer(single *Verdict, spread []*Result, ri int) string {
	if len(single.Ranked) == 0 {
		return ""
	}
	f := single.Figures[0]
	best := slices.IndexFunc(r.Schemes, func(s Result) bool { return s.Name == single.Ranked[0].Scheme })
	if best < 0 {
		return ""
	}
	b, ok := Figure(&r.Schemes[best], single.Engine, ri, f.Key)
	if !ok || b <= 0 {
		return ""
	}
	var parts []string
	for _, s := range spread {
		if s.Kind == scheme.Baseline {
			continue
		}
		if x, ok := Figure(s, single.Engine, ri, f.Key); ok {
			parts = append(parts, fmt.Sprintf("%s %.1fx", s.Name, x/b))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("on one server (%s), the spread keys cost %s: %s the %s of %s, the single server's first choice; and the newest rows are no longer side by side, so a scan of the recent rows reads pages all over the table",
		single.Engine, f.Name, strings.Join(parts, ", "), f.Name, single.Ranked[0].Scheme)
}

// singleEngine is the engine of the first verdict that is not sharded.
func (r *Report) singleEngine(vs []*Verdict) string {
	for _, v := range vs {
		if !sharded(v.Engine) {
			return v.Engine
		}
	}
	return ""
}

// shards is the number of shards the run's sharded engines spread over.
func (r *Report) shards() int {
	if r.Config.Shards > 0 {
		return r.Config.Shards
	}
	return 4
}

// evenShare is each shard's share of an even spread.
func (r *Report) evenShare() float64 { return 1 / float64(r.shards()) }

// firstRanked names the verdict's first choice, or says none was ranked.
func firstRanked(v *Verdict) string {
	if len(v.Ranked) == 0 {
		return "no scheme ranked"
	}
	return v.Ranked[0].Scheme + " first"
}
