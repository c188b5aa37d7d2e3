package snowflake

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// presetWidths is each preset's documented bit widths and epoch, as its
// system describes them (see the preset's doc comment for the source).
var presetWidths = []struct {
	name     string
	epoch    time.Time
	unit     time.Duration
	timeBits int
	fields   []Field
	nodeLow  bool
	seqBits  int
	expires  time.Time
}{
	{"twitter", time.UnixMilli(1288834974657), time.Millisecond, 41, []Field{{"datacenter", 5}, {"worker", 5}}, false, 12,
		time.Date(2080, 7, 10, 17, 30, 30, 209e6, time.UTC)},
	{"discord", time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC), time.Millisecond, 41, []Field{{"worker", 5}, {"process", 5}}, false, 12,
		time.Date(2084, 9, 6, 15, 47, 35, 552e6, time.UTC)},
	{"shardingsphere", time.Date(2016, 11, 1, 0, 0, 0, 0, time.UTC), time.Millisecond, 41, []Field{{"worker", 10}}, false, 12,
		time.Date(2086, 7, 8, 15, 47, 35, 552e6, time.UTC)},
	{"customuuid", time.UnixMilli(1288834974657), time.Millisecond, 40, []Field{{"region", 3}, {"worker", 10}}, false, 10,
		time.Date(2045, 9, 6, 21, 36, 42, 433e6, time.UTC)},
	{"instagram", time.UnixMilli(1314220021721), time.Millisecond, 40, []Field{{"shard", 13}}, false, 10,
		time.Date(2046, 6, 27, 17, 0, 49, 497e6, time.UTC)},
	{"baidu", time.Date(2016, 5, 19, 16, 0, 0, 0, time.UTC), time.Second, 28, []Field{{"worker", 22}}, false, 13,
		time.Date(2024, 11, 20, 13, 24, 16, 0, time.UTC)},
	{"sonyflake", time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC), 10 * time.Millisecond, 39, []Field{{"machine", 16}}, true, 8,
		time.Date(2188, 11, 16, 3, 28, 58, 880e6, time.UTC)},
	{"simpleflake", time.Date(2000, 1, 1, 5, 0, 0, 0, time.UTC), time.Millisecond, 40, nil, false, 23,
		time.Date(2034, 11, 4, 0, 53, 47, 776e6, time.UTC)},
	{"jssafe", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Millisecond, 41, []Field{{"worker", 5}}, false, 7,
		time.Date(2094, 9, 7, 15, 47, 35, 552e6, time.UTC)},
}

func TestPresetWidthsAndEpochs(t *testing.T) {
	t.Parallel()
	require.Equal(t, len(presetWidths), len(PresetNames()), "every preset is in the table")
	for i, w := range presetWidths {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, w.name, PresetNames()[i])
			l, err := Preset(w.name)
			require.NoError(t, err)
			require.NoError(t, l.Validate())
			assert.Equal(t, w.name, l.Name)
			assert.True(t, w.epoch.Equal(l.Epoch), "epoch %v, want %v", l.Epoch, w.epoch)
			assert.Equal(t, w.unit, l.Unit)
			assert.Equal(t, w.timeBits, l.TimeBits)
			assert.Equal(t, w.fields, l.Fields)
			assert.Equal(t, w.nodeLow, l.NodeLow)
			assert.Equal(t, w.seqBits, l.SequenceBits)
			assert.LessOrEqual(t, l.Bits(), 63)
			assert.Equal(t, w.expires, l.Expires())
		})
	}
}

func TestPresetLookup(t *testing.T) {
	t.Parallel()
	l, err := Preset("Twitter")
	require.NoError(t, err, "names ignore case")
	assert.Equal(t, Twitter(), l)

	_, err = Preset("snowflak")
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), `preset "snowflak", want one of twitter, discord,`)

	l.Fields[0].Bits = 9
	assert.Equal(t, 5, Twitter().Fields[0].Bits, "a preset is a fresh copy")
}

