package explain

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"
	"github.com/segmentio/ksuid"

	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/snowflake"
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
type LaunchLookup func(id decimalid.ID) (launchlog.Launch, error)

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

// ULID explains a ULID: its time and entropy.
func ULID(s string) (*Report, error) {
	id, err := ulid.ParseStrict(s)
	if err != nil {
		return nil, fmt.Errorf("ulid: parse %q: %s", s, strings.TrimPrefix(err.Error(), "ulid: "))
	}
	return New("ulid", id.String()).
		Add("time", FormatTime(ulid.Time(id.Time()))).
		Add("entropy", hex.EncodeToString(id.Entropy())), nil
}

// UUID4 explains a version 4 (random) UUID.
func UUID4(s string) (*Report, error) {
	id, err := parseUUID("uuidv4", s, 4)
	if err != nil {
		return nil, err
	}
	return New("uuidv4", id.String()).
		Add("version", int(id.Version())).
		Add("variant", id.Variant().String()), nil
}

// UUID7 explains a version 7 (time-ordered) UUID.
func UUID7(s string) (*Report, error) {
	id, err := parseUUID("uuidv7", s, 7)
	if err != nil {
		return nil, err
	}
	sec, nsec := id.Time().UnixTime()
	return New("uuidv7", id.String()).
		Add("time", FormatTime(time.Unix(sec, nsec))).
		Add("version", int(id.Version())).
		Add("variant", id.Variant().String()), nil
}

// XID explains an xid (rs/xid): its second, machine, process and counter.
func XID(s string) (*Report, error) {
	id, err := xid.FromString(s)
	if err != nil {
		return nil, fmt.Errorf("xid: parse %q: %s", s, strings.TrimPrefix(err.Error(), "xid: "))
	}
	return New("xid", id.String()).
		Add("time", FormatTime(id.Time())).
		Add("machine", hex.EncodeToString(id.Machine())).
		Add("pid", int(id.Pid())).
		Add("counter", int(id.Counter())), nil
}

// KSUID explains a KSUID (segmentio/ksuid): its second and random payload.
func KSUID(s string) (*Report, error) {
	id, err := ksuid.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("ksuid: parse %q: %s", s, err)
	}
	return New("ksuid", id.String()).
		Add("time", FormatTime(id.Time())).
		Add("payload", hex.EncodeToString(id.Payload())), nil
}

// parseUUID parses s as an RFC 9562 UUID of the given version.
func parseUUID(scheme, s string, version uuid.Version) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return id, fmt.Errorf("%s: parse %q: %w", scheme, s, err)
	}
	if id.Variant() != uuid.RFC4122 {
		return id, fmt.Errorf("%s: parse %q: variant %s, want RFC 4122", scheme, s, id.Variant())
	}
	if id.Version() != version {
		return id, fmt.Errorf("%s: parse %q: version %d, want %d", scheme, s, id.Version(), version)
	}
	return id, nil
}
