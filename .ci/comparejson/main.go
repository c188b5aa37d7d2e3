// Command comparejson compares two JSON reports of "idkit compare" (its
// --json output) field for field and exits 1 if any field differs, or is
// in one report and not the other. .ci/compare-same.sh runs it on the
// reports of two builds; by hand:
//
//	go run ./.ci/comparejson [-excluded] BASE.json HEAD.json
//
// A field is a leaf of the document: a string, number, boolean or null,
// or an empty array or object. Its path names array elements by their
// index and, where the element says, by its name: schemes[20:uuidv4],
// runs[1:w4] (writers), loads[0:fill0.5], engines[2:postgres].
//
// The fields that change from one run of the same build to the next are
// left out of the comparison of values (the rules below, found by running
// one build twice and reading compare's columns.go and run.go), each for
// one of these reasons:
//
//   - timing: wall-clock time and what is computed from it (the run's
//     start and length, ns/ID and the IDs generated in a fixed time,
//     inserts per second, expiry times, the concurrent load's latencies)
//   - machine: where the run happened (OS, CPU, Go version)
//   - server-wide: counters of the whole database server read before
//     and after a load, which other sessions and the server's own
//     background work (InnoDB's page cleaner, checkpoints, MyRocks'
//     compactions) add to: PostgreSQL's WAL position (wal_bytes_lsn),
//     InnoDB's pages written, redo bytes and page splits, MyRocks' log
//     bytes and every MyRocks figure but its rows and expiry's kind (the
//     server flushes and compacts in the background, its block cache
//     holds what earlier loads left), and the "disturbed" mark that says
//     another session wrote during a load (MyRocks' wal_bytes_per_insert
//     is there only when none did)
//   - keys: every measured figure of a scheme whose keys differ from run
//     to run (random bits, the clock, the order in which background
//     refills of K writers' blocks land): all but counter, decimalid and
//     redis-incr. Their figures are the same keys' in every run, and
//     exercise every engine's code; the other schemes' runs are still
//     compared for the fields that do not depend on the keys (writers,
//     keys per load, fill, commits, engine, column type, rows)
//   - verdict: the rankings (verdict.ranked and .rejected, the same in
//     families, families.changes), which order every scheme by those
//     figures and quote ns/ID
//
// A field left out of the comparison of values must still be present in
// both reports with a value of the same JSON type, except under the
// verdict's rankings, the "disturbed" mark and MyRocks'
// wal_bytes_per_insert, whose lengths and presence change from run to
// run. The random name of the schema (database) a run works in is masked
// in the engines' settings before they are compared. PostgreSQL's pages
// dirtied, the headline, are compared up to 2 pages (pages_dirtied) and
// 2,000/N (pages_dirtied_per_1000): the same keys dirty a page more now
// and then (480 or 481 pages for 20,000 sequential bigint keys, 4,793 or
// 4,794 for 200,000). They, the full-page images and the WAL bytes count
// again the pages that a CHECKPOINT of another session's cleaned during a
// load, so the server must be otherwise quiet: when they differ, a NOTE
// says so.
//
// The last line is a summary: the fields compared, the fields left out
// by reason, the differences. With -excluded, every rule is listed with
// the number of fields it left out.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A rule says how the fields its pattern matches are compared.
//
// A pattern is a path of segments separated by dots: an object's key
// (a glob, as path.Match has it: expiry_* ), or an array element in
// brackets after the array's key: [*] any element, [a|b] an element
// named a or b (globs too), [!a|b] an element named neither; ** stands
// for any number of segments.
type rule struct {
	pattern string
	kind    ruleKind
	reason  string // timing, machine, server-wide, keys, verdict; "" for compare, mask and within
	why     string
	// mask and with, for kind mask: the string value's matches of mask
	// are replaced by with in both reports before they are compared.
	mask *regexp.Regexp
	with string
	// tol, for kind within: the largest difference of the two numbers
	// that counts as equal, given N, the keys per load (config.n).
	tol func(n float64) float64
	// note, if set, is said once after the differences when a field
	// the rule compares differs.
	note string

	segs  []string
	count int
}

type ruleKind int

const (
	compare ruleKind = iota // compared, though a later rule would leave it out
	value                   // value left out; presence and type compared
	subtree                 // left out entirely, presence too
	mask                    // compared after masking
	within                  // numbers compared up to a tolerance
)

// fixedKeys are the schemes whose keys are the same in every run: a
// counter, decimalid's counter | generator | launch, and one Redis INCR
// key that the K writers take turns on.
const fixedKeys = "counter|decimalid|redis-incr"

