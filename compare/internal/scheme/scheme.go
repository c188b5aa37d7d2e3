package scheme

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"sort"
	"strings"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"
)

// Kind says where a scheme comes from.
type Kind string

// The kinds of scheme.
const (
	Baseline Kind = "baseline" // the ideal every scheme is measured against
	Ours     Kind = "idkit"    // a scheme of this module
	Peer     Kind = "peer"     // a real peer library, pulled as a Go module
)

// A Generator issues IDs and appends each one's key encoding to a buffer.
// Implementations are safe for concurrent use. A Generator that holds
// something outside the process (a table, a key, a file) also implements
// io.Closer; see CloseGenerators.
type Generator interface {
	// Next generates one ID and appends its key bytes to dst. Keys compare
	// with bytes.Compare as the scheme's IDs compare.
	Next(dst []byte) ([]byte, error)
}

// CloseGenerators closes the generators of one Scheme.New or Scheme.Keys
// call that implement io.Closer, removing what they made outside the
// process, and returns the first error.
func CloseGenerators(gens []Generator) error {
	var first error
	for _, g := range gens {
		if c, ok := g.(io.Closer); ok {
			if err := c.Close(); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// A Scheme is one entry of the registry: how to make its generators, how
// long its keys are, and what its layout claims.
type Scheme struct {
	// Name is the short name used on the command line and in reports.
	Name string
	// Kind says whether it is the baseline, ours or a peer.
	Kind Kind
	// Module is the Go module that implements it (empty for the baseline).
	Module string
	// Summary says in a few words what the scheme is.
	Summary string
	// KeyLen is the length in bytes of every key Next appends.
	KeyLen int
	// New returns generators for writers 0..writers-1: distinct nodes or
	// generators, as separate app instances sharing one table would have.
	// Speed is measured on writer 0 of a set of one.
	New func(writers int) ([]Generator, error)
	// Keys, when set, replaces New for the locality keys. A rate-capped
	// scheme uses it to compose, over a simulated clock, the keys it would
	// issue at its full rate; KeysNote says how.
	Keys     func(writers int) ([]Generator, error)
	KeysNote string
	// After, when set, says what the generators of a writer run found, for
	// the report; it is called once they are closed, and its line is added
	// to KeysNote.
	After func() string
	// Design computes what the layout claims. It reads the scheme's layout
	// constants (or its library's own decoders), never measured results.
	Design func() Design
}

// Design is what a scheme's layout claims, computed from its constants.
type Design struct {
	// Bits is the size of an ID in bits.
	Bits int `json:"bits"`
	// MaxBits is the position of the highest bit an ID can set (63 for a
	// positive int64); Int63 and JSSafe follow from it.
	MaxBits int `json:"max_bits"`
	// Int63 says every ID fits a positive int64 (a BIGINT column).
	Int63 bool `json:"int63"`
	// JSSafe says every ID is at most 2^53, so JavaScript numbers hold it.
	JSSafe bool `json:"js_safe"`
	// Ordered says one generator's IDs increase strictly, time-based or not.
	Ordered bool `json:"ordered"`
	// TimeUnit is the resolution of the leading time field; zero when the
	// ID does not lead with time.
	TimeUnit time.Duration `json:"time_unit_ns,omitempty"`
	// TimeBits is the width of the time field.
	TimeBits int `json:"time_bits,omitempty"`
	// Epoch is the time the time field counts from.
	Epoch time.Time `json:"epoch,omitzero"`
	// Wraps says the time field wraps around (periodically monotonic)
	// rather than running out.
	Wraps bool `json:"wraps,omitempty"`
	// NodeBits is the width of the node, machine or generator field.
	NodeBits int `json:"node_bits,omitempty"`
	// RandomBits is the number of random bits per ID.
	RandomBits int `json:"random_bits,omitempty"`
	// PerSecond is how many IDs one node issues per second before it must
	// wait, borrow time or repeat; 0 when the layout sets no limit.
	PerSecond int64 `json:"ids_per_second_per_node,omitempty"`
	// Waits says the generator waits for the next tick when a tick's
	// allowance runs out (rather than borrowing time or repeating).
	Waits bool `json:"waits,omitempty"`
	// Capacity is how many IDs one generator issues before its counter
	// runs out, for a scheme whose counter is not reset by time; 0 if none.
	Capacity int64 `json:"capacity,omitempty"`
	// Dense says the IDs count up from 1 across all writers, one sequence
	// with no time in it: they grow with the IDs issued, not with time, so
	// how long they stay under a bound (2^53) depends on the rate.
	Dense bool `json:"dense,omitempty"`
	// Note explains what the fields cannot.
	Note string `json:"note,omitempty"`
}

// SortsByAge says whether a scheme's keys sort its rows by age, so that
// the rows older than a time are the keys below a bound an application
// can compute: keys that lead with time (the bound from the time alone)
// and one dense sequence across all writers (the first ID issued after
// the time, kept as a mark). A generator's own counter (DecimalId) does
// not: a generator that starts again counts from one.
func SortsByAge(d Design) bool { return d.TimeUnit != 0 || d.Dense }

// span returns how long the time field lasts before it runs out or wraps.
func (d Design) span() time.Duration {
	if d.TimeUnit == 0 || d.TimeBits == 0 {
		return 0
	}
	s := math.Ldexp(float64(d.TimeUnit), d.TimeBits)
	if s >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(s)
}

// End returns when the time field runs out: the zero time if the scheme
// has no time field or wraps. It computes in 128 bits, so that spans
// longer than time.Duration (uuid v7's 2^48 ms, flake128's 2^64 ms) come
// out exactly.
func (d Design) End() time.Time {
	if d.Wraps || d.TimeUnit <= 0 || d.Epoch.IsZero() || d.TimeBits <= 0 || d.TimeBits > 64 {
		return time.Time{}
	}
	hi, lo := bits.Mul64(1<<(d.TimeBits-1), uint64(d.TimeUnit)) // then doubled, so that 64 bits fit
	hi, lo = hi<<1|lo>>63, lo<<1
	if hi >= 1e9 {
		return time.Time{}
	}
	sec, ns := bits.Div64(hi, lo, 1e9)
	return time.Unix(d.Epoch.Unix()+int64(sec), int64(d.Epoch.Nanosecond())+int64(ns)).UTC()
}

// Lifetime says in words how long the layout lasts.
func (d Design) Lifetime() string {
	switch {
	case d.Wraps:
		return "wraps every " + days(d.span())
	case d.TimeUnit != 0 && !d.Epoch.IsZero():
		if end := d.End(); !end.IsZero() {
			return "until " + end.Format("2006-01-02")
		}
		return "beyond year 292277026596"
	case d.Capacity != 0:
		return fmt.Sprintf("%s IDs/generator", Count(d.Capacity))
	default:
		return "no time field"
	}
}

// TimeOrder says in words whether and how keys sort by time.
func (d Design) TimeOrder() string {
	switch {
	case d.TimeUnit != 0 && d.Wraps:
		return fmt.Sprintf("%s, within a wrap", unit(d.TimeUnit))
	case d.TimeUnit != 0:
		return unit(d.TimeUnit)
	case d.Ordered:
		return "no (counter order)"
	default:
		return "no"
	}
}

// Rate says in words how many IDs per second a node issues by design.
func (d Design) Rate() string {
	if d.PerSecond == 0 {
		return "no limit"
	}
	return Count(d.PerSecond)
}

func days(d time.Duration) string {
	return fmt.Sprintf("%.1f days", d.Hours()/24)
}

func unit(d time.Duration) string {
	switch {
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	case d%time.Millisecond == 0:
		return fmt.Sprintf("%dms", d/time.Millisecond)
	default:
		return d.String()
	}
}

// Count formats a count with thousands separators, or as a power of two
// (minus one) when it is at least 2^32 and that is exact.
func Count(n int64) string {
	if n >= 1<<32 {
		if u := uint64(n) + 1; u&(u-1) == 0 {
			return fmt.Sprintf("2^%d-1", bits.Len64(u)-1)
		}
		if u := uint64(n); u&(u-1) == 0 {
			return fmt.Sprintf("2^%d", bits.Len64(u)-1)
		}
	}
	return engine.Thousands(n)
}

// FromMaxBits fills Int63 and JSSafe from MaxBits.
func FromMaxBits(d Design) Design {
	d.Int63 = d.MaxBits <= 63
	d.JSSafe = d.MaxBits <= 53
	return d
}

var registry []Scheme

func register(s ...Scheme) { registry = append(registry, s...) }

// Schemes returns every registered scheme in report order: the baseline,
// ours, then the peers; but for the schemes made for shards (ForShards),
// which a run with shards adds.
func Schemes() []Scheme {
	var out []Scheme
	for _, s := range registry {
		if !forShards(s.Name) {
			out = append(out, s)
		}
	}
	rank := map[Kind]int{Baseline: 0, Ours: 1, Peer: 2}
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Kind] < rank[out[j].Kind] })
	return out
}