// vectors are IDs issued by (or computed exactly as) each system: time,
// node fields and sequence -> ID.
var vectors = []struct {
	name   string
	layout func() Layout
	time   time.Time
	node   map[string]int64
	seq    int64
	id     int64
}{
	// The Tweet of the sample Tweet object in Twitter's API reference:
	// id 1050118621198921728, created_at "Wed Oct 10 20:19:24 +0000 2018".
	// github.com/bwmarrin/snowflake reads the same node (347 = 10<<5 | 27).
	{"twitter tweet", Twitter, time.UnixMilli(1539202764211), map[string]int64{"datacenter": 10, "worker": 27}, 0, 1050118621198921728},
	{"twitter first", Twitter, time.UnixMilli(1288834974657), map[string]int64{"datacenter": 0, "worker": 0}, 1, 1},
	{"twitter last", Twitter, time.UnixMilli(1288834974657 + 1<<41 - 1), map[string]int64{"datacenter": 31, "worker": 31}, 4095, 1<<63 - 1},
	// Discord's documented example: 175928847299117063 is
	// 2016-04-30 11:18:25.796 UTC, worker 1, process 0, increment 7.
	{"discord docs", Discord, time.Date(2016, 4, 30, 11, 18, 25, 796e6, time.UTC), map[string]int64{"worker": 1, "process": 0}, 7, 175928847299117063},
	// ShardingSphere's SnowflakeKeyGenerateAlgorithmTest expects these keys
	// 1, 2 and 6 ms after its epoch (worker 0).
	{"shardingsphere 1ms", ShardingSphere, time.Date(2016, 11, 1, 0, 0, 0, 1e6, time.UTC), map[string]int64{"worker": 0}, 0, 4194304},
	{"shardingsphere 2ms", ShardingSphere, time.Date(2016, 11, 1, 0, 0, 0, 2e6, time.UTC), map[string]int64{"worker": 0}, 1, 8388609},
	{"shardingsphere 6ms", ShardingSphere, time.Date(2016, 11, 1, 0, 0, 0, 6e6, time.UTC), map[string]int64{"worker": 0}, 1, 25165825},
	{"shardingsphere worker", ShardingSphere, time.Date(2016, 11, 1, 0, 0, 0, 6e6, time.UTC), map[string]int64{"worker": 1023}, 4095, 25165824 + 1023<<12 + 4095},
	// CustomUUID's formula: (ts - twepoch) << 23 | region << 20 | worker << 10 | sequence.
	{"customuuid", CustomUUID, time.Date(2021, 10, 16, 14, 3, 32, 123e6, time.UTC), map[string]int64{"region": 2, "worker": 513}, 7, 2898750917554209799},
	// The worked example of "Sharding & IDs at Instagram": 1387263000 ms
	// into the epoch, logical shard 1341 (31341 % 2000), sequence 905
	// (5001 % 1024).
	{"instagram blog", Instagram, time.UnixMilli(1314220021721 + 1387263000), map[string]int64{"shard": 1341}, 905, 11637205501278089},
	// DefaultUidGenerator's BitsAllocator: deltaSeconds << 35 | workerId << 13 | sequence.
	{"baidu", Baidu, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), map[string]int64{"worker": 12345}, 77, 3922617683354787917},
	// github.com/sony/sonyflake v1.2.0 Decompose(494152093532492340) =
	// time 29453760000, sequence 5, machine-id 4660.
	{"sonyflake", Sonyflake, time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), map[string]int64{"machine": 0x1234}, 5, 494152093532492340},
	// simpleflake's test_simpleflake_parts_timestamp: epoch + 1234321 s,
	// with random bits 5.
	{"simpleflake", Simpleflake, time.Unix(946702800+1234321, 0), map[string]int64{}, 5, 1234321000<<23 | 5},
	// The last ID of the JS-safe layout is 2^53-1.
	{"jssafe last", JSSafe, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).Add((1<<41 - 1) * time.Millisecond), map[string]int64{"worker": 31}, 127, 1<<53 - 1},
	{"jssafe first", JSSafe, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), map[string]int64{"worker": 1}, 0, 1 << 7},
}