var rules = []rule{
	// Run and machine.
	{pattern: "started", kind: value, reason: "timing", why: "the time the run started"},
	{pattern: "seconds", kind: value, reason: "timing", why: "the run's wall time"},
	{pattern: "machine.**", kind: value, reason: "machine", why: "OS, architecture, CPU model and count, GOMAXPROCS, Go version"},
	{pattern: "engines[*].settings", kind: mask, mask: regexp.MustCompile(`idkit_(compare|rocks)_[0-9a-f]+`), with: "idkit_${1}_<run>",
		why: "names the schema (database) the run works in, a random name per run"},

	// Generation speed: timed rounds of Options.SpeedTime.
	{pattern: "schemes[*].speed.**", kind: value, reason: "timing",
		why: "ns/ID, IDs generated in the fixed time, allocations per ID (background refills count in it), at the layout's rate cap, goroutines (GOMAXPROCS)"},

	// Timings of the loads, every scheme.
	{pattern: "schemes[*].runs[*].loads[*].seconds", kind: value, reason: "timing", why: "bbolt load wall time"},
	{pattern: "schemes[*].runs[*].loads[*].inserts_per_second", kind: value, reason: "timing", why: "bbolt inserts per second"},
	{pattern: "schemes[*].runs[*].engines[*].metrics.inserts_per_second", kind: value, reason: "timing", why: "database engines' inserts per second"},
	{pattern: "schemes[*].runs[*].engines[*].metrics.expiry_seconds", kind: value, reason: "timing", why: "Pebble's and MyRocks' time from the expiry to the space reclaimed"},
	{pattern: "schemes[*].runs[*].engines[*].concurrent.**", kind: subtree, reason: "timing",
		why: "--concurrent only: K sessions at once, their rate, p99 latency, sampled waits and server-wide counters"},

	// PostgreSQL's pages dirtied (EXPLAIN (BUFFERS) of each batch, the
	// headline) differ by a page now and then for the same keys: 4,793 or
	// 4,794 for 200,000 sequential bigint keys, 480 or 481 for 20,000.
	// They, the full-page images and the WAL bytes of the statements are
	// the load's own, but a CHECKPOINT of another session's during a load
	// cleans its pages, which it then dirties and logs whole again: with
	// compare's tests running against the same server, counter's 4-writer
	// load dirtied 4,806 pages and logged 599 FPIs against 4,793 and 591
	// on a quiet server, where three runs (two builds) agreed.
	{pattern: "schemes[" + fixedKeys + "].runs[*].engines[postgres].metrics.pages_dirtied", kind: within,
		tol: func(float64) float64 { return 2 }, note: pgQuiet},
	{pattern: "schemes[" + fixedKeys + "].runs[*].engines[postgres].metrics.pages_dirtied_per_1000", kind: within,
		tol: func(n float64) float64 { return 2 * 1000 / n * (1 + 1e-9) }, note: pgQuiet},
	{pattern: "schemes[" + fixedKeys + "].runs[*].engines[postgres].metrics.wal_fpi*", kind: compare, note: pgQuiet},
	{pattern: "schemes[" + fixedKeys + "].runs[*].engines[postgres].metrics.wal_bytes", kind: compare, note: pgQuiet},
	{pattern: "schemes[" + fixedKeys + "].runs[*].engines[postgres].metrics.wal_bytes_per_insert", kind: compare, note: pgQuiet},
	{pattern: "schemes[" + fixedKeys + "].runs[*].engines[postgres].metrics.pages_written_by_backend", kind: compare, note: pgQuiet},

	// Server-wide counters, every scheme.
	{pattern: "schemes[*].runs[*].engines[postgres].metrics.wal_bytes_lsn*", kind: value, reason: "server-wide",
		why: "PostgreSQL's WAL position over the load: checkpoint records and other sessions' writes (\"a cross-check, never less\")"},
	{pattern: "schemes[*].runs[*].engines[mysql].metrics.pages_written*", kind: value, reason: "server-wide",
		why: "Innodb_pages_written: the page cleaner and other sessions' tables flush in the window too (365 and 488 for the same keys)"},
	{pattern: "schemes[*].runs[*].engines[mysql].metrics.redo_bytes*", kind: value, reason: "server-wide",
		why: "Innodb_lsn_current: the whole server's redo"},
	{pattern: "schemes[*].runs[*].engines[mysql].metrics.page_splits*", kind: value, reason: "server-wide",
		why: "INNODB_METRICS index_page_splits: the whole server's splits"},
	{pattern: "schemes[*].runs[*].engines[*].metrics.disturbed", kind: subtree, reason: "server-wide",
		why: "present when another session wrote during the load"},
	{pattern: "schemes[*].runs[*].engines[myrocks].metrics.wal_bytes_per_insert", kind: subtree, reason: "server-wide",
		why: "MyRocks' log bytes per insert, there only when no other session changed MyRocks rows during the load (else \"disturbed\")"},
	{pattern: "schemes[*].runs[*].engines[myrocks].metrics.rows", kind: compare},
	{pattern: "schemes[*].runs[*].engines[myrocks].metrics.expiry_range", kind: compare},
	{pattern: "schemes[*].runs[*].engines[myrocks].metrics.expiry_rows", kind: compare},
	{pattern: "schemes[*].runs[*].engines[myrocks].metrics.**", kind: value, reason: "server-wide",
		why: "MyRocks: the server flushes and compacts while the load inserts, and its block cache holds what the last load left, so bytes written and moved, table sizes, expiry bytes and blocks per lookup or scan vary from run to run; Rocksdb_wal_bytes is server-wide"},

	// The schemes whose keys differ from run to run: what does not
	// depend on the keys is compared, the rest left out.
	{pattern: "schemes[*].runs[*].writers", kind: compare},
	{pattern: "schemes[*].runs[*].size.key_bytes", kind: compare},
	{pattern: "schemes[*].runs[*].order.duplicates", kind: compare},
	{pattern: "schemes[*].runs[*].randomness.ids", kind: compare},
	{pattern: "schemes[*].runs[*].loads[*].keys", kind: compare},
	{pattern: "schemes[*].runs[*].loads[*].fill_percent", kind: compare},
	{pattern: "schemes[*].runs[*].loads[*].commits", kind: compare},
	{pattern: "schemes[*].runs[*].engines[*].engine", kind: compare},
	{pattern: "schemes[*].runs[*].engines[*].column_type", kind: compare},
	{pattern: "schemes[*].runs[*].engines[*].metrics.rows", kind: compare},
	{pattern: "schemes[*].runs[*].engines[*].metrics.expiry_rows", kind: compare},
	{pattern: "schemes[*].runs[*].engines[*].metrics.expiry_range", kind: compare},
	{pattern: "schemes[!" + fixedKeys + "].runs.**", kind: value, reason: "keys",
		why: "figures of keys that differ from run to run: random bits, clock ticks, K writers' refills landing in another order"},
	{pattern: "schemes[!" + fixedKeys + "].keys_note", kind: value, reason: "keys",
		why: "what the segment allocator's adaptive step did in the run"},

	// Rankings of every scheme.
	{pattern: "verdict.ranked", kind: subtree, reason: "verdict", why: "order, scores and text (ns/ID) of every scheme's figures"},
	{pattern: "verdict.rejected", kind: subtree, reason: "verdict", why: "which schemes fall over the threshold, from every scheme's figures"},
	{pattern: "families.verdicts[*].ranked", kind: subtree, reason: "verdict", why: "as verdict.ranked, per engine family"},
	{pattern: "families.verdicts[*].rejected", kind: subtree, reason: "verdict", why: "as verdict.rejected, per engine family"},
	{pattern: "families.changes", kind: subtree, reason: "verdict", why: "what changes between the families, said from every scheme's figures"},
}

