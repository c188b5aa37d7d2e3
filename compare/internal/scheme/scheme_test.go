package scheme

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
	"github.com/sony/sonyflake"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSelect(t *testing.T) {
	t.Parallel()
	var all []string // every scheme but those made for shards, which a run with shards adds
	for _, s := range Schemes() {
		all = append(all, s.Name)
	}
	tests := []struct {
		list    string
		want    []string
		wantErr string
	}{
		{list: "", want: all},
		{list: "all", want: all},
		{list: " ALL ", want: all},
		{list: "counter,uuidv4", want: []string{"counter", "uuidv4"}},
		{list: "UUIDv4, counter", want: []string{"uuidv4", "counter"}},
		{list: "ksuid,ksuid,KSUID", want: []string{"ksuid"}},
		{list: "bitreversed,counter", want: []string{"bitreversed", "counter"}},
		{list: "uuidv5", wantErr: `compare: unknown scheme "uuidv5", want one of counter, `},
		{list: "counter,,uuidv4", wantErr: `compare: unknown scheme: empty name in "counter,,uuidv4"`},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			t.Parallel()
			got, err := Select(tt.list)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrUnknownScheme)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, s := range got {
				names = append(names, s.Name)
			}
			assert.Equal(t, tt.want, names)
		})
	}
}

func TestRegistryOrder(t *testing.T) {
	t.Parallel()
	schemes := Schemes()
	require.NotEmpty(t, schemes)
	assert.Equal(t, Baseline, schemes[0].Kind, "the baseline comes first")
	seen := map[string]bool{}
	for i, s := range schemes {
		assert.False(t, seen[s.Name], "%s registered twice", s.Name)
		seen[s.Name] = true
		if i > 0 {
			rank := map[Kind]int{Baseline: 0, Ours: 1, Peer: 2}
			assert.LessOrEqual(t, rank[schemes[i-1].Kind], rank[s.Kind], "%s out of kind order", s.Name)
		}
		if s.Kind == Peer {
			assert.NotEmpty(t, s.Module, "%s: a peer names its module", s.Name)
		}
	}
}

// TestGenerators checks every scheme's generators, one and several
// writers: key length, uniqueness across writers, and strict order for a
// single generator of a scheme whose design says ordered.
func TestGenerators(t *testing.T) {
	t.Parallel()
	const n = 3000
	for _, s := range Schemes() {
		for _, mode := range []struct {
			name string
			new  func(int) ([]Generator, error)
		}{{"New", s.New}, {"Keys", s.Keys}} {
			if mode.new == nil {
				continue
			}
			t.Run(s.Name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				d := s.Design()
				assert.Equal(t, s.KeyLen*8, d.Bits, "design bits and key length disagree")
				for _, writers := range []int{1, 3} {
					gens, err := mode.new(writers)
					require.NoError(t, err)
					t.Cleanup(func() { assert.NoError(t, CloseGenerators(gens)) })
					require.Len(t, gens, writers)
					keys, err := Generate(gens, s.KeyLen, n, nil)
					require.NoError(t, err)
					require.Equal(t, n, keys.N())
					seen := make(map[string]int, n)
					for i := range n {
						k := string(keys.At(i))
						if j, dup := seen[k]; dup {
							t.Fatalf("%d writers: key %d repeats key %d: %x", writers, i, j, k)
						}
						seen[k] = i
						if writers == 1 && d.Ordered && i > 0 {
							require.Positive(t, bytes.Compare(keys.At(i), keys.At(i-1)), "key %d not above key %d", i, i-1)
						}
					}
					assert.LessOrEqual(t, bitLen(keys.At(0)), d.MaxBits, "key above the design's MaxBits")
				}
			})
		}
	}
}

func TestGeneratorsConcurrent(t *testing.T) {
	t.Parallel()
	// Speed is measured with goroutines sharing writer 0; every generator
	// must be safe for that (the race detector checks the rest).
	for _, s := range Schemes() {
		if s.Design().PerSecond != 0 && s.Design().PerSecond < 100_000 {
			continue // rate-capped: too slow to share meaningfully here
		}
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			gens, err := s.New(1)
			require.NoError(t, err)
			t.Cleanup(func() { assert.NoError(t, CloseGenerators(gens)) })
			_, _, err = runParallel(gens[0], s.KeyLen, 2000, 4)
			require.NoError(t, err)
		})
	}
}