func TestVectors(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			l := v.layout()
			got, err := l.Compose(Parts{Time: v.time, Node: v.node, Sequence: v.seq})
			require.NoError(t, err)
			assert.Equal(t, ID(v.id), got)

			p, err := l.Decode(ID(v.id))
			require.NoError(t, err)
			assert.True(t, v.time.Equal(p.Time), "time %v, want %v", p.Time, v.time)
			assert.Equal(t, time.UTC, p.Time.Location())
			assert.Equal(t, v.time.Sub(l.Epoch)/l.Unit, time.Duration(p.Tick))
			assert.Equal(t, v.seq, p.Sequence)
			want := map[string]int64{}
			for _, f := range l.Fields {
				want[f.Name] = v.node[f.Name]
			}
			assert.Equal(t, want, p.Node)
			assert.True(t, v.time.Equal(ID(v.id).Time(l)))

			back, err := l.Compose(p)
			require.NoError(t, err)
			assert.Equal(t, ID(v.id), back, "Compose(Decode(id)) == id")
		})
	}
}

func TestComposeTruncatesToTick(t *testing.T) {
	t.Parallel()
	l := Sonyflake()
	at := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	a, err := l.Compose(Parts{Time: at, Sequence: 1})
	require.NoError(t, err)
	b, err := l.Compose(Parts{Time: at.Add(9999 * time.Microsecond), Sequence: 1})
	require.NoError(t, err)
	assert.Equal(t, a, b, "times within one 10 ms tick compose alike")
	c, err := l.Compose(Parts{Time: at.Add(10 * time.Millisecond), Sequence: 1})
	require.NoError(t, err)
	assert.Equal(t, a+1<<24, c)
}

func TestComposeRejects(t *testing.T) {
	t.Parallel()
	tw := Twitter()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name string
		l    Layout
		p    Parts
		msg  string
	}{
		{"before epoch", tw, Parts{Time: tw.Epoch.Add(-time.Millisecond)}, "outside layout twitter's range 2010-11-04 01:42:54.657 +0000 UTC to 2080-07-10 17:30:30.209 +0000 UTC"},
		{"at expiry", tw, Parts{Time: tw.Expires()}, "outside layout twitter's range"},
		{"unknown field", tw, Parts{Time: at, Node: map[string]int64{"wroker": 1}}, `Parts.Node["wroker"]: layout twitter has no such field, want one of datacenter, worker`},
		{"field too big", tw, Parts{Time: at, Node: map[string]int64{"worker": 32}}, `Parts.Node["worker"] = 32, want 0 to 31`},
		{"field negative", tw, Parts{Time: at, Node: map[string]int64{"datacenter": -1}}, `Parts.Node["datacenter"] = -1, want 0 to 31`},
		{"sequence too big", tw, Parts{Time: at, Sequence: 4096}, "Parts.Sequence = 4096, want 0 to 4095"},
		{"sequence negative", tw, Parts{Time: at, Sequence: -1}, "Parts.Sequence = -1, want 0 to 4095"},
		{"zero", tw, Parts{Time: tw.Epoch}, "parts compose to 0"},
		{"invalid layout", Layout{Unit: time.Millisecond}, Parts{Time: at}, "Layout.Epoch"},
		{"tick disagrees", tw, Parts{Time: at, Tick: 5}, "Parts.Tick = 5 but Parts.Time 2026-01-01 00:00:00 +0000 UTC is tick"},
		{"tick too big", tw, Parts{Tick: 1 << 41}, "Parts.Tick = 2199023255552, want 0 to 2199023255551"},
		{"tick negative", tw, Parts{Tick: -1}, "Parts.Tick = -1, want 0 to 2199023255551"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.l.Compose(tt.p)
			require.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		l   Layout
		id  ID
		err error
		msg string
	}{
		{Twitter(), 0, ErrRange, "not an ID: 0, want 1 to 9223372036854775807"},
		{Twitter(), -5, ErrRange, "not an ID: -5"},
		{JSSafe(), 1 << 53, ErrRange, "bits above the 53 that layout jssafe uses are set"},
		{Layout{Epoch: time.Unix(0, 0), Unit: time.Second}, 1, ErrInvalid, "Layout.TimeBits = 0"},
	} {
		_, err := tt.l.Decode(tt.id)
		require.ErrorIs(t, err, tt.err)
		assert.Contains(t, err.Error(), tt.msg)
		assert.True(t, tt.id.Time(tt.l).IsZero())
	}
}