// pgQuiet is the note of the PostgreSQL figures that other sessions'
// checkpoints add to.
const pgQuiet = "PostgreSQL's pages dirtied, full-page images and WAL bytes count again the pages " +
	"that a CHECKPOINT of another session's cleaned during a load: if anything else used the server " +
	"during the runs (tests, another compare), run again on a server nobody else uses"

var segRE = regexp.MustCompile(`\[[^\]]*\]|[^.\[\]]+`)

func splitPath(p string) []string { return segRE.FindAllString(p, -1) }

// matchSegs says whether the path segs matches the pattern pat, or lies
// under a path that does (prefix: for subtree rules).
func matchSegs(pat, segs []string, prefix bool) bool {
	if len(pat) == 0 {
		return len(segs) == 0 || prefix
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegs(pat[1:], segs[i:], prefix) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 || !matchSeg(pat[0], segs[0]) {
		return false
	}
	return matchSegs(pat[1:], segs[1:], prefix)
}

func matchSeg(p, s string) bool {
	pe, se := strings.HasPrefix(p, "["), strings.HasPrefix(s, "[")
	if pe != se {
		return false
	}
	if !pe {
		ok, _ := path.Match(p, s)
		return ok
	}
	p, s = p[1:len(p)-1], s[1:len(s)-1]
	neg := strings.HasPrefix(p, "!")
	p = strings.TrimPrefix(p, "!")
	in := false
	for _, alt := range strings.Split(p, "|") {
		if ok, _ := path.Match(alt, s); ok {
			in = true
			break
		}
	}
	return in != neg
}

// ruleFor returns the first rule whose pattern matches segs, or nil.
func ruleFor(segs []string) *rule {
	for i := range rules {
		r := &rules[i]
		if matchSegs(r.segs, segs, r.kind == subtree) {
			return r
		}
	}
	return nil
}

// A field is one leaf of a document.
type field struct {
	key  string   // the same field in both reports: schemes[20].runs[1]...
	path string   // for people: schemes[20:uuidv4].runs[1:w4]...
	segs []string // for the rules: schemes [uuidv4] runs [w4] ...
	v    any      // string, json.Number, bool, nil, or emptyArray, emptyObject
}

type empty string

const (
	emptyArray  empty = "[]"
	emptyObject empty = "{}"
)

// kv is one member of an object, in the document's order.
type kv struct {
	k string
	v any
}

// decode reads one JSON value keeping the order of objects' members:
// objects become []kv, arrays []any, numbers json.Number.
func decode(d *json.Decoder) (any, error) {
	t, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t {
	case json.Delim('{'):
		obj := []kv{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decode(d)
			if err != nil {
				return nil, err
			}
			obj = append(obj, kv{k.(string), v})
		}
		_, err := d.Token()
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for d.More() {
			v, err := decode(d)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := d.Token()
		return arr, err
	}
	return t, nil
}

// label names an array element for people and rules: by its name,
// engine or scheme; a run by its writers, a bbolt load by its fill; a
// column by its section and key.
func label(v any) string {
	obj, ok := v.([]kv)
	if !ok {
		return ""
	}
	get := func(k string) (any, bool) {
		for _, m := range obj {
			if m.k == k {
				return m.v, true
			}
		}
		return nil, false
	}
	for _, k := range []string{"name", "engine", "scheme"} {
		if s, ok := get(k); ok {
			if s, ok := s.(string); ok {
				return s
			}
		}
	}
	if sec, ok := get("section"); ok {
		if key, ok := get("key"); ok {
			return fmt.Sprintf("%v:%v", sec, key)
		}
	}
	if w, ok := get("writers"); ok {
		return fmt.Sprintf("w%v", w)
	}
	if f, ok := get("fill_percent"); ok {
		return fmt.Sprintf("fill%v", f)
	}
	return ""
}

func flatten(v any, key, p string, segs []string, out *[]field) {
	switch v := v.(type) {
	case []kv:
		if len(v) == 0 {
			*out = append(*out, field{key, p, segs, emptyObject})
		}
		for _, m := range v {
			k, q := m.k, m.k
			if p != "" {
				k, q = key+"."+m.k, p+"."+m.k
			}
			flatten(m.v, k, q, append(slices.Clip(segs), m.k), out)
		}
	case []any:
		if len(v) == 0 {
			*out = append(*out, field{key, p, segs, emptyArray})
		}
		for i, e := range v {
			l := label(e)
			k := key + "[" + strconv.Itoa(i) + "]"
			q := k
			if l != "" {
				q = p + "[" + strconv.Itoa(i) + ":" + l + "]"
			}
			flatten(e, k, q, append(slices.Clip(segs), "["+l+"]"), out)
		}
	default:
		*out = append(*out, field{key, p, segs, v})
	}
}

func load(name string) ([]field, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	v, err := decode(d)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: more than one JSON value", name)
	}
	var out []field
	flatten(v, "", "", nil, &out)
	return out, nil
}

func jsonType(v any) string {
	switch v := v.(type) {
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case empty:
		if v == emptyArray {
			return "array"
		}
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func show(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// equal compares two values of one type; numbers by value.
func equal(a, b any) bool {
	if a == b {
		return true
	}
	x, ok1 := a.(json.Number)
	y, ok2 := b.(json.Number)
	if !ok1 || !ok2 {
		return false
	}
	fx, err1 := x.Float64()
	fy, err2 := y.Float64()
	return err1 == nil && err2 == nil && (fx == fy || math.IsNaN(fx) && math.IsNaN(fy))
}

func main() {
	listExcluded := flag.Bool("excluded", false, "list every rule with the fields it left out")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: comparejson [-excluded] BASE.json HEAD.json")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	for i := range rules {
		rules[i].segs = splitPath(rules[i].pattern)
	}
	base, err := load(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "comparejson:", err)
		os.Exit(2)
	}
	head, err := load(flag.Arg(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "comparejson:", err)
		os.Exit(2)
	}
	headBy := map[string]field{}
	for _, f := range head {
		headBy[f.key] = f
	}
	baseBy := map[string]bool{}
	for _, f := range base {
		baseBy[f.key] = true
	}

	// N, the keys per load, for the tolerances.
	n := 0.0
	for _, f := range base {
		if f.path == "config.n" {
			if v, ok := f.v.(json.Number); ok {
				n, _ = v.Float64()
			}
		}
	}
	if n <= 0 {
		fmt.Fprintln(os.Stderr, "comparejson:", flag.Arg(0), "has no config.n")
		os.Exit(2)
	}
	compared, differ, near := 0, 0, 0
	excluded := map[string]int{}
	var notes []string
	var r *rule // the rule of the field being compared
	diff := func(format string, a ...any) {
		differ++
		fmt.Printf(format+"\n", a...)
		if r != nil && r.note != "" && !slices.Contains(notes, r.note) {
			notes = append(notes, r.note)
		}
	}
	for _, b := range base {
		r = ruleFor(b.segs)
		if r != nil && r.kind != compare {
			r.count++
		}
		h, ok := headBy[b.key]
		switch {
		case r != nil && r.kind == subtree:
			excluded[r.reason]++
		case !ok:
			diff("MISSING in head: %s (base %s)", b.path, show(b.v))
		case jsonType(b.v) != jsonType(h.v):
			diff("DIFF %s: base %s, head %s", b.path, show(b.v), show(h.v))
		case r != nil && r.kind == value:
			excluded[r.reason]++
		case r != nil && r.kind == within && jsonType(b.v) == "number":
			compared++
			x, _ := b.v.(json.Number).Float64()
			y, _ := h.v.(json.Number).Float64()
			if d := math.Abs(x - y); d > 0 {
				if d > r.tol(n) {
					diff("DIFF %s: base %s, head %s (more than %.4g apart)", b.path, show(b.v), show(h.v), r.tol(n))
				} else {
					near++
				}
			}
		case r != nil && r.kind == mask:
			compared++
			bv, hv := b.v, h.v
			if s, ok := bv.(string); ok {
				bv = r.mask.ReplaceAllString(s, r.with)
			}
			if s, ok := hv.(string); ok {
				hv = r.mask.ReplaceAllString(s, r.with)
			}
			if !equal(bv, hv) {
				diff("DIFF %s: base %s, head %s", b.path, show(bv), show(hv))
			}
		default:
			compared++
			if !equal(b.v, h.v) {
				diff("DIFF %s: base %s, head %s", b.path, show(b.v), show(h.v))
			}
		}
	}
	for _, h := range head {
		if baseBy[h.key] {
			continue
		}
		if r = ruleFor(h.segs); r != nil && r.kind == subtree {
			r.count++
			excluded[r.reason]++
			continue
		}
		diff("MISSING in base: %s (head %s)", h.path, show(h.v))
	}

	for _, n := range notes {
		fmt.Println("NOTE:", n)
	}
	if *listExcluded {
		fmt.Println("fields left out, by rule:")
		for _, r := range rules {
			if r.kind == compare || r.kind == mask || r.kind == within {
				continue
			}
			how := "value"
			if r.kind == subtree {
				how = "all"
			}
			fmt.Printf("  %6d  %-11s %-5s %s: %s\n", r.count, r.reason, how, r.pattern, r.why)
		}
	}
	total := 0
	var by []string
	for _, reason := range []string{"timing", "machine", "server-wide", "keys", "verdict"} {
		total += excluded[reason]
		by = append(by, fmt.Sprintf("%s %d", reason, excluded[reason]))
	}
	verdict := "equal"
	if differ > 0 {
		verdict = fmt.Sprintf("%d DIFFER", differ)
	}
	within := ""
	if near > 0 {
		within = fmt.Sprintf(" (%d within a tolerance)", near)
	}
	fmt.Printf("comparejson: %s: %d fields compared%s, %d excluded (%s)\n", verdict, compared, within, total, strings.Join(by, ", "))
	if differ > 0 {
		os.Exit(1)
	}
}
