package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"
)

// ErrNeed reports a constraint the verdict does not know.
var ErrNeed = errkind.New(idkit.ErrInvalid, "compare: bad constraint")

// Need is what a user requires of a scheme. The zero value requires
// nothing.
type Need struct {
	// Bits64 requires every ID to fit a positive int64 (a BIGINT column).
	Bits64 bool `json:"64bit,omitempty"`
	// JSSafe requires every ID to be at most 2^53.
	JSSafe bool `json:"js_safe,omitempty"`
	// Sortable requires keys that lead with time.
	Sortable bool `json:"sortable,omitempty"`
	// Writers is the number of app instances writing the table; the
	// verdict reads the run with that many interleaved writers. 0 means
	// the largest writer count measured.
	Writers int `json:"writers,omitempty"`
	// Rate is the IDs per second one node must be able to issue; 0 means
	// no requirement.
	Rate int64 `json:"ids_per_second_per_node,omitempty"`
	// Unguessable requires IDs whose bits passed every randomness test in
	// the run (see Randomness): seeing some IDs does not help guess others.
	Unguessable bool `json:"unguessable,omitempty"`
	// Fleet requires IDs that many machines make on their own, with no
	// call to one central sequence per ID (see perIDSequence).
	Fleet bool `json:"fleet,omitempty"`
}

// NeedHelp lists the constraints ParseNeed accepts.
const NeedHelp = "64bit, js-safe, sortable, unguessable, writers=K, rate=IDS_PER_SECOND, fleet"

// ParseNeed parses a comma-separated list of constraints, as
// "64bit,js-safe,writers=8".
func ParseNeed(s string) (Need, error) {
	var n Need
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(strings.ToLower(item))
		if item == "" {
			continue
		}
		k, v, hasValue := strings.Cut(item, "=")
		num := func(max int64) (int64, error) {
			x, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
			if !hasValue || err != nil || x < 1 || x > max {
				return 0, fmt.Errorf("%w %q: want %s=1..%d", ErrNeed, item, k, max)
			}
			return x, nil
		}
		var err error
		switch k {
		case "64bit", "int63", "bigint":
			n.Bits64 = true
		case "js-safe", "jssafe":
			n.JSSafe = true
		case "sortable", "time-ordered":
			n.Sortable = true
		case "unguessable", "random":
			n.Unguessable = true
		case "fleet":
			n.Fleet = true
		case "writers":
			var w int64
			w, err = num(MaxWriters)
			n.Writers = int(w)
		case "rate":
			n.Rate, err = num(math.MaxInt64)
		default:
			err = fmt.Errorf("%w %q: want one of %s", ErrNeed, item, NeedHelp)
		}
		if err != nil {
			return Need{}, err
		}
		if hasValue && k != "writers" && k != "rate" {
			return Need{}, fmt.Errorf("%w %q: %s takes no value", ErrNeed, item, k)
		}
	}
	return n, nil
}