func TestValidateNamesTheField(t *testing.T) {
	t.Parallel()
	valid := func(change func(*Layout)) Layout {
		l := Twitter()
		change(&l)
		return l
	}
	for _, tt := range []struct {
		name string
		l    Layout
		msg  string
	}{
		{"epoch zero", valid(func(l *Layout) { l.Epoch = time.Time{} }), "Layout.Epoch = 0001-01-01 00:00:00 +0000 UTC, want 1970-01-01 to 2200-01-01"},
		{"epoch late", valid(func(l *Layout) { l.Epoch = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC) }), "Layout.Epoch"},
		{"unit zero", valid(func(l *Layout) { l.Unit = 0 }), "Layout.Unit = 0s, want 1µs to 24h0m0s"},
		{"unit long", valid(func(l *Layout) { l.Unit = 25 * time.Hour }), "Layout.Unit = 25h0m0s"},
		{"time bits zero", valid(func(l *Layout) { l.TimeBits = 0 }), "Layout.TimeBits = 0, want 1 to 63"},
		{"time bits 64", valid(func(l *Layout) { l.TimeBits = 64 }), "Layout.TimeBits = 64, want 1 to 63"},
		{"sequence negative", valid(func(l *Layout) { l.SequenceBits = -1 }), "Layout.SequenceBits = -1, want 0 to 62"},
		{"field bits zero", valid(func(l *Layout) { l.Fields[1].Bits = 0 }), `Layout.Fields[1] ("worker").Bits = 0, want 1 to 62`},
		{"field name empty", valid(func(l *Layout) { l.Fields[0].Name = "" }), `Layout.Fields[0].Name = "", want 1 to 32 letters`},
		{"field name comma", valid(func(l *Layout) { l.Fields[0].Name = "a,b" }), `Layout.Fields[0].Name = "a,b"`},
		{"field name twice", valid(func(l *Layout) { l.Fields[1].Name = "datacenter" }), `Layout.Fields[1].Name = "datacenter", want a name no other field has`},
		{"too many fields", valid(func(l *Layout) {
			l.Fields = nil
			for _, n := range strings.Split("abcdefghi", "") {
				l.Fields = append(l.Fields, Field{n, 1})
			}
		}), "Layout.Fields has 9 fields, want at most 8"},
		{"sum 64", valid(func(l *Layout) { l.TimeBits = 42 }), "Layout bits sum to 64 (time 42 + node 10 + sequence 12), want at most 63"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.Validate()
			require.ErrorIs(t, err, ErrInvalid)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestLayoutFigures(t *testing.T) {
	t.Parallel()
	tw := Twitter()
	assert.Equal(t, 10, tw.NodeBits())
	assert.Equal(t, 63, tw.Bits())
	assert.Equal(t, int64(4096), tw.PerTick())
	assert.InDelta(t, 4_096_000, tw.Rate(), 1e-6)
	assert.InDelta(t, 25_600, Sonyflake().Rate(), 1e-6)
	assert.Equal(t, "twitter: 41 x 1ms since 2010-11-04T01:42:54.657Z | datacenter 5 | worker 5 | sequence 12", tw.String())
	assert.Equal(t, "sonyflake: 39 x 10ms since 2014-09-01T00:00:00Z | sequence 8 | machine 16", Sonyflake().String())
	assert.Equal(t, "1 x 24h0m0s since 1970-01-01T00:00:00Z | sequence 0",
		Layout{Epoch: time.Unix(0, 0), Unit: 24 * time.Hour, TimeBits: 1}.String())

	long := Layout{Epoch: time.Unix(0, 0), Unit: 24 * time.Hour, TimeBits: 63}
	require.NoError(t, long.Validate())
	assert.True(t, long.Expires().After(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)), "expiry beyond int64 nanoseconds does not overflow")
	p, err := long.Decode(1<<63 - 1)
	require.NoError(t, err)
	assert.True(t, p.Time.After(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)))
}

