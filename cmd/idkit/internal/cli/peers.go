package cli

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/rs/xid"
	"github.com/segmentio/ksuid"

	"github.com/idkit/idkit/internal/explain"
)

// The peers' IDs that inspect explains, beside idkit's own (package
// explain, which serve shares): their libraries stay out of the modules
// that only serve IDs.

// explainULID explains a ULID: its time and entropy.
func explainULID(s string) (*explain.Report, error) {
	id, err := ulid.ParseStrict(s)
	if err != nil {
		return nil, fmt.Errorf("ulid: parse %q: %s", s, strings.TrimPrefix(err.Error(), "ulid: "))
	}
	return explain.New("ulid", id.String()).
		Add("time", explain.FormatTime(ulid.Time(id.Time()))).
		Add("entropy", hex.EncodeToString(id.Entropy())), nil
}

// explainUUID4 explains a version 4 (random) UUID.
func explainUUID4(s string) (*explain.Report, error) {
	id, err := parseUUID("uuidv4", s, 4)
	if err != nil {
		return nil, err
	}
	return explain.New("uuidv4", id.String()).
		Add("version", int(id.Version())).
		Add("variant", id.Variant().String()), nil
}

// explainUUID7 explains a version 7 (time-ordered) UUID.
func explainUUID7(s string) (*explain.Report, error) {
	id, err := parseUUID("uuidv7", s, 7)
	if err != nil {
		return nil, err
	}
	sec, nsec := id.Time().UnixTime()
	return explain.New("uuidv7", id.String()).
		Add("time", explain.FormatTime(time.Unix(sec, nsec))).
		Add("version", int(id.Version())).
		Add("variant", id.Variant().String()), nil
}

// explainXID explains an xid (rs/xid): its second, machine, process and counter.
func explainXID(s string) (*explain.Report, error) {
	id, err := xid.FromString(s)
	if err != nil {
		return nil, fmt.Errorf("xid: parse %q: %s", s, strings.TrimPrefix(err.Error(), "xid: "))
	}
	return explain.New("xid", id.String()).
		Add("time", explain.FormatTime(id.Time())).
		Add("machine", hex.EncodeToString(id.Machine())).
		Add("pid", int(id.Pid())).
		Add("counter", int(id.Counter())), nil
}

// explainKSUID explains a KSUID (segmentio/ksuid): its second and random payload.
func explainKSUID(s string) (*explain.Report, error) {
	id, err := ksuid.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("ksuid: parse %q: %s", s, err)
	}
	return explain.New("ksuid", id.String()).
		Add("time", explain.FormatTime(id.Time())).
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