// Names returns the names of every registered scheme in report order,
// those made for shards last.
func Names() []string {
	var names []string
	for _, s := range append(Schemes(), ForShards()...) {
		names = append(names, s.Name)
	}
	return names
}

// aliases are the other spellings of scheme names that Lookup accepts: the
// names idkit new and inspect took in earlier releases.
var aliases = map[string]string{"uuid4": "uuidv4", "uuid7": "uuidv7"}

// Lookup returns the scheme called name (case-insensitive), or one of its
// aliases (uuid4 for uuidv4, uuid7 for uuidv7).
func Lookup(name string) (Scheme, error) {
	if canonical, ok := aliases[strings.ToLower(name)]; ok {
		name = canonical
	}
	for _, s := range append(Schemes(), ForShards()...) {
		if strings.EqualFold(s.Name, name) {
			return s, nil
		}
	}
	return Scheme{}, fmt.Errorf("%w %q, want one of %s", ErrUnknownScheme, name, strings.Join(Names(), ", "))
}

// Select returns the schemes named in a comma-separated list, in the
// list's order without repeats; an empty list or "all" selects every one.
func Select(list string) ([]Scheme, error) {
	list = strings.TrimSpace(list)
	if list == "" || strings.EqualFold(list, "all") {
		return Schemes(), nil
	}
	var out []Scheme
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			return nil, fmt.Errorf("%w: empty name in %q", ErrUnknownScheme, list)
		}
		s, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	return out, nil
}