func TestSonyflakeKeys(t *testing.T) {
	t.Parallel()
	before := time.Now()
	gens, err := sonyflakeKeys(2)
	after := time.Now()
	require.NoError(t, err)
	decode := func(g Generator) map[string]uint64 {
		b, err := g.Next(nil)
		require.NoError(t, err)
		return sonyflake.Decompose(binary.BigEndian.Uint64(b))
	}
	first := decode(gens[1])
	assert.Equal(t, uint64(1), first["machine-id"])
	assert.Equal(t, uint64(0), first["sequence"])
	assert.Equal(t, uint64(0), first["msb"])
	// The simulation starts at the tick that was current while
	// sonyflakeKeys ran: it begins less than a tick before that call and
	// not after it returned.
	tick := sonyflakeEpoch.Add(time.Duration(first["time"]) * sonyflakeUnit())
	assert.True(t, tick.After(before.Add(-sonyflakeUnit())) && !tick.After(after),
		"simulation starts at the current tick: tick %v, call from %v to %v", tick, before, after)

	// The rest of the first tick, then the next tick from sequence 0.
	for i := 1; i < 1<<sonyflake.BitLenSequence; i++ {
		p := decode(gens[1])
		require.Equal(t, first["time"], p["time"])
		require.Equal(t, uint64(i), p["sequence"])
	}
	next := decode(gens[1])
	assert.Equal(t, first["time"]+1, next["time"])
	assert.Equal(t, uint64(0), next["sequence"])

	// Writer 0 runs its own sequence on the same simulated clock.
	other := decode(gens[0])
	assert.Equal(t, first["time"], other["time"])
	assert.Equal(t, uint64(0), other["machine-id"])

	// The real library agrees on the layout: an ID it issues now decodes
	// to about the same tick.
	real, err := sonyflakeScheme.New(1)
	require.NoError(t, err)
	got := decode(real[0])
	assert.InDelta(t, float64(first["time"]), float64(got["time"]), float64(time.Second/sonyflakeUnit()))
}

func TestDesign(t *testing.T) {
	t.Parallel()
	day := func(y int, m time.Month, d int) string {
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
	}
	tests := []struct {
		name      string
		int63     bool
		rate      string
		lifetime  string
		timeOrder string
		random    int
	}{
		{"counter", true, "no limit", "2^63-1 IDs/generator", "no (counter order)", 0},
		{"traceid", true, "4,194,303", "wraps every 388.4 days", "1s, within a wrap", 0},
		{"decimalid", true, "no limit", "no time field", "no (counter order)", 0},
		{"snowflake", true, "4,096,000", "until " + day(2080, 7, 10), "1ms", 0},
		{"objectid", false, "16,777,216", "until " + day(2106, 2, 7), "1s", 0},
		{"uuidv4", false, "no limit", "no time field", "no", 122},
		{"uuidv7", false, "4,096,000", "until " + day(10889, 8, 2), "1ms", 62},
		{"ulid", false, "no limit", "until " + day(10889, 8, 2), "1ms", 80},
		{"xid", false, "16,777,216", "until " + day(2106, 2, 7), "1s", 0},
		{"bwmarrin-snowflake", true, "4,096,000", "until " + day(2080, 7, 10), "1ms", 0},
		{"sonyflake", true, "25,600", "until " + day(2188, 11, 16), "10ms", 0},
		{"ksuid", false, "no limit", "until " + day(2150, 6, 19), "1s", 128},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Lookup(tt.name)
			require.NoError(t, err)
			d := s.Design()
			assert.Equal(t, tt.int63, d.Int63, "Int63")
			assert.False(t, d.JSSafe, "no measured scheme fits 2^53 by layout")
			assert.Equal(t, tt.rate, d.Rate())
			assert.Equal(t, tt.lifetime, d.Lifetime())
			assert.Equal(t, tt.timeOrder, d.TimeOrder())
			assert.Equal(t, tt.random, d.RandomBits)
		})
	}
}