// Every JS-safe ID, up to the last tick of its lifetime, is exactly
// representable as a JavaScript number.
func TestJSSafeStaysBelow2To53(t *testing.T) {
	t.Parallel()
	l := JSSafe()
	last, err := l.Compose(Parts{Time: l.Expires().Add(-time.Nanosecond), Node: map[string]int64{"worker": 31}, Sequence: l.PerTick() - 1})
	require.NoError(t, err)
	assert.Equal(t, ID(1<<53-1), last)
	assert.Equal(t, int64(last), int64(float64(last)), "float64 round trip")
	_, err = l.Compose(Parts{Time: l.Expires(), Sequence: 0})
	require.ErrorIs(t, err, ErrInvalid, "no time past the lifetime composes")
}

// The zero Layout is Twitter's in every method, as in Options.
func TestZeroLayoutIsTwitter(t *testing.T) {
	t.Parallel()
	var zero Layout
	tw := Twitter()
	require.NoError(t, zero.Validate())
	assert.Equal(t, tw.String(), zero.String())
	assert.Equal(t, tw.Bits(), zero.Bits())
	assert.Equal(t, tw.Expires(), zero.Expires())
	id := MustParse("1541815603606036480")
	want, err := tw.Decode(id)
	require.NoError(t, err)
	got, err := zero.Decode(id)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, want.Time, id.Time(zero))
	back, err := zero.Compose(got)
	require.NoError(t, err)
	assert.Equal(t, id, back)
	lo, hi, err := zero.NodeRange(map[string]int64{"datacenter": 1})
	require.NoError(t, err)
	assert.Equal(t, [2]int64{32, 63}, [2]int64{lo, hi})
}

// Compose and Decode are inverses for every preset, by Time, by Tick, or
// by both, and the accessors agree with Decode.
func TestComposeDecodeSymmetric(t *testing.T) {
	t.Parallel()
	for _, name := range PresetNames() {
		l, err := Preset(name)
		require.NoError(t, err)
		for _, v := range []uint64{1, 1 << 20, 1<<uint(l.Bits()) - 1, 0x5a5a5a5a5a5a5a5a & (1<<uint(l.Bits()) - 1)} {
			id := ID(v)
			p, err := l.Decode(id)
			require.NoError(t, err, "%s %d", name, id)
			for _, q := range []Parts{p, {Tick: p.Tick, Node: p.Node, Sequence: p.Sequence}, {Time: p.Time, Node: p.Node, Sequence: p.Sequence}} {
				back, err := l.Compose(q)
				require.NoError(t, err, "%s %d", name, id)
				assert.Equal(t, id, back, "%s: Compose(Decode(%d))", name, id)
			}
			assert.Equal(t, p.Time, id.Time(l))
			assert.Equal(t, p.Tick, id.Tick(l))
			assert.Equal(t, p.Node, id.Node(l))
			assert.Equal(t, p.Sequence, id.Sequence(l))
		}
	}
}
