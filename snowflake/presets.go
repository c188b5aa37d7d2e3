package snowflake

import (
	"fmt"
	"strings"
	"time"
)

// Presets return the layouts of well-known Snowflake systems. Several of
// them fill all 64 bits of an unsigned or wrapping integer: there the
// preset keeps every field's width and position and gives the timestamp
// one bit less, so that its IDs are exactly the system's IDs for as long as
// those stay below 2^63 (Expires says until when).
//
// Each preset returns a fresh Layout; changing it does not change the
// preset.

// Twitter is the original Snowflake: 41 bits of milliseconds since
// 2010-11-04T01:42:54.657Z, a 5-bit datacenter, a 5-bit worker and a
// 12-bit sequence (twitter-archive/snowflake, IdWorker.scala: twepoch =
// 1288834974657L, datacenterIdBits = workerIdBits = 5, sequenceBits = 12).
// It expires in 2080.
func Twitter() Layout {
	return Layout{
		Name:         "twitter",
		Epoch:        time.UnixMilli(1288834974657).UTC(),
		Unit:         time.Millisecond,
		TimeBits:     41,
		Fields:       []Field{{"datacenter", 5}, {"worker", 5}},
		SequenceBits: 12,
	}
}

// Discord is Discord's Snowflake: milliseconds since 2015-01-01T00:00:00Z
// in bits 63..22, a 5-bit internal worker ID, a 5-bit internal process ID
// and a 12-bit increment (Discord developer docs, Reference, "Snowflakes").
// Discord's timestamp takes 42 bits of an unsigned 64-bit integer; this
// preset's 41 bits give the same IDs until the top bit would be set, in
// 2084.
func Discord() Layout {
	return Layout{
		Name:         "discord",
		Epoch:        time.UnixMilli(1420070400000).UTC(),
		Unit:         time.Millisecond,
		TimeBits:     41,
		Fields:       []Field{{"worker", 5}, {"process", 5}},
		SequenceBits: 12,
	}
}

// ShardingSphere is Apache ShardingSphere's SNOWFLAKE key generator: 41
// bits of milliseconds since 2016-11-01, a 10-bit worker ID and a 12-bit
// sequence (SnowflakeKeyGenerateAlgorithm: EPOCH from Calendar 2016-11-01
// 00:00, WORKER_ID_BITS = 10, SEQUENCE_BITS = 12). ShardingSphere reads the
// epoch in the JVM's time zone; the preset fixes it at UTC. Its default
// clock policy is ClockWait with a 10 ms tolerance. It expires in 2086.
func ShardingSphere() Layout {
	return Layout{
		Name:         "shardingsphere",
		Epoch:        time.Date(2016, 11, 1, 0, 0, 0, 0, time.UTC),
		Unit:         time.Millisecond,
		TimeBits:     41,
		Fields:       []Field{{"worker", 10}},
		SequenceBits: 12,
	}
}

// CustomUUID is the CustomUUID class of the survey of unique-ID schemes:
// milliseconds since Twitter's epoch, a 3-bit region, a 10-bit worker and a
// 10-bit sequence, meant to start each tick's sequence at a random 0..9
// (StartRandom). Its 41-bit timestamp shifted left by 23 overflows a Java
// long from 2045; this preset's 40 bits give the same IDs until then.
func CustomUUID() Layout {
	return Layout{
		Name:         "customuuid",
		Epoch:        time.UnixMilli(1288834974657).UTC(),
		Unit:         time.Millisecond,
		TimeBits:     40,
		Fields:       []Field{{"region", 3}, {"worker", 10}},
		SequenceBits: 10,
	}
}

// Instagram is the ID of "Sharding & IDs at Instagram" (Instagram
// Engineering, 2011): milliseconds since our_epoch = 1314220021721
// (2011-08-24T21:07:01.721Z), a 13-bit logical shard ID and a 10-bit
// sequence (nextval % 1024). The PL/pgSQL shifts a 41-bit timestamp left
// by 23, which overflows the bigint in 2046; this preset's 40 bits give the
// same IDs until then.
func Instagram() Layout {
	return Layout{
		Name:         "instagram",
		Epoch:        time.UnixMilli(1314220021721).UTC(),
		Unit:         time.Millisecond,
		TimeBits:     40,
		Fields:       []Field{{"shard", 13}},
		SequenceBits: 10,
	}
}

