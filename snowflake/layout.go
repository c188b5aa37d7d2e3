package snowflake

import (
	"fmt"
	"math/bits"
	"strings"
	"time"
)

// Field is a named node field of a Layout, such as a datacenter or worker
// number.
type Field struct {
	Name string // letters, digits, '_' and '-'; unique in the layout
	Bits int    // width, 1 to 62
}

// Layout says how an ID's 63 bits divide into a timestamp, node fields and
// a sequence. From the most significant bit down an ID is
//
//	0 | time (TimeBits) | node fields (in order) | sequence (SequenceBits)
//
// or, with NodeLow, 0 | time | sequence | node fields (Sonyflake's order).
// Bits not covered (when the widths sum to less than 63) are zero high
// bits. The zero Layout means Twitter() wherever a Layout is taken: in
// Options and in every method.
type Layout struct {
	// Name is informational: presets set it, and it is part of the
	// default store key.
	Name string
	// Epoch is the time of tick 0; 1970..2200.
	Epoch time.Time
	// Unit is the length of a tick, 1µs to 24h.
	Unit time.Duration
	// TimeBits is the width of the tick count, 1 to 63.
	TimeBits int
	// Fields are the node fields from the most significant down; they may
	// be empty.
	Fields []Field
	// NodeLow places the node fields below the sequence instead of above.
	NodeLow bool
	// SequenceBits is the width of the per-tick sequence, 0 to 62.
	SequenceBits int
}

// Parts are the fields of an ID read with a Layout.
type Parts struct {
	// Time is the start of the ID's tick, in UTC. Compose reads it,
	// truncating to the tick; if it is the zero time, Compose reads Tick.
	Time time.Time
	// Tick is the number of Units since the Epoch. Decode sets it and Time;
	// Compose takes either, and both only if they agree.
	Tick int64
	// Node holds the node fields by name. Compose takes a missing field as 0.
	Node map[string]int64
	// Sequence is the position of the ID within its tick.
	Sequence int64
}

const (
	minUnit  = time.Microsecond
	maxUnit  = 24 * time.Hour
	maxField = 8 // node fields per layout
)

