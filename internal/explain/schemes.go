package explain

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/store"
	"github.com/idkit/idkit/traceid"
)

// TraceID explains a TraceId in decimal. Its wrapping second is read as the
// latest one not after at; threadBits is the T its generator used.
func TraceID(s string, at time.Time, threadBits int) (*Report, error) {
	id, err := traceid.Parse(s)
	if err != nil {
		return nil, err
	}
	return AddTraceID(New("traceid", id.String()), id, at, threadBits)
}

// AddTraceID appends the parts of id to r: time, second, node, thread and
// counter. It serves IDs that reach a TraceId from another form, such as
// an OpenTelemetry span ID.
func AddTraceID(r *Report, id traceid.ID, at time.Time, threadBits int) (*Report, error) {
	p, err := traceid.Decode(id, threadBits)
	if err != nil {
		return nil, err
	}
	return r.Add("time", FormatTime(id.Time(at))).
		Add("second", p.Second).
		Add("node", p.Node).
		Add("thread", p.Thread).
		Add("counter", p.Counter), nil
}

// LaunchLookup returns the launch record of a DecimalId's launch. Its
// errors reach the caller of DecimalID unchanged, so that it can say where
// it looked.
type LaunchLookup func(id decimalid.ID) (store.Launch, error)

// DecimalID explains a DecimalId; with lookup non-nil it also shows the
// record of the launch that made it.
func DecimalID(s string, lookup LaunchLookup) (*Report, error) {
	id, err := decimalid.Parse(s)
	if err != nil {
		return nil, err
	}
	r := New("decimalid", id.String()).
		Add("split", id.SplitString()).
		Add("counter", id.Counter()).
		Add("generator", id.Generator()).
		Add("launch", id.Launch())
	if lookup == nil {
		return r, nil
	}
	l, err := lookup(id)
	if err != nil {
		return nil, err
	}
	return r.Add("launch_started", FormatTime(l.StartedAt)).
		Add("ticket", l.Ticket).
		Add("by", l.By).
		Add("note", l.Note), nil
}

// Snowflake explains a snowflake ID of the given layout: its time and tick,
// its node fields by name, and its sequence.
func Snowflake(s string, layout snowflake.Layout) (*Report, error) {
	id, err := snowflake.Parse(s)
	if err != nil {
		return nil, err
	}
	p, err := layout.Decode(id)
	if err != nil {
		return nil, err
	}
	r := New("snowflake", id.String()).
		Add("preset", layout.Name).
		Add("time", FormatTime(p.Time)).
		Add("tick", p.Tick)
	for _, f := range layout.Fields {
		r.Add(f.Name, p.Node[f.Name])
	}
	return r.Add("sequence", p.Sequence), nil
}

// ObjectID explains an ObjectID. The zero ObjectID is refused.
func ObjectID(s string) (*Report, error) {
	id, err := objectid.Parse(s)
	if err != nil {
		return nil, err
	}
	if id.IsZero() {
		return nil, fmt.Errorf("objectid: parse %q: the zero ObjectID is invalid", s)
	}
	process := id.Process()
	return New("objectid", id.String()).
		Add("time", FormatTime(id.Timestamp())).
		Add("process", hex.EncodeToString(process[:])).
		Add("counter", id.Counter()), nil
}

// Segment explains an ID of the segment allocator of tag, which holds
// nothing but its number.
func Segment(s, tag string) (*Report, error) {
	id, err := segment.Parse(s)
	if err != nil {
		return nil, err
	}
	return New("segment", id.String()).Add("tag", tag), nil
}

// Flake128 explains a 128-bit flake ID, in base 62 or 32 hex digits.
func Flake128(s string) (*Report, error) {
	id, err := flake128.Parse(s)
	if err != nil {
		return nil, err
	}
	w := id.Worker()
	mac := fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", byte(w>>40), byte(w>>32), byte(w>>24), byte(w>>16), byte(w>>8), byte(w))
	return New("flake128", id.String()).
		Add("time", FormatTime(id.Time())).
		Add("milliseconds", id.Milliseconds()).
		Add("worker", w).
		Add("mac", mac).
		Add("sequence", id.Sequence()).
		Add("hex", id.Hex()), nil
}