func TestDesignWaits(t *testing.T) {
	t.Parallel()
	// Schemes whose generator waits for the next tick when its allowance
	// runs out; the others borrow time, repeat, or have no limit.
	waits := map[string]bool{"traceid": true, "snowflake": true, "snowflake-jssafe": true, "objectid": true, "bwmarrin-snowflake": true, "sonyflake": true}
	for _, s := range Schemes() {
		d := s.Design()
		assert.Equal(t, waits[s.Name], d.Waits, s.Name)
		if d.Waits {
			assert.Positive(t, d.PerSecond, "%s waits, so it has a rate limit", s.Name)
		}
	}
}

func TestDesignAgreesWithPackages(t *testing.T) {
	t.Parallel()
	l := snowflake.Twitter()
	assert.Equal(t, l.Expires(), twitterScheme.Design().End(), "snowflake end")
	assert.Equal(t, float64(l.Rate()), float64(twitterScheme.Design().PerSecond))
	assert.Equal(t, traceid.Period, traceidScheme.Design().span(), "traceid wrap")
	// bwmarrin/snowflake's default layout is Twitter's.
	bw := bwSnowflakeScheme.Design()
	tw := twitterScheme.Design()
	assert.Equal(t, tw.End(), bw.End())
	assert.Equal(t, tw.PerSecond, bw.PerSecond)
	// flake128's 64-bit millisecond field runs out 2^64 ms after 1970.
	assert.Equal(t, time.Unix(18446744073709551, 616e6).UTC(), flake128Scheme.Design().End(), "flake128 end")
}

func TestDesignWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                  string
		d                     Design
		lifetime, order, rate string
		wantInt63, wantJS     bool
		maxBits               int
	}{
		{
			name:     "wrapping seconds",
			d:        Design{TimeUnit: time.Second, TimeBits: 25, Wraps: true, PerSecond: 4_194_303},
			lifetime: "wraps every 388.4 days", order: "1s, within a wrap", rate: "4,194,303",
		},
		{
			name:     "counter capacity",
			d:        Design{Ordered: true, Capacity: 922_337_202},
			lifetime: "922,337,202 IDs/generator", order: "no (counter order)", rate: "no limit",
		},
		{
			name:     "JS-safe",
			d:        Design{MaxBits: 53},
			lifetime: "no time field", order: "no", rate: "no limit", wantInt63: true, wantJS: true, maxBits: 53,
		},
		{
			name:     "power of two",
			d:        Design{MaxBits: 54, PerSecond: 1 << 60},
			lifetime: "no time field", order: "no", rate: "2^60", wantInt63: true, maxBits: 54,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := tt.d
			if tt.maxBits != 0 {
				d = FromMaxBits(d)
			}
			assert.Equal(t, tt.lifetime, d.Lifetime())
			assert.Equal(t, tt.order, d.TimeOrder())
			assert.Equal(t, tt.rate, d.Rate())
			assert.Equal(t, tt.wantInt63, d.Int63)
			assert.Equal(t, tt.wantJS, d.JSSafe)
		})
	}
}

func TestGenerateKeyLength(t *testing.T) {
	t.Parallel()
	short := GenFunc(func(dst []byte) ([]byte, error) { return append(dst, 1, 2, 3), nil })
	_, err := Generate([]Generator{short}, 8, 10, nil)
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrKey)
	assert.Contains(t, err.Error(), "3-byte key, want 8")

	boom := errors.New("boom")
	failing := GenFunc(func(dst []byte) ([]byte, error) { return dst, boom })
	_, err = Generate([]Generator{short, failing}, 3, 10, nil)
	assert.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), "writer 1, key 1")
}

// The JS-safe Snowflake row fits 2^53 by layout, as the preset says.
func TestDesignJSSafe(t *testing.T) {
	t.Parallel()
	s, err := Lookup("snowflake-jssafe")
	require.NoError(t, err)
	d := s.Design()
	l := snowflake.JSSafe()
	assert.True(t, d.JSSafe)
	assert.True(t, d.Int63)
	assert.Equal(t, 53, d.MaxBits)
	assert.Equal(t, "128,000", d.Rate())
	assert.Equal(t, "until "+l.Expires().Format("2006-01-02"), d.Lifetime())
	assert.False(t, d.Dense)
}