var (
	minEpoch = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxEpoch = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

func (l *Layout) isZero() bool {
	return l.Name == "" && l.Epoch.IsZero() && l.Unit == 0 && l.TimeBits == 0 &&
		len(l.Fields) == 0 && !l.NodeLow && l.SequenceBits == 0
}

// resolve returns l, or Twitter() for the zero Layout.
func (l Layout) resolve() Layout {
	if l.isZero() {
		return Twitter()
	}
	return l
}

// Validate reports the first field of l outside its allowed range, as an
// error wrapping ErrInvalid that names the field and the range.
func (l Layout) Validate() error {
	l = l.resolve()
	if l.Epoch.Before(minEpoch) || !l.Epoch.Before(maxEpoch) {
		return fmt.Errorf("%w: Layout.Epoch = %v, want 1970-01-01 to 2200-01-01", ErrInvalid, l.Epoch)
	}
	if l.Unit < minUnit || l.Unit > maxUnit {
		return fmt.Errorf("%w: Layout.Unit = %v, want %v to %v", ErrInvalid, l.Unit, minUnit, maxUnit)
	}
	if l.TimeBits < 1 || l.TimeBits > 63 {
		return fmt.Errorf("%w: Layout.TimeBits = %d, want 1 to 63", ErrInvalid, l.TimeBits)
	}
	if l.SequenceBits < 0 || l.SequenceBits > 62 {
		return fmt.Errorf("%w: Layout.SequenceBits = %d, want 0 to 62", ErrInvalid, l.SequenceBits)
	}
	if len(l.Fields) > maxField {
		return fmt.Errorf("%w: Layout.Fields has %d fields, want at most %d", ErrInvalid, len(l.Fields), maxField)
	}
	for i, f := range l.Fields {
		if !validName(f.Name) {
			return fmt.Errorf("%w: Layout.Fields[%d].Name = %q, want 1 to 32 letters, digits, '_' or '-'", ErrInvalid, i, f.Name)
		}
		for _, g := range l.Fields[:i] {
			if g.Name == f.Name {
				return fmt.Errorf("%w: Layout.Fields[%d].Name = %q, want a name no other field has", ErrInvalid, i, f.Name)
			}
		}
		if f.Bits < 1 || f.Bits > 62 {
			return fmt.Errorf("%w: Layout.Fields[%d] (%q).Bits = %d, want 1 to 62", ErrInvalid, i, f.Name, f.Bits)
		}
	}
	if total := l.Bits(); total > 63 {
		return fmt.Errorf("%w: Layout bits sum to %d (time %d + node %d + sequence %d), want at most 63",
			ErrInvalid, total, l.TimeBits, l.NodeBits(), l.SequenceBits)
	}
	return nil
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// NodeBits returns the total width of the node fields.
func (l Layout) NodeBits() int {
	l = l.resolve()
	n := 0
	for _, f := range l.Fields {
		n += f.Bits
	}
	return n
}

// Bits returns the number of bits an ID of l uses: time, node and sequence
// together. IDs of l are below 2^Bits.
func (l Layout) Bits() int {
	l = l.resolve()
	return l.TimeBits + l.NodeBits() + l.SequenceBits
}

// PerTick returns how many IDs one node can issue per tick: 2^SequenceBits.
func (l Layout) PerTick() int64 { return 1 << l.resolve().SequenceBits }

// Rate returns how many IDs one node can issue per second at most.
func (l Layout) Rate() float64 { return float64(l.PerTick()) / l.resolve().Unit.Seconds() }

// Expires returns when l's timestamp runs out: the end of the last tick
// that fits in TimeBits. No generator issues IDs of l from then on.
func (l Layout) Expires() time.Time {
	l = l.resolve()
	return l.tickTime(1 << l.TimeBits)
}

// tickTime returns the start of tick t (0 to 2^63), computed in 128 bits so
// that layouts lasting beyond 2262 do not overflow.
func (l Layout) tickTime(t uint64) time.Time {
	hi, lo := bits.Mul64(t, uint64(l.Unit))
	if hi >= 1e9 {
		return time.Unix(1<<62, 0).UTC() // beyond any clock
	}
	sec, ns := bits.Div64(hi, lo, 1e9)
	if sec >= 1<<62 {
		return time.Unix(1<<62, 0).UTC()
	}
	return time.Unix(l.Epoch.Unix()+int64(sec), int64(l.Epoch.Nanosecond())+int64(ns)).UTC()
}

// tickOf returns the tick that contains t, or an error naming the range if
// t lies before the Epoch or at or after Expires.
func (l Layout) tickOf(t time.Time) (uint64, error) {
	if t.Before(l.Epoch) || !t.Before(l.Expires()) {
		return 0, fmt.Errorf("%w: time %v outside layout %s's range %v to %v", ErrInvalid,
			t.UTC(), l.label(), l.Epoch.UTC(), l.Expires())
	}
	sec := t.Unix() - l.Epoch.Unix()
	ns := int64(t.Nanosecond()) - int64(l.Epoch.Nanosecond())
	if ns < 0 {
		sec--
		ns += 1e9
	}
	hi, lo := bits.Mul64(uint64(sec), 1e9)
	var c uint64
	lo, c = bits.Add64(lo, uint64(ns), 0)
	hi += c
	tick, _ := bits.Div64(hi, lo, uint64(l.Unit))
	return tick, nil
}

// shifts returns the bit positions of the time, the first node field's
// low end, and the sequence.
func (l Layout) shifts() (timeShift, nodeShift, seqShift uint) {
	n, s := uint(l.NodeBits()), uint(l.SequenceBits)
	if l.NodeLow {
		return n + s, 0, n
	}
	return n + s, s, 0
}

// Compose builds the ID with parts p. Each part outside its range is an
// error that names it and the range; so is a missing or unknown node field
// name, and a result of 0, which is not an ID.
func (l Layout) Compose(p Parts) (ID, error) {
	l = l.resolve()
	if err := l.Validate(); err != nil {
		return 0, err
	}
	tick, err := l.partsTick(p)
	if err != nil {
		return 0, err
	}
	node, err := l.node(p.Node, "Parts.Node")
	if err != nil {
		return 0, err
	}
	if max := l.PerTick() - 1; p.Sequence < 0 || p.Sequence > max {
		return 0, fmt.Errorf("%w: Parts.Sequence = %d, want 0 to %d", ErrInvalid, p.Sequence, max)
	}
	ts, ns, ss := l.shifts()
	id := ID(tick<<ts | node<<ns | uint64(p.Sequence)<<ss)
	if id == 0 {
		return 0, fmt.Errorf("%w: parts compose to 0, which is not an ID", ErrInvalid)
	}
	return id, nil
}

// partsTick returns the tick of p: from Time, or from Tick when Time is
// the zero time; when both are set they must agree.
func (l Layout) partsTick(p Parts) (uint64, error) {
	if p.Time.IsZero() {
		if max := int64(1)<<l.TimeBits - 1; l.TimeBits < 63 && (p.Tick < 0 || p.Tick > max) || p.Tick < 0 {
			return 0, fmt.Errorf("%w: Parts.Tick = %d, want 0 to %d", ErrInvalid, p.Tick, uint64(1)<<l.TimeBits-1)
		}
		return uint64(p.Tick), nil
	}
	tick, err := l.tickOf(p.Time)
	if err != nil {
		return 0, err
	}
	if p.Tick != 0 && uint64(p.Tick) != tick {
		return 0, fmt.Errorf("%w: Parts.Tick = %d but Parts.Time %v is tick %d, want one of them or both alike", ErrInvalid, p.Tick, p.Time.UTC(), tick)
	}
	return tick, nil
}

// node packs node field values by name into the node bits. A missing name
// counts as 0; an unknown name or a value out of range is an error naming
// it, with what (the option or part) in front.
func (l Layout) node(values map[string]int64, what string) (uint64, error) {
	for name := range values {
		if !l.hasField(name) {
			return 0, fmt.Errorf("%w: %s[%q]: layout %s has no such field, want one of %s",
				ErrInvalid, what, name, l.label(), l.fieldNames())
		}
	}
	var node uint64
	for _, f := range l.Fields {
		v := values[f.Name]
		if max := int64(1)<<f.Bits - 1; v < 0 || v > max {
			return 0, fmt.Errorf("%w: %s[%q] = %d, want 0 to %d", ErrInvalid, what, f.Name, v, max)
		}
		node = node<<f.Bits | uint64(v)
	}
	return node, nil
}

// SplitNode splits a whole node number, all node fields together with the
// first field most significant, into the fields by name: the inverse of
// packing them. A number outside 0 to 2^NodeBits-1 is an error.
func (l Layout) SplitNode(n int64) (map[string]int64, error) {
	l = l.resolve()
	if max := int64(1)<<l.NodeBits() - 1; n < 0 || n > max {
		return nil, fmt.Errorf("%w: node number %d, want 0 to %d for layout %s (fields %s)", ErrInvalid, n, max, l.label(), l.fieldNames())
	}
	values := make(map[string]int64, len(l.Fields))
	for i := len(l.Fields) - 1; i >= 0; i-- {
		f := l.Fields[i]
		values[f.Name] = n & (1<<f.Bits - 1)
		n >>= f.Bits
	}
	return values, nil
}

// NodeRange returns the whole node numbers, from lo to hi inclusive, whose
// fields named in fixed hold the given values, for example the workers of
// one datacenter: a range to claim nodes from. The fixed fields must be the
// leading (most significant) ones, so that the numbers form one range.
func (l Layout) NodeRange(fixed map[string]int64) (lo, hi int64, err error) {
	l = l.resolve()
	if _, err := l.node(fixed, "fixed"); err != nil {
		return 0, 0, err
	}
	rest, i := l.NodeBits(), 0
	for ; i < len(l.Fields); i++ {
		v, ok := fixed[l.Fields[i].Name]
		if !ok {
			break
		}
		rest -= l.Fields[i].Bits
		lo |= v << rest
	}
	for _, f := range l.Fields[i:] {
		if _, ok := fixed[f.Name]; ok {
			return 0, 0, fmt.Errorf("%w: fixed field %q follows a free field in layout %s (fields %s), want fixed fields first",
				ErrInvalid, f.Name, l.label(), l.fieldNames())
		}
	}
	return lo, lo | (1<<rest - 1), nil
}

func (l Layout) hasField(name string) bool {
	for _, f := range l.Fields {
		if f.Name == name {
			return true
		}
	}
	return false
}

func (l Layout) fieldNames() string {
	if len(l.Fields) == 0 {
		return "none"
	}
	names := make([]string, len(l.Fields))
	for i, f := range l.Fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

func (l Layout) label() string {
	if l.Name != "" {
		return l.Name
	}
	return "(custom)"
}

// Decode splits id into its parts. It fails for an ID outside
// 1 to 2^63-1 and for one with bits above l.Bits(), which no generator of
// l issues.
func (l Layout) Decode(id ID) (Parts, error) {
	l = l.resolve()
	if err := l.Validate(); err != nil {
		return Parts{}, err
	}
	if id <= 0 {
		return Parts{}, fmt.Errorf("%w: %d, want 1 to 9223372036854775807", ErrRange, int64(id))
	}
	if total := l.Bits(); total < 63 && uint64(id)>>total != 0 {
		return Parts{}, fmt.Errorf("%w: %d: bits above the %d that layout %s uses are set", ErrRange, int64(id), total, l.label())
	}
	ts, ns, ss := l.shifts()
	v := uint64(id)
	tick := v >> ts
	p := Parts{
		Time:     l.tickTime(tick),
		Tick:     int64(tick),
		Node:     make(map[string]int64, len(l.Fields)),
		Sequence: int64(v >> ss & (1<<l.SequenceBits - 1)),
	}
	node := v >> ns & (1<<l.NodeBits() - 1)
	for i := len(l.Fields) - 1; i >= 0; i-- {
		f := l.Fields[i]
		p.Node[f.Name] = int64(node & (1<<f.Bits - 1))
		node >>= f.Bits
	}
	return p, nil
}

// String describes l, for example
// "twitter: 41 x 1ms since 2010-11-04T01:42:54.657Z | datacenter 5 | worker 5 | sequence 12".
func (l Layout) String() string {
	l = l.resolve()
	var b strings.Builder
	if l.Name != "" {
		b.WriteString(l.Name + ": ")
	}
	fmt.Fprintf(&b, "%d x %v since %s", l.TimeBits, l.Unit, l.Epoch.UTC().Format(time.RFC3339Nano))
	node := func() {
		for _, f := range l.Fields {
			fmt.Fprintf(&b, " | %s %d", f.Name, f.Bits)
		}
	}
	if !l.NodeLow {
		node()
	}
	fmt.Fprintf(&b, " | sequence %d", l.SequenceBits)
	if l.NodeLow {
		node()
	}
	return b.String()
}