// Baidu is Baidu uid-generator's DefaultUidGenerator: 28 bits of seconds
// since 2016-05-20 (epochSeconds from 1463673600000 ms, midnight in
// UTC+8), a 22-bit worker node ID and a 13-bit sequence. It expired on
// 2024-11-20T13:24:16Z, as its source comment warns ("Supports about 8.7
// years until to 2024-11-20 21:24:16"): New refuses it, and Decode still
// reads old IDs.
func Baidu() Layout {
	return Layout{
		Name:         "baidu",
		Epoch:        time.Unix(1463673600, 0).UTC(),
		Unit:         time.Second,
		TimeBits:     28,
		Fields:       []Field{{"worker", 22}},
		SequenceBits: 13,
	}
}

// Sonyflake is Sony's Sonyflake: 39 bits of 10 ms units since
// 2014-09-01T00:00:00Z, then an 8-bit sequence, then a 16-bit machine ID
// in the lowest bits (github.com/sony/sonyflake v1.2.0: BitLenTime = 39,
// BitLenSequence = 8, BitLenMachineID = 16). It expires in 2188.
func Sonyflake() Layout {
	return Layout{
		Name:         "sonyflake",
		Epoch:        time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC),
		Unit:         10 * time.Millisecond,
		TimeBits:     39,
		Fields:       []Field{{"machine", 16}},
		NodeLow:      true,
		SequenceBits: 8,
	}
}

// Simpleflake is SawdustSoftware's simpleflake: milliseconds since
// SIMPLEFLAKE_EPOCH = 946702800 (2000-01-01T05:00:00Z) shifted left by
// SIMPLEFLAKE_TIMESTAMP_SHIFT = 23 over 23 low bits, and no node. Simpleflake
// fills the low bits at random, so two IDs of one millisecond may collide;
// a Generator fills them with its sequence instead, which never collides
// and decodes the same. Its 41-bit timestamp over 23 bits leaves the
// signed range in 2034; this preset's 40 bits give the same IDs until then.
func Simpleflake() Layout {
	return Layout{
		Name:         "simpleflake",
		Epoch:        time.Unix(946702800, 0).UTC(),
		Unit:         time.Millisecond,
		TimeBits:     40,
		SequenceBits: 23,
	}
}

// JSSafe is a layout whose IDs stay at or below 2^53-1, the largest integer
// a JavaScript (ECMAScript) number holds exactly, for its whole lifetime:
// 41 bits of milliseconds since 2025-01-01T00:00:00Z, a 5-bit worker and a
// 7-bit sequence, 53 bits in all. A node issues up to 128,000 IDs a second;
// it expires in 2094.
func JSSafe() Layout {
	return Layout{
		Name:         "jssafe",
		Epoch:        time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Unit:         time.Millisecond,
		TimeBits:     41,
		Fields:       []Field{{"worker", 5}},
		SequenceBits: 7,
	}
}

var presets = []struct {
	name   string
	layout func() Layout
}{
	{"twitter", Twitter},
	{"discord", Discord},
	{"shardingsphere", ShardingSphere},
	{"customuuid", CustomUUID},
	{"instagram", Instagram},
	{"baidu", Baidu},
	{"sonyflake", Sonyflake},
	{"simpleflake", Simpleflake},
	{"jssafe", JSSafe},
}

// PresetNames returns the names Preset accepts, in a fixed order.
func PresetNames() []string {
	names := make([]string, len(presets))
	for i, p := range presets {
		names[i] = p.name
	}
	return names
}

// Preset returns the preset layout called name, ignoring case.
func Preset(name string) (Layout, error) {
	for _, p := range presets {
		if strings.EqualFold(p.name, name) {
			return p.layout(), nil
		}
	}
	return Layout{}, fmt.Errorf("%w: preset %q, want one of %s", ErrInvalid, name, strings.Join(PresetNames(), ", "))
}
