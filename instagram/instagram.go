// Package instagram ships the next_id() function of "Sharding & IDs at
// Instagram" (Instagram Engineering, 2011) as PL/pgSQL, so that
// PostgreSQL itself issues Instagram's IDs, as the default of a table's
// key:
//
//	63 | 62 ........... 23 | 22 ....... 10 | 9 ........ 0
//	 0 | ms since epoch 40 |   shard (13)  | sequence (10)
//
// The epoch is Instagram's our_epoch, 1314220021721 ms
// (2011-08-24T21:07:01.721Z); the sequence is nextval of a PostgreSQL
// sequence modulo 1024. The SQL is generated from [snowflake.Instagram],
// so the IDs decode with that preset and never collide with IDs a Go
// snowflake.Generator issues on the same preset for another shard.
//
// One difference from the post: its function shifts a 41-bit timestamp
// left by 23, which sets the sign bit of the bigint from 2046 on. The
// preset, like every preset here, keeps IDs in 63 bits by giving the
// timestamp one bit less (40 bits, until 2046-06-27), and the function
// here raises an error outside those 40 bits instead of returning a
// negative or wrapped ID. Until then its IDs are exactly the post's.
//
// # Caveats
//
// These are the design's, and the function keeps them:
//
//   - a shard issues at most 1024 IDs per millisecond: the 1025th call in
//     one millisecond repeats the first call's ID (a primary key then
//     refuses the row). At a few microseconds per call one session stays
//     far below that; many sessions inserting into one shard at full speed
//     may not.
//   - the time is the server's clock_timestamp(): a clock stepped back can
//     repeat the IDs of the milliseconds it steps back over, if the
//     sequence comes round to the same values modulo 1024.
package instagram

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
	"github.com/idkit/idkit/snowflake"
)

// Limits and defaults of Options.
const (
	MaxShard        = 1<<13 - 1
	DefaultSchema   = "public"
	DefaultSequence = "next_id_seq"
)

// ErrInvalid reports options outside their range; the message names the
// field and the range.
var ErrInvalid = errkind.New(idkit.ErrInvalid, "instagram: invalid option")

// Options choose where the function goes and which shard it stamps.
type Options struct {
	// Shard is the logical shard, 0 to MaxShard.
	Shard int
	// Schema holds the function and its sequence; empty means
	// DefaultSchema. Instagram keeps each logical shard in a schema of its
	// own (insta5 for shard 5). A lower-case identifier: letters, digits
	// and underscores, not starting with a digit, up to 63 bytes.
	Schema string
	// Sequence is the sequence the function draws from, created if
	// missing; empty means DefaultSequence. The post uses the table's own
	// id sequence (table_id_seq), which works the same.
	Sequence string
}

var ident = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`) })

func (o *Options) check() error {
	if o.Shard < 0 || o.Shard > MaxShard {
		return fmt.Errorf("%w: Options.Shard = %d, want 0 to %d", ErrInvalid, o.Shard, MaxShard)
	}
	if o.Schema == "" {
		o.Schema = DefaultSchema
	}
	if o.Sequence == "" {
		o.Sequence = DefaultSequence
	}
	for _, f := range []struct{ name, v string }{{"Schema", o.Schema}, {"Sequence", o.Sequence}} {
		if !ident().MatchString(f.v) {
			return fmt.Errorf("%w: Options.%s = %q, want 1 to 63 lower-case letters, digits or underscores, not starting with a digit", ErrInvalid, f.name, f.v)
		}
	}
	return nil
}

// Layout returns the layout of the function's IDs: snowflake.Instagram.
func Layout() snowflake.Layout { return snowflake.Instagram() }

// SQL returns the statements that install next_id() for o: the schema and
// the sequence if missing, and the function, replacing an earlier one.
// Run them in one transaction or one psql script.
func SQL(o Options) (string, error) {
	if err := o.check(); err != nil {
		return "", err
	}
	l := Layout()
	shard := l.Fields[0]
	if len(l.Fields) != 1 || shard.Name != "shard" {
		return "", fmt.Errorf("instagram: the snowflake preset has node fields %v, want one field named shard", l.Fields)
	}
	seqBits := l.SequenceBits
	timeShift := shard.Bits + seqBits
	limit := int64(1) << l.TimeBits
	var b strings.Builder
	r := strings.NewReplacer(
		"{schema}", o.Schema,
		"{seq}", o.Sequence,
		"{shard}", fmt.Sprint(o.Shard),
		"{epoch}", fmt.Sprint(l.Epoch.UnixMilli()),
		"{epochText}", l.Epoch.Format("2006-01-02T15:04:05.000Z"),
		"{expires}", l.Expires().Format("2006-01-02T15:04:05.000Z"),
		"{perTick}", fmt.Sprint(1<<seqBits),
		"{timeBits}", fmt.Sprint(l.TimeBits),
		"{shardBits}", fmt.Sprint(shard.Bits),
		"{seqBits}", fmt.Sprint(seqBits),
		"{timeShift}", fmt.Sprint(timeShift),
		"{shardShift}", fmt.Sprint(seqBits),
		"{limit}", fmt.Sprint(limit),
	)
	r.WriteString(&b, template)
	return b.String(), nil
}

const template = `-- next_id() of "Sharding & IDs at Instagram" for logical shard {shard}.
-- bit 63: 0 | {timeBits} bits: ms since {epochText} | {shardBits} bits: shard | {seqBits} bits: nextval % {perTick}
-- Decodes with idkit's snowflake preset "instagram". Raises an error from
-- {expires} on, where the post's 41-bit version would set the sign bit.
-- At most {perTick} IDs per millisecond per shard.
CREATE SCHEMA IF NOT EXISTS {schema};
CREATE SEQUENCE IF NOT EXISTS {schema}.{seq};
CREATE OR REPLACE FUNCTION {schema}.next_id(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := {epoch};
    seq_id bigint;
    now_millis bigint;
    shard_id int := {shard};
BEGIN
    SELECT nextval('{schema}.{seq}') % {perTick} INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    IF now_millis < our_epoch OR now_millis - our_epoch >= {limit} THEN
        RAISE EXCEPTION 'next_id: clock_timestamp() % is outside % to %, the {timeBits}-bit time field',
            clock_timestamp(), '{epochText}', '{expires}';
    END IF;
    result := (now_millis - our_epoch) << {timeShift};
    result := result | (shard_id << {shardShift});
    result := result | (seq_id);
END;
$$ LANGUAGE PLPGSQL;
-- Use it as a key's default:
--   CREATE TABLE {schema}.our_table (id bigint NOT NULL DEFAULT {schema}.next_id() PRIMARY KEY, ...);
`