// String writes n as ParseNeed reads it; "none" for the zero Need.
func (n Need) String() string {
	var s []string
	if n.Bits64 {
		s = append(s, "64bit")
	}
	if n.JSSafe {
		s = append(s, "js-safe")
	}
	if n.Sortable {
		s = append(s, "sortable")
	}
	if n.Unguessable {
		s = append(s, "unguessable")
	}
	if n.Fleet {
		s = append(s, "fleet")
	}
	if n.Writers > 0 {
		s = append(s, fmt.Sprintf("writers=%d", n.Writers))
	}
	if n.Rate > 0 {
		s = append(s, fmt.Sprintf("rate=%d", n.Rate))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// Verdict is the ranked recommendation of a run: the schemes that meet
// the constraints, best first, and one line for each scheme that does not.
type Verdict struct {
	Engine string `json:"engine"`
	// Family is the engine's family, FamilyBTree or FamilyLSM.
	Family  string `json:"family"`
	Need    string `json:"need"`
	Writers int    `json:"writers"`
	// Basis says which figures the ranking compares.
	Basis string `json:"basis"`
	// Figures are the figures the ranking compares, each a metric of the
	// engine's loads, in the order the picks' lines give them.
	Figures  []VerdictFigure `json:"figures"`
	Ranked   []Pick          `json:"ranked"`
	Rejected []Rejection     `json:"rejected"`
	// CannotJudge says why the verdict ranks no scheme: no figure it
	// compares tells random keys from ordered ones (see judging), and
	// how a run measures one. Unjudged are then the schemes no figure
	// rejected, with their figures, unranked.
	CannotJudge string `json:"cannot_judge,omitempty"`
	Unjudged    []Pick `json:"unjudged,omitempty"`
	// TableKey is the key of the user's table today, in a --like run:
	// the verdict weighs keeping it before any scheme.
	TableKey *TableKey `json:"table_key,omitempty"`
	// KeyChange is what replacing that key with the first ranked scheme
	// costs the schema, when the verdict does not keep it.
	KeyChange *KeyChange `json:"key_change,omitempty"`
}

// Pick is a scheme the verdict recommends, with its score (the product
// of its figures over the baseline's; 1 is the baseline) and why.
type Pick struct {
	Scheme string  `json:"scheme"`
	Score  float64 `json:"score"`
	Why    string  `json:"why"`
}

// Rejection is a scheme the verdict leaves out and why.
type Rejection struct {
	Scheme string `json:"scheme"`
	Reason string `json:"reason"`
}

// MaxRatio is how far a figure may exceed the baseline's before the
// verdict rejects the scheme for it.
const MaxRatio = 2.0

// MaxSplitRatio is how far an InnoDB copy's primary-key leaf pages, at
// the baseline's key width, may exceed the baseline's: the primary key is
// InnoDB's clustered index, whose leaves hold the rows, and keys in
// insert order fill them to about 15/16 where random keys split them to
// about two thirds full (1.4x the pages), each insert on a leaf of its
// own.
const MaxSplitRatio = 1.25

// splitFigure is the InnoDB verdict's figure of page splits on the
// clustered index (widthAdjustedLeafPages).
var splitFigure = verdictFigure{"leaf_pages_at_baseline_width", "primary-key leaf pages at the baseline's key width (page splits)"}

// keyPagesFigure is the PostgreSQL verdict's figure of the pages the
// key's order changes (widthAdjustedKeyPages): the primary-key index's
// pages changed per interval, at the baseline's key width.
var keyPagesFigure = verdictFigure{"key_pages_changed_at_baseline_width", "primary-key pages changed per interval at the baseline's key width"}

// judging are the figures that tell random keys from ordered ones on a
// B-tree or an LSM tree, each a count of pages or bytes that random keys
// multiply: a verdict without one of them ranks no scheme (CannotJudge).
// The size of an index and the log without full-page images do not: a
// random key costs about the same in them.
var judging = map[string]bool{
	"pages_written_per_1000": true, "wal_frames_per_1000": true, "lifetime_write_amp": true,
	"pages_dirtied_per_1000": true, "pages_changed_per_1000": true, "bytes_written_per_insert": true,
	splitFigure.key: true, keyPagesFigure.key: true, busiestShare: true,
}

// MaxKeyPagesRatio is how far the pages a PostgreSQL copy's primary-key
// index changes per interval, at the baseline's key width, may exceed
// the baseline's: random keys change every leaf in every interval (7.9x
// at 20,000 keys, more as the index grows), keys in time order from
// several writers a few leaves per writer (2.5x with 4 writers).
const MaxKeyPagesRatio = 4.0

// noCompaction says that no candidate's load on an LSM engine had a
// compaction move or rewrite a byte (bytes_moved, and bytes_compacted
// where the engine counts it apart): the rows went to the memtables and
// the first level alone, where random keys cost what ordered ones do, so
// its write figures cannot tell them apart.
func noCompaction(candidates []*Result, eng string, ri int) bool {
	if len(candidates) == 0 {
		return false
	}
	for _, s := range candidates {
		if moved, ok := Figure(s, eng, ri, "bytes_moved"); !ok || moved > 0 {
			return false
		}
		if compacted, ok := Figure(s, eng, ri, "bytes_compacted"); ok && compacted > 0 {
			return false
		}
	}
	return true
}

// maxRatio is the most a figure may be over the baseline's.
func maxRatio(key string) float64 {
	switch key {
	case splitFigure.key:
		return MaxSplitRatio
	case keyPagesFigure.key:
		return MaxKeyPagesRatio
	}
	return MaxRatio
}

// keyIndexFigure says the figure is one of the key's own index
// (splitFigure, keyPagesFigure): it rejects a scheme whose keys' order
// the index pays for, but does not rank, since the table's own figures
// already count those pages among the rest.
func keyIndexFigure(key string) bool { return key == splitFigure.key || key == keyPagesFigure.key }

// verdictFigure is one figure the verdict compares, per engine.
type verdictFigure struct {
	key, name string
}

// VerdictFigure is a figure a verdict ranked by: the metric's key and its
// name in the verdict's lines.
type VerdictFigure struct {
	Key  string `json:"key"`
	Name string `json:"name"`
}

// VerdictFigures are, per engine, the figures the verdict compares with
// the baseline's: locality (pages), log volume, and size.
var VerdictFigures = map[string][]verdictFigure{
	engine.Bbolt:    {{"pages_written_per_1000", "pages written"}, {"bytes_per_key", "file bytes/key"}},
	engine.SQLite:   {{"wal_frames_per_1000", "WAL frames"}, {"bytes_per_key", "database bytes/key"}},
	engine.Pebble:   {{"lifetime_write_amp", "write amp over a row's life"}, {"bytes_per_key", "table bytes/key"}},
	engine.MyRocks:  {{"lifetime_write_amp", "write amp over a row's life"}, {"bytes_per_key", "table bytes/key"}},
	engine.Postgres: {{"pages_dirtied_per_1000", "pages dirtied"}, {"wal_bytes_per_insert", "WAL"}, {"index_bytes_per_key", "index size"}},
	engine.MySQL:    {{"pages_written_per_1000", "pages written"}, {"redo_bytes_per_insert", "redo"}, {"index_bytes_per_key", "clustered index size"}},
	// On shards, the busiest shard's share rejects, over the best scheme's
	// (an even spread), and the pages rank without rejecting.
	engine.SpiderRange: {{busiestShare, "busiest shard's share"}, {"pages_written_per_1000", "pages written"}},
	engine.SpiderHash:  {{busiestShare, "busiest shard's share"}, {"pages_written_per_1000", "pages written"}},
}

// busiestShare is the sharded engines' figure of where the inserts went.
const busiestShare = "busiest_share"

// sharded says eng is a sharded engine: its verdict rejects on the
// busiest shard's share alone, over the best scheme's share.
func sharded(eng string) bool { return eng == engine.SpiderRange || eng == engine.SpiderHash }

// serverWide are the verdict figures that a server's own counters give,
// which count every session's writes: a load that another session wrote
// beside ("disturbed") has them wrong.
var serverWide = map[string]bool{"pages_written_per_1000": true, "redo_bytes_per_insert": true}

// undisturbedFigures returns figs without the server-wide write figures of
// engine where another session wrote during a candidate's load in run ri,
// and the notes that say which were left out and why: the ranking goes on
// what remains, never on counts that hold other sessions' writes.
func undisturbedFigures(eng string, figs []verdictFigure, candidates []*Result, ri int) ([]verdictFigure, []string) {
	var disturbed []string
	for _, s := range candidates {
		if d, ok := Figure(s, eng, ri, "disturbed"); ok && d == 1 {
			disturbed = append(disturbed, s.Name)
		}
	}
	if len(disturbed) == 0 {
		return figs, nil
	}
	var kept []verdictFigure
	var notes []string
	for _, f := range figs {
		if serverWide[f.key] {
			notes = append(notes, fmt.Sprintf("%s left out: another session wrote to the server during the loads of %s", f.name, strings.Join(disturbed, ", ")))
			continue
		}
		kept = append(kept, f)
	}
	return kept, notes
}

// Figure returns a scheme's verdict figure for engine in run ri.
func Figure(s *Result, eng string, ri int, key string) (float64, bool) {
	if ri >= len(s.Runs) {
		return 0, false
	}
	run := s.Runs[ri]
	if eng == engine.Bbolt {
		if len(run.Loads) == 0 {
			return 0, false
		}
		l := run.Loads[0] // the first fill: bbolt's default unless the run chose others
		switch key {
		case "pages_written_per_1000":
			return l.PagesPer1000, true
		case "bytes_per_key":
			return l.BytesPerKey, true
		}
		return 0, false
	}
	l, ok := run.EngineLoad(eng)
	if !ok {
		return 0, false
	}
	return l.Metric(key)
}

// Decide ranks the report's schemes under need on engine's figures
// (empty: the engine of a --like run's first table, else the most
// server-like engine measured: postgres, mysql, sqlite, bbolt). Layout constraints reject a scheme first; then any figure more
// than MaxRatio times the baseline's (without a baseline in the run, the
// best scheme's); the rest rank by the product of their figures over the
// baseline's, then by ns per ID. A --like run on a server ranks on the
// figures of the copies of the user's table (likeFigures), and weighs the
// table's own key first.
func (r *Report) Decide(need Need, eng string) (*Verdict, error) {
	measured := r.Measured()
	if eng == "" && len(r.Like) > 0 && slices.Contains(measured, r.Like[0].Engine) {
		eng = r.Like[0].Engine // the engine of the user's table
	}
	if eng == "" {
		for _, e := range []string{engine.Postgres, engine.MySQL, engine.SQLite, engine.Bbolt} {
			if slices.Contains(measured, e) {
				eng = e
				break
			}
		}
	}
	if !slices.Contains(measured, eng) {
		return nil, fmt.Errorf("%w: engine %q was not measured in this run (measured: %s)", ErrOptions, eng, strings.Join(measured, ", "))
	}
	counts := r.WriterCounts()
	ri := len(counts) - 1
	if need.Writers > 0 {
		ri = slices.Index(counts, need.Writers)
		if ri < 0 {
			return nil, fmt.Errorf("%w: need writers=%d, but the run measured %s writers; run with --writers %d",
				ErrOptions, need.Writers, joinInts(counts), need.Writers)
		}
	}
	// A scheme that fails need is left out before any figure is compared.
	misses := make([]string, len(r.Schemes))
	caveats := make([]string, len(r.Schemes))
	var candidates []*Result
	for si := range r.Schemes {
		s := &r.Schemes[si]
		caveats[si], misses[si] = needMiss(s, need, ri, counts[ri])
		if misses[si] == "" {
			candidates = append(candidates, s)
		}
	}
	figs := VerdictFigures[eng]
	like := r.LikeTable(eng)
	var leftOut []string
	value := func(s *Result, key string) (float64, bool) {
		switch key {
		case splitFigure.key:
			return r.widthAdjustedLeafPages(s, ri)
		case keyPagesFigure.key:
			return r.widthAdjustedKeyPages(s, ri)
		}
		return Figure(s, eng, ri, key)
	}
	if like != nil {
		figs, leftOut = likeFigures(like, candidates, value)
	} else {
		figs, leftOut = undisturbedFigures(eng, figs, candidates, ri)
	}
	cannot := ""
	uncompacted := engineFamily[eng] == FamilyLSM && noCompaction(candidates, eng, ri)
	switch {
	case uncompacted:
		cannot = fmt.Sprintf("cannot judge writes here: no compaction moved or rewrote a byte in any load, so each load wrote its rows once whatever their keys' order; run with a larger -n (now %s)", engine.Thousands(int64(r.Config.N)))
	case !slices.ContainsFunc(figs, func(f verdictFigure) bool { return judging[f.key] }):
		cannot = "cannot judge writes here: no figure this run measured tells random keys from ordered ones (index sizes and a log without full-page images do not)"
		if like != nil && like.OnSource {
			cannot += "; run with --scratch DSN, which counts the pages written"
		} else {
			cannot += "; run again when no other session writes to the server"
		}
	}
	var names []string
	var used []VerdictFigure
	for _, f := range figs {
		names = append(names, f.name)
		used = append(used, VerdictFigure{f.key, f.name})
	}
	v := &Verdict{
		Engine: eng, Family: engineFamily[eng], Need: need.String(), Writers: counts[ri], Figures: used,
		Basis:       fmt.Sprintf("%s on %s with %d writer(s), each over the baseline's; rejected above %gx", strings.Join(names, ", "), eng, counts[ri], MaxRatio),
		CannotJudge: cannot,
	}
	if sharded(eng) {
		v.Basis = fmt.Sprintf("the busiest shard's share of the inserts on %s with %d writer(s), over the best scheme's (an even spread), rejected above %gx; then pages written over the baseline's, which ranks and does not reject", eng, counts[ri], MaxRatio)
	}
	if like != nil {
		v.Basis = fmt.Sprintf("%s of the copies of your table on %s with %d writer(s), each over the baseline's; rejected above %gx", strings.Join(names, ", "), eng, counts[ri], MaxRatio)
	} else if r.Config.Like != "" {
		v.Basis += fmt.Sprintf("; on rows of a key and a %d-byte payload, not copies of your table, which go to the servers alone", r.Config.ValueSize)
	}
	for _, f := range figs {
		if keyIndexFigure(f.key) {
			v.Basis += fmt.Sprintf(", %s above %gx (which rejects and does not rank)", f.name, maxRatio(f.key))
		}
	}
	for _, l := range leftOut {
		v.Basis += "; " + l
	}
	// Each figure is compared with the baseline's; without a baseline in
	// the run, with the best of the schemes.
	refName := "best scheme"
	ref := map[string]float64{}
	for _, f := range figs {
		for si := range r.Schemes {
			s := &r.Schemes[si]
			if x, ok := value(s, f.key); ok && x > 0 {
				if cur, seen := ref[f.key]; !seen || x < cur {
					ref[f.key] = x
				}
			}
		}
	}
	if base := r.baselineResult(); base != nil {
		refName = base.Name
		for _, f := range figs {
			if b, ok := value(base, f.key); ok && b > 0 && f.key != busiestShare {
				ref[f.key] = b
			}
		}
	}
	for si := range r.Schemes {
		s := &r.Schemes[si]
		if misses[si] != "" {
			why := misses[si]
			if like != nil && s.Kind == scheme.Baseline {
				why = baselineLine(like)
			}
			v.Rejected = append(v.Rejected, Rejection{s.Name, why})
			continue
		}
		score := 1.0
		var parts, over []string
		for _, f := range figs {
			x, ok := value(s, f.key)
			if !ok {
				return nil, fmt.Errorf("compare: verdict: %s has no %s figure on %s", s.Name, f.key, eng)
			}
			ratio := 1.0
			if b := ref[f.key]; b > 0 {
				ratio = x / b
			}
			if !keyIndexFigure(f.key) {
				score *= ratio
			}
			parts = append(parts, fmt.Sprintf("%s %.1fx", f.name, ratio))
			switch {
			case sharded(eng) && f.key == busiestShare && ratio > MaxRatio:
				over = append(over, fmt.Sprintf("%s %s, %.1fx the best scheme's", f.name, engine.Pct(x), ratio))
			case sharded(eng):
			case ratio > maxRatio(f.key):
				over = append(over, fmt.Sprintf("%s %.1fx the %s's", f.name, ratio, refName))
			}
		}
		if len(over) > 0 {
			v.Rejected = append(v.Rejected, Rejection{s.Name, strings.Join(over, ", ")})
			continue
		}
		v.Ranked = append(v.Ranked, Pick{
			Scheme: s.Name, Score: score,
			Why: fmt.Sprintf("%s; %s ns/ID, %s IDs/s/node; %d-byte key%s", strings.Join(parts, ", "), num(s.Speed.NsPerID), s.DesignText.Rate, s.Runs[0].Size.KeyBytes, caveats[si]),
		})
	}
	speed := map[string]float64{}
	for _, s := range r.Schemes {
		speed[s.Name] = s.Speed.NsPerID
	}
	sort.SliceStable(v.Ranked, func(i, j int) bool {
		a, b := v.Ranked[i], v.Ranked[j]
		// Scores within 2% are a tie: the figures are counts of pages and
		// bytes, and a tie goes to the faster generator.
		if math.Abs(a.Score-b.Score) > 0.02*math.Min(a.Score, b.Score) {
			return a.Score < b.Score
		}
		return speed[a.Scheme] < speed[b.Scheme]
	})
	if cannot != "" {
		v.Unjudged, v.Ranked = v.Ranked, nil
	}
	if like != nil {
		v.TableKey = JudgeTableKey(like, need, cannot)
		if !v.TableKey.Keep && len(v.Ranked) > 0 {
			v.KeyChange = r.keyChange(like, v.Ranked[0].Scheme, ri)
		}
	}
	return v, nil
}

// needMiss returns why s fails need in run ri of writers writers, or the
// caveat its ranking line carries.
func needMiss(s *Result, need Need, ri, writers int) (caveat, why string) {
	if s.Kind == scheme.Baseline {
		return "", "the baseline the figures are measured against: " + s.Design.Note
	}
	if why := layoutMiss(s, need); why != "" {
		return "", why
	}
	caveat, why = denseJSSafe(s, need)
	if why != "" {
		return "", why
	}
	if why := FleetMiss(s, need); why != "" {
		return "", why
	}
	if why := guessable(s, need, ri); why != "" {
		return "", why
	}
	if ri < len(s.Runs) && s.Runs[ri].Order.Duplicates > 0 {
		return "", fmt.Sprintf("issued %d duplicate keys with %d writers", s.Runs[ri].Order.Duplicates, writers)
	}
	return caveat + fleetCaveat(s, need), ""
}

// guessable returns why s's keys in run ri fail need.Unguessable, or "".
func guessable(s *Result, need Need, ri int) string {
	if !need.Unguessable || ri >= len(s.Runs) {
		return ""
	}
	r := s.Runs[ri].Randomness
	if !r.Tested {
		return "too few keys to test their randomness, need unguessable"
	}
	if r.Random {
		return ""
	}
	var failed []string
	for _, t := range []struct {
		name string
		p    float64
	}{{"monobit", r.MonobitP}, {"runs", r.RunsP}, {"chi²", r.ChiSquareP}} {
		if t.p < scheme.RandomnessAlpha {
			failed = append(failed, fmt.Sprintf("%s p=%s", t.name, pValue(r, t.p)))
		}
	}
	return fmt.Sprintf("IDs can be guessed: %s, need unguessable (or keep them as keys and show public IDs: package publicid)", strings.Join(failed, ", "))
}

// layoutMiss returns why s's layout fails need, or "".
func layoutMiss(s *Result, need Need) string {
	d := s.Design
	switch {
	case need.Bits64 && !d.Int63:
		return fmt.Sprintf("%d bits, need 64bit (a BIGINT column)", d.Bits)
	case need.JSSafe && !d.JSSafe && !d.Dense:
		return fmt.Sprintf("IDs use up to %d bits, need js-safe (at most 53)", d.MaxBits)
	case need.Sortable && d.TimeUnit == 0:
		return "keys do not lead with time, need sortable"
	case need.Rate > 0 && d.PerSecond > 0 && d.PerSecond < need.Rate:
		return fmt.Sprintf("%s IDs/s per node by design, need %s", scheme.Count(d.PerSecond), scheme.Count(need.Rate))
	}
	return ""
}

// DenseRate is the rate at which the verdict judges a dense counter
// against js-safe when the constraints state none (rate=N): a busy
// service's sustained IDs a second for one sequence.
const DenseRate = 100_000

// MinJSSafeYears is how long a dense counter must stay at or under 2^53,
// at the stated rate, to count as js-safe.
const MinJSSafeYears = 100

// denseJSSafe judges a dense counter under need.JSSafe: its IDs stay at or
// under 2^53 until it has issued that many, so it is js-safe for as long
// as that takes at the stated rate (need.Rate, else DenseRate). It returns
// the caveat for the ranking line, or why the scheme is rejected.
func denseJSSafe(s *Result, need Need) (caveat, why string) {
	d := s.Design
	if !need.JSSafe || d.JSSafe || !d.Dense {
		return "", ""
	}
	rate := need.Rate
	if rate <= 0 {
		rate = DenseRate
	}
	years := math.Ldexp(1, 53) / float64(rate) / (365.25 * 24 * 3600)
	if years < MinJSSafeYears {
		return "", fmt.Sprintf("a dense counter passes 2^53 after %.0f years at %s IDs/s, need js-safe for %d", years, scheme.Count(rate), MinJSSafeYears)
	}
	return fmt.Sprintf("; js-safe as a dense counter: under 2^53 for %s years at %s IDs/s (rate=N states yours)", scheme.Count(int64(years)), scheme.Count(rate)), ""
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, fmt.Sprint(x))
	}
	return strings.Join(s, " and ")
}
