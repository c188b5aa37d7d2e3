package compare

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/idkit/idkit/compare/internal/report"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// likeN is the keys per load of the hand-built --like reports.
const likeN = 10_000

// likeLoad is one scheme of a hand-built --like report: its copy's index
// sizes after the load, from which the per-table figures follow as the
// engines compute them, and the server-wide figures, which a test may set.
type likeLoad struct {
	name      string
	kind      scheme.Kind
	design    scheme.Design
	ns        float64
	colType   string
	keyBytes  int
	random    bool
	pkBytes   float64 // the primary key (InnoDB: the clustered index with the rows)
	secondary float64 // every other index
	leafPages float64 // of the primary key
	server    map[string]float64
}

// metrics returns the figures a --like load of l reports.
func (l likeLoad) metrics() map[string]float64 {
	m := map[string]float64{
		"index_bytes":             l.pkBytes,
		"index_bytes_per_key":     l.pkBytes / likeN,
		"secondary_index_bytes":   l.secondary,
		"all_index_bytes":         l.pkBytes + l.secondary,
		"all_index_bytes_per_key": (l.pkBytes + l.secondary) / likeN,
		"leaf_pages":              l.leafPages,
		"leaf_pages_per_1000":     l.leafPages * 1000 / likeN,
	}
	for k, v := range l.server {
		m[k] = v
	}
	return m
}

// likeReport builds the report of a --like run on engine with one writer,
// as Run would, without a server.
func likeReport(eng string, table engine.LikeTable, loads ...likeLoad) *report.Report {
	table.Engine = eng
	r := &report.Report{
		Config:  report.Config{N: likeN, Writers: 1, Like: table.Name},
		Engines: []engine.Info{{Name: engine.Bbolt}, {Name: eng}},
		Like:    []engine.LikeTable{table},
	}
	for _, l := range loads {
		kind := l.kind
		if kind == "" {
			kind = scheme.Ours
		}
		keyBytes := l.keyBytes
		if keyBytes == 0 {
			keyBytes = 8
		}
		r.Schemes = append(r.Schemes, report.Result{
			Name: l.name, Kind: kind, Design: l.design,
			DesignText: report.DesignText{Rate: l.design.Rate()},
			Speed:      scheme.Speed{NsPerID: l.ns},
			Runs: []report.WriterRun{{
				Writers:    1,
				Size:       scheme.Size{KeyBytes: keyBytes},
				Randomness: scheme.Randomness{Tested: true, Random: l.random},
				Engines:    []engine.Figures{{Engine: eng, ColumnType: l.colType, Metrics: l.metrics()}},
			}},
		})
	}
	return r
}

// identityTable is a PostgreSQL table keyed by a bigint identity, with two
// foreign keys pointing at it.
func identityTable() engine.LikeTable {
	return engine.LikeTable{
		Name: "public.users", Key: "id", KeyType: "bigint", KeySequence: "identity", Rows: 1_000_000,
		ReferencedBy: []string{"public.orders(user_id)", "public.sessions(user_id)"},
	}
}

// likeSchemes are a baseline, a node-based 64-bit scheme, a UUIDv7 (its
// InnoDB leaf pages those of an ordered 16-byte key in rows of 41 bytes),
// a dense block allocator and two schemes that call a central sequence
// per ID, each with plausible figures.
func likeSchemes(colType64, colType128 string, server func(scale float64) map[string]float64) []likeLoad {
	dense := scheme.Design{Bits: 64, MaxBits: 63, Int63: true, Ordered: true, Dense: true}
	return []likeLoad{
		{name: "counter", kind: scheme.Baseline, design: scheme.Design{Bits: 64, MaxBits: 63, Int63: true, Dense: true, Note: "needs one central sequence"},
			ns: 2, colType: colType64, pkBytes: 240_000, secondary: 300_000, leafPages: 25, server: server(1)},
		{name: "traceid", design: scheme.Design{Bits: 64, MaxBits: 63, Int63: true, TimeUnit: 1e9, NodeBits: 10},
			ns: 20, colType: colType64, pkBytes: 250_000, secondary: 300_000, leafPages: 26, server: server(1.1)},
		{name: "uuidv7", design: scheme.Design{Bits: 128, MaxBits: 128, TimeUnit: 1e6, RandomBits: 62}, random: true,
			ns: 60, colType: colType128, keyBytes: 16, pkBytes: 400_000, secondary: 300_000, leafPages: 30, server: server(1.5)},
		{name: "segment-x", design: dense, ns: 30, colType: colType64, pkBytes: 245_000, secondary: 300_000, leafPages: 25, server: server(1)},
		{name: "segment-x-fetch", design: dense, ns: 90_000, colType: colType64, pkBytes: 245_000, secondary: 300_000, leafPages: 25, server: server(1)},
		{name: "publicid-53", design: scheme.Design{Bits: 64, MaxBits: 53, Int63: true, JSSafe: true}, random: true,
			ns: 500, colType: colType64, pkBytes: 480_000, secondary: 300_000, leafPages: 50, server: server(1.9)},
	}
}

func pgServer(scale float64) map[string]float64 {
	return map[string]float64{"pages_dirtied_per_1000": 10 * scale, "wal_bytes_per_insert": 100 * scale, "key_pages_changed_per_1000": 3 * scale}
}

// myServer are an InnoDB load's write figures on a scratch server: the
// copy's own pages changed per flush interval, and the server-wide pages
// written and redo.
func myServer(scale float64) map[string]float64 {
	return map[string]float64{"pages_changed_per_1000": 9 * scale, "pages_written_per_1000": 10 * scale, "redo_bytes_per_insert": 100 * scale}
}

func ranked(v *report.Verdict) []string {
	var out []string
	for _, p := range v.Ranked {
		out = append(out, p.Scheme)
	}
	return out
}

func rejections(v *report.Verdict) map[string]string {
	out := map[string]string{}
	for _, x := range v.Rejected {
		out[x.Scheme] = x.Reason
	}
	return out
}

// verdictLines returns the verdict's lines of r's table output, the title
// first.
func verdictLines(t *testing.T, r *report.Report) []string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, r.WriteTable(&b))
	out := b.String()
	i := strings.Index(out, "\nVERDICT")
	require.GreaterOrEqual(t, i, 0, out)
	out, _, _ = strings.Cut(out[i+1:], "\n\n")
	return strings.Split(out, "\n")
}

// TestVerdictLikeKeepsSequence: with no need, a bigint sequence is kept on
// the verdict's first line, on PostgreSQL and on InnoDB, and no key change
// is proposed.
func TestVerdictLikeKeepsSequence(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		engine, keyType, seq, col64, col128 string
		server                              func(float64) map[string]float64
	}{
		{engine.Postgres, "bigint", "identity", "bigint", "uuid", pgServer},
		{engine.MySQL, "bigint(20)", "AUTO_INCREMENT", "BIGINT", "BINARY(16)", myServer},
	} {
		t.Run(tt.engine, func(t *testing.T) {
			table := identityTable()
			table.KeyType, table.KeySequence = tt.keyType, tt.seq
			r := likeReport(tt.engine, table, likeSchemes(tt.col64, tt.col128, tt.server)...)
			v, err := r.Decide(report.Need{}, tt.engine)
			require.NoError(t, err)
			require.NotNil(t, v.TableKey)
			assert.True(t, v.TableKey.Keep)
			assert.Empty(t, v.TableKey.RuledOut)
			assert.Equal(t, "id", v.TableKey.Column)
			assert.Equal(t, tt.keyType, v.TableKey.Type)
			assert.Equal(t, tt.seq, v.TableKey.Sequence)
			assert.Nil(t, v.KeyChange, "no change when the key is kept")
			assert.NotEmpty(t, v.Ranked, "the schemes still rank")

			r.Verdict = v
			lines := verdictLines(t, r)
			require.GreaterOrEqual(t, len(lines), 3)
			assert.True(t, strings.HasPrefix(lines[0], "VERDICT"), lines[0])
			assert.Equal(t, "  keep your key id ("+tt.keyType+", "+tt.seq+"): a local sequence (integers numbered in insert order on one server), "+
				"as the counter the figures are measured against, in 8 bytes; "+
				"change it only for a need it fails (fleet, unguessable, sortable), for which the schemes below rank", lines[1])
			assert.Contains(t, lines, "  rejected counter: the baseline the figures are measured against: a local sequence (integers numbered in insert order on one server), as your key id is",
				"the kept key and the baseline in the same words")
			assert.True(t, strings.HasPrefix(lines[2], "  basis: "), lines[2])
			assert.NotContains(t, strings.Join(lines, "\n"), "key change")
		})
	}
}

// TestVerdictLikeNeedRulesOutSequence: fleet and unguessable each rule the
// sequence out on the first line; the schemes rank as they would without
// the table's key, and the key change names the first of them.
func TestVerdictLikeNeedRulesOutSequence(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		need     report.Need
		reason   string
		rejected map[string]string
	}{
		{report.Need{Fleet: true}, "every value comes from one sequence on the server, need fleet", map[string]string{
			"segment-x-fetch": "needs one block reservation in a shared store per ID, need fleet",
			"publicid-53":     "needs one shared counter per ID, need fleet",
		}},
		{report.Need{Unguessable: true}, "each value is the last plus one, need unguessable", map[string]string{
			"traceid":   "IDs can be guessed",
			"segment-x": "IDs can be guessed",
		}},
	} {
		t.Run(tt.need.String(), func(t *testing.T) {
			r := likeReport(engine.Postgres, identityTable(), likeSchemes("bigint", "uuid", pgServer)...)
			v, err := r.Decide(tt.need, engine.Postgres)
			require.NoError(t, err)
			k := v.TableKey
			require.NotNil(t, k)
			assert.False(t, k.Keep)
			require.Len(t, k.RuledOut, 1)
			assert.Contains(t, k.RuledOut[0], tt.reason)
			assert.True(t, strings.HasPrefix(k.Line, "your key id (bigint, identity) is ruled out: "+tt.reason), k.Line)

			got := rejections(v)
			for name, want := range tt.rejected {
				assert.Contains(t, got[name], want, name)
			}
			require.NotEmpty(t, v.Ranked)
			require.NotNil(t, v.KeyChange)
			assert.Equal(t, v.Ranked[0].Scheme, v.KeyChange.Scheme)

			r.Verdict = v
			lines := verdictLines(t, r)
			assert.Equal(t, "  "+k.Line, lines[1], "the key comes first")
			assert.Equal(t, "  "+v.KeyChange.Line, lines[len(lines)-1], "the key change comes last")
		})
	}
	// Under fleet the block allocator ranks, and says what it shares.
	r := likeReport(engine.Postgres, identityTable(), likeSchemes("bigint", "uuid", pgServer)...)
	v, err := r.Decide(report.Need{Fleet: true}, engine.Postgres)
	require.NoError(t, err)
	assert.Contains(t, ranked(v), "segment-x")
	assert.Contains(t, ranked(v), "traceid")
	for _, p := range v.Ranked {
		if p.Scheme == "segment-x" {
			assert.Contains(t, p.Why, "fleet: blocks from one store every machine reaches")
		}
	}
}

// TestVerdictLikeKeyOtherThanSequence: a key that is no sequence is said
// first, never kept, and the first scheme's change follows the ranking.
func TestVerdictLikeKeyOtherThanSequence(t *testing.T) {
	t.Parallel()
	corr := 0.01
	table := engine.LikeTable{Name: "public.events", Key: "id", KeyType: "uuid", KeyCorrelation: &corr}
	r := likeReport(engine.Postgres, table, likeSchemes("bigint", "uuid", pgServer)...)
	v, err := r.Decide(report.Need{}, engine.Postgres)
	require.NoError(t, err)
	require.NotNil(t, v.TableKey)
	assert.False(t, v.TableKey.Keep)
	assert.Equal(t, "your key id (uuid) is not a local sequence; its order against the rows' physical order: correlation 0.01 (1 in order, 0 unrelated); the schemes below rank to replace it", v.TableKey.Line)
	require.NotNil(t, v.KeyChange)
	assert.Equal(t, v.Ranked[0].Scheme, v.KeyChange.Scheme)
	assert.Contains(t, v.KeyChange.Line, "no foreign key points at it")
}

// TestVerdictLikeKeyChange: the key change names the column's type change
// and every foreign key that points at the key.
func TestVerdictLikeKeyChange(t *testing.T) {
	t.Parallel()
	uuidOnly := func(table engine.LikeTable) *report.Report {
		s := likeSchemes("bigint", "uuid", pgServer)
		return likeReport(engine.Postgres, table, s[0], s[2]) // the counter and uuidv7
	}
	v, err := uuidOnly(identityTable()).Decide(report.Need{Fleet: true}, engine.Postgres)
	require.NoError(t, err)
	require.Equal(t, []string{"uuidv7"}, ranked(v))
	c := v.KeyChange
	require.NotNil(t, c)
	assert.Equal(t, report.KeyChange{
		Scheme: "uuidv7", Column: "id", FromType: "bigint", ToType: "uuid",
		ReferencedBy: []string{"public.orders(user_id)", "public.sessions(user_id)"},
		Line: "key change to uuidv7: id from bigint to uuid; without its identity: the application sets the values; " +
			"the 2 foreign keys that point at it change type with it: public.orders(user_id), public.sessions(user_id)",
	}, *c)

	table := identityTable()
	table.ReferencedBy = nil
	v, err = uuidOnly(table).Decide(report.Need{Fleet: true}, engine.Postgres)
	require.NoError(t, err)
	assert.Contains(t, v.KeyChange.Line, "id from bigint to uuid")
	assert.Contains(t, v.KeyChange.Line, "; no foreign key points at it")

	// A 64-bit scheme keeps an InnoDB bigint(20) a BIGINT: the foreign
	// keys keep their type.
	table = identityTable()
	table.KeyType, table.KeySequence = "bigint(20)", "AUTO_INCREMENT"
	s := likeSchemes("BIGINT", "BINARY(16)", myServer)
	v, err = likeReport(engine.MySQL, table, s[0], s[1]).Decide(report.Need{Fleet: true}, engine.MySQL)
	require.NoError(t, err)
	require.Equal(t, []string{"traceid"}, ranked(v))
	assert.Equal(t, "key change to traceid: id stays bigint(20); without its AUTO_INCREMENT: the application sets the values; "+
		"the 2 foreign keys that point at it keep their type: public.orders(user_id), public.sessions(user_id)", v.KeyChange.Line)
}

// TestVerdictLikeMySQLWriteFigures: on InnoDB a --like run ranks on the
// copies' own pages changed per flush interval and on redo, where every
// candidate's load measured them undisturbed; the server-wide pages
// written, which another session's flushes move, never count; and a
// figure measured in some loads only, or on no load of the run's path,
// is left out by name.
func TestVerdictLikeMySQLWriteFigures(t *testing.T) {
	t.Parallel()
	build := func(edit func(name string, m map[string]float64)) *report.Report {
		s := likeSchemes("BIGINT", "BINARY(16)", myServer)
		for i := range s {
			if edit != nil {
				edit(s[i].name, s[i].server)
			}
		}
		return likeReport(engine.MySQL, identityTable(), s...)
	}
	quiet, err := build(nil).Decide(report.Need{Fleet: true}, engine.MySQL)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(quiet.Basis, "every index's size, primary-key leaf pages, primary-key leaf pages at the baseline's key width (page splits), pages changed per flush interval, redo of the copies of your table on mysql"), quiet.Basis)
	assert.NotContains(t, quiet.Basis, "left out")
	require.Equal(t, []string{"segment-x", "traceid", "uuidv7"}, ranked(quiet))

	// Another session's flushes in one load's pages written: nothing
	// changes.
	noisy, err := build(func(name string, m map[string]float64) {
		if name == "segment-x" {
			m["pages_written_per_1000"] *= 50
		}
	}).Decide(report.Need{Fleet: true}, engine.MySQL)
	require.NoError(t, err)
	assert.Equal(t, quiet.Ranked, noisy.Ranked)

	// The copy's own pages rank: a scheme that changes 2.5 times the
	// baseline's pages is rejected for it.
	v, err := build(func(name string, m map[string]float64) {
		if name == "uuidv7" {
			m["pages_changed_per_1000"] = 9 * 2.5
		}
	}).Decide(report.Need{Fleet: true}, engine.MySQL)
	require.NoError(t, err)
	assert.Contains(t, rejections(v)["uuidv7"], "pages changed per flush interval 2.5x the counter's")

	// A load whose every try another session disturbed has no redo: redo
	// is left out, by name, and the rest ranks.
	v, err = build(func(name string, m map[string]float64) {
		if name == "traceid" {
			delete(m, "redo_bytes_per_insert")
		}
	}).Decide(report.Need{Fleet: true}, engine.MySQL)
	require.NoError(t, err)
	assert.Contains(t, v.Basis, "pages changed per flush interval of the copies")
	assert.Contains(t, v.Basis, "redo left out: not measured undisturbed in the loads of traceid")
	assert.Equal(t, []string{"segment-x", "traceid", "uuidv7"}, ranked(v))

	// Without --scratch no load has them: the run says why.
	r := build(func(_ string, m map[string]float64) {
		for k := range m {
			delete(m, k)
		}
	})
	r.Like[0].Unmeasured = map[string]string{"pages": "pages changed left out: no flush on the source", "log": "redo left out: no counter on the source"}
	v, err = r.Decide(report.Need{Fleet: true}, engine.MySQL)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(v.Basis, "every index's size, primary-key leaf pages, primary-key leaf pages at the baseline's key width (page splits) of the copies of your table on mysql"), v.Basis)
	assert.Contains(t, v.Basis, "; pages changed left out: no flush on the source; redo left out: no counter on the source")
	assert.Equal(t, []string{"segment-x", "traceid", "uuidv7"}, ranked(v))
	assert.Empty(t, v.CannotJudge, "the clustered index's page splits judge the keys' order")
}

// TestVerdictLikeInnoDBPageSplits: on InnoDB the primary key is the
// clustered index, whose leaves hold the rows: a key that fills them to
// two thirds, as random keys do, is rejected for its page splits on every
// path, while an ordered key twice as wide, whose leaf pages grow with its
// width alone, ranks; without a counter baseline the figure is left out.
func TestVerdictLikeInnoDBPageSplits(t *testing.T) {
	t.Parallel()
	// Rows of 400 bytes in the counter's leaves: 25 pages a 1,000 keys
	// of 8 bytes; 16 bytes more for a BINARY(24) key in insert order.
	rowBytes := 25.0 * 16384 / 1000
	ordered24 := 25 * (rowBytes + 16) / rowBytes
	loads := []likeLoad{
		{name: "counter", kind: scheme.Baseline, ns: 2, colType: "BIGINT", pkBytes: 240_000, leafPages: 25 * likeN / 1000},
		{name: "wide", ns: 40, colType: "BINARY(24)", keyBytes: 24, pkBytes: 260_000, leafPages: ordered24 * likeN / 1000},
		{name: "uuidv4", ns: 40, colType: "BINARY(16)", keyBytes: 16, random: true, pkBytes: 350_000, leafPages: 25 * 1.4 * (rowBytes + 8) / rowBytes * likeN / 1000},
	}
	table := engine.LikeTable{Name: "shop.orders", Key: "id", KeyType: "binary(16)", Rows: 1_000_000, OnSource: true,
		Unmeasured: map[string]string{"pages": "pages changed left out: no flush on the source", "log": "redo left out: no counter on the source"}}
	v, err := likeReport(engine.MySQL, table, loads...).Decide(report.Need{}, engine.MySQL)
	require.NoError(t, err)
	assert.Empty(t, v.CannotJudge)
	assert.Equal(t, []string{"wide"}, ranked(v), "the counter is the baseline the figures are measured against")
	assert.Contains(t, rejections(v)["uuidv4"], "primary-key leaf pages at the baseline's key width (page splits) 1.4x the counter's")
	assert.Contains(t, v.Basis, "(page splits) above 1.25x (which rejects and does not rank)")
	// The splits reject and do not rank: the score is the other figures'.
	r := likeReport(engine.MySQL, table, loads...)
	score := 1.0
	for _, key := range []string{"all_index_bytes_per_key", "leaf_pages_per_1000"} {
		x, _ := report.Figure(&r.Schemes[1], engine.MySQL, 0, key)
		b, _ := report.Figure(&r.Schemes[0], engine.MySQL, 0, key)
		score *= x / b
	}
	assert.InDelta(t, score, v.Ranked[0].Score, 1e-9)

	// Without the baseline no figure tells the keys apart on this path.
	v, err = likeReport(engine.MySQL, table, loads[1:]...).Decide(report.Need{}, engine.MySQL)
	require.NoError(t, err)
	assert.Contains(t, v.Basis, "page splits) left out: not measured, or no counter baseline in the run")
	assert.Empty(t, v.Ranked)
	assert.Contains(t, v.CannotJudge, "cannot judge writes here")
	assert.Contains(t, v.CannotJudge, "--scratch")
	assert.Len(t, v.Unjudged, 2)
	require.NotNil(t, v.TableKey)
	assert.Contains(t, v.TableKey.Line, "no scheme is ranked to replace it: cannot judge writes here")
	assert.NotContains(t, v.TableKey.Line, "the schemes below rank")
}

// TestVerdictLikeCountsSecondaryIndexes: size counts every index, so a
// copy whose secondary index is 72% larger ranks below an otherwise equal
// one, even when its generator is faster.
func TestVerdictLikeCountsSecondaryIndexes(t *testing.T) {
	t.Parallel()
	for _, eng := range []string{engine.Postgres, engine.MySQL} {
		t.Run(eng, func(t *testing.T) {
			server := pgServer
			if eng == engine.MySQL {
				server = myServer
			}
			build := func(secondaryB float64) *report.Report {
				d := scheme.Design{Bits: 64, MaxBits: 63, Int63: true, TimeUnit: 1e6, NodeBits: 10}
				return likeReport(eng, identityTable(),
					likeLoad{name: "a", design: d, ns: 50, colType: "bigint", pkBytes: 250_000, secondary: 300_000, leafPages: 25, server: server(1)},
					likeLoad{name: "b", design: d, ns: 10, colType: "bigint", pkBytes: 250_000, secondary: secondaryB, leafPages: 25, server: server(1)},
				)
			}
			equal, err := build(300_000).Decide(report.Need{}, eng)
			require.NoError(t, err)
			assert.Equal(t, []string{"b", "a"}, ranked(equal), "equal copies: the faster generator first")

			v, err := build(1.72*300_000).Decide(report.Need{}, eng)
			require.NoError(t, err)
			assert.Equal(t, []string{"a", "b"}, ranked(v))
			assert.Greater(t, v.Ranked[1].Score, 1.02*v.Ranked[0].Score)
			assert.Contains(t, v.Basis, "every index's size")
		})
	}
}

// TestVerdictLikePostgresCheckpointFigures: pages dirtied and WAL count
// only when every candidate's load has them; without them the verdict
// ranks on the figures of a load with no checkpoint forced (pages changed
// per interval, WAL without full-page images) where every load has
// those, and else says which it left out and why.
func TestVerdictLikePostgresCheckpointFigures(t *testing.T) {
	t.Parallel()
	r := likeReport(engine.Postgres, identityTable(), likeSchemes("bigint", "uuid", pgServer)...)
	v, err := r.Decide(report.Need{}, engine.Postgres)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(v.Basis, "every index's size, primary-key pages changed per interval at the baseline's key width, pages dirtied, WAL of the copies of your table on postgres"), v.Basis)
	assert.NotContains(t, v.Basis, "left out")

	m := r.Schemes[1].Runs[0].Engines[0].Metrics
	delete(m, "pages_dirtied_per_1000")
	delete(m, "wal_bytes_per_insert")
	v, err = r.Decide(report.Need{}, engine.Postgres)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(v.Basis, "every index's size, primary-key pages changed per interval at the baseline's key width of the copies of your table on postgres"), v.Basis)
	assert.Contains(t, v.Basis, "pages dirtied left out: not measured undisturbed in the loads of traceid")
	assert.Contains(t, v.Basis, "WAL left out: not measured undisturbed in the loads of traceid")
	for _, p := range v.Ranked {
		assert.NotContains(t, p.Why, "WAL", p.Scheme)
	}

	// A rejected scheme's missing figures do not matter.
	r = likeReport(engine.Postgres, identityTable(), likeSchemes("bigint", "uuid", pgServer)...)
	m = r.Schemes[4].Runs[0].Engines[0].Metrics // segment-x-fetch, which fleet rejects
	delete(m, "wal_bytes_per_insert")
	v, err = r.Decide(report.Need{Fleet: true}, engine.Postgres)
	require.NoError(t, err)
	assert.Contains(t, v.Basis, "WAL")
	assert.NotContains(t, v.Basis, "left out")

	// The copies on the source: no checkpoint forced, pages counted from
	// their LSNs and WAL without full-page images, which rank.
	polite := func(scale float64) map[string]float64 {
		return map[string]float64{"pages_changed_per_1000": 10 * scale, "wal_bytes_no_fpi_per_insert": 100 * scale, "key_pages_changed_per_1000": 3 * scale}
	}
	s := likeSchemes("bigint", "uuid", polite)
	s[2].server = polite(2.5) // uuidv7 changes 2.5 times the pages
	r = likeReport(engine.Postgres, identityTable(), s...)
	v, err = r.Decide(report.Need{}, engine.Postgres)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(v.Basis, "every index's size, primary-key pages changed per interval at the baseline's key width, pages changed per interval (page LSNs, no checkpoint forced), WAL without full-page images (no checkpoint forced) of the copies"), v.Basis)
	assert.Contains(t, rejections(v)["uuidv7"], "pages changed per interval (page LSNs, no checkpoint forced) 2.5x the counter's")

	// Without pageinspect on the source the pages are left out, and why.
	for i := range r.Schemes {
		delete(r.Schemes[i].Runs[0].Engines[0].Metrics, "pages_changed_per_1000")
		delete(r.Schemes[i].Runs[0].Engines[0].Metrics, "key_pages_changed_per_1000")
	}
	r.Like[0].Unmeasured = map[string]string{"pages": "pages left out: no pageinspect"}
	r.Like[0].OnSource = true
	v, err = r.Decide(report.Need{}, engine.Postgres)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(v.Basis, "every index's size, WAL without full-page images (no checkpoint forced) of the copies"), v.Basis)
	assert.Contains(t, v.Basis, "; pages left out: no pageinspect")
	// Neither figure left tells random keys from ordered ones: nothing
	// ranks, and the verdict says why and what measures one.
	assert.Empty(t, v.Ranked)
	assert.Contains(t, v.CannotJudge, "cannot judge writes here")
	assert.Contains(t, v.CannotJudge, "--scratch")
	assert.Contains(t, unjudged(v), "traceid")
}

func unjudged(v *report.Verdict) []string {
	var out []string
	for _, p := range v.Unjudged {
		out = append(out, p.Scheme)
	}
	return out
}

// TestVerdictLikeJSON: the table's key and the key change travel in the
// report's JSON.
func TestVerdictLikeJSON(t *testing.T) {
	t.Parallel()
	r := likeReport(engine.Postgres, identityTable(), likeSchemes("bigint", "uuid", pgServer)...)
	v, err := r.Decide(report.Need{Fleet: true}, engine.Postgres)
	require.NoError(t, err)
	r.Verdict = v
	var b bytes.Buffer
	require.NoError(t, r.WriteJSON(&b))
	var got struct {
		Verdict struct {
			TableKey  map[string]any `json:"table_key"`
			KeyChange map[string]any `json:"key_change"`
		} `json:"verdict"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	assert.Equal(t, false, got.Verdict.TableKey["keep"])
	assert.Equal(t, "identity", got.Verdict.TableKey["sequence"])
	assert.Equal(t, v.KeyChange.Line, got.Verdict.KeyChange["line"])
	assert.Equal(t, "bigint", got.Verdict.KeyChange["from_type"])
}

// TestVerdictFleetDenseSchemes: every registered scheme whose IDs come
// from one shared sequence either reserves blocks (a segment allocator)
// or is one fleet rules out, so a new one cannot slip past fleet.
func TestVerdictFleetDenseSchemes(t *testing.T) {
	t.Parallel()
	for _, s := range scheme.Schemes() {
		d := s.Design()
		if !d.Dense {
			continue
		}
		res := &report.Result{Name: s.Name, Kind: s.Kind, Design: d}
		blocks := strings.HasPrefix(s.Summary, "segment allocator")
		assert.True(t, blocks != (report.PerIDSequence(res) != ""), "%s: %s", s.Name, s.Summary)
	}
	for _, name := range []string{"counter", "publicid-53"} {
		s, err := scheme.Lookup(name)
		require.NoError(t, err)
		assert.NotEmpty(t, report.FleetMiss(&report.Result{Name: s.Name, Kind: s.Kind, Design: s.Design()}, report.Need{Fleet: true}), name)
	}
	for _, name := range []string{"traceid", "snowflake", "uuidv7", "decimalid", "segment-bbolt"} {
		s, err := scheme.Lookup(name)
		require.NoError(t, err)
		assert.Empty(t, report.FleetMiss(&report.Result{Name: s.Name, Kind: s.Kind, Design: s.Design()}, report.Need{Fleet: true}), name)
	}
}

// TestVerdictLikePostgresKeyPages: on PostgreSQL the pages the key's own
// index changes per interval, at the baseline's key width, reject random
// keys (above 4x) on either path and rank nothing: a uuid key in insert
// order, whose 28-byte tuples fill 1.4 times the pages of a bigint's 20,
// stands at 1.0x; keys in time order from 4 writers, at 2.5x, rank.
func TestVerdictLikePostgresKeyPages(t *testing.T) {
	t.Parallel()
	server := func(keyPages float64) map[string]float64 {
		return map[string]float64{"pages_changed_per_1000": 200, "wal_bytes_no_fpi_per_insert": 600, "key_pages_changed_per_1000": keyPages}
	}
	loads := []likeLoad{
		{name: "counter", kind: scheme.Baseline, ns: 2, colType: "bigint", pkBytes: 240_000, server: server(3)},
		{name: "traceid", ns: 20, colType: "bigint", pkBytes: 380_000, server: server(3 * 2.5)},
		{name: "uuidv7", ns: 60, colType: "uuid", keyBytes: 16, pkBytes: 340_000, server: server(3 * 28.0 / 20)},
		{name: "uuidv4", ns: 60, colType: "uuid", keyBytes: 16, random: true, pkBytes: 480_000, server: server(3 * 28.0 / 20 * 8)},
	}
	table := engine.LikeTable{Name: "shop.orders", Key: "id", KeyType: "uuid", Rows: 1_000_000, OnSource: true}
	r := likeReport(engine.Postgres, table, loads...)
	v, err := r.Decide(report.Need{}, engine.Postgres)
	require.NoError(t, err)
	assert.Empty(t, v.CannotJudge)
	assert.ElementsMatch(t, []string{"traceid", "uuidv7"}, ranked(v))
	assert.Contains(t, rejections(v)["uuidv4"], "primary-key pages changed per interval at the baseline's key width 8.0x the counter's")
	for _, p := range v.Ranked {
		if p.Scheme == "uuidv7" {
			assert.Contains(t, p.Why, "primary-key pages changed per interval at the baseline's key width 1.0x")
		}
	}
	assert.Contains(t, v.Basis, "primary-key pages changed per interval at the baseline's key width above 4x (which rejects and does not rank)")
}

// TestVerdictLikeMyRocksNeedsCompactions: on MyRocks the bytes written
// tell random keys from ordered ones only once compactions move bytes;
// where none moved a byte in any load the verdict ranks nothing and asks
// for a larger -n.
func TestVerdictLikeMyRocksNeedsCompactions(t *testing.T) {
	t.Parallel()
	server := func(written, moved float64) map[string]float64 {
		return map[string]float64{"bytes_written_per_insert": written, "wal_bytes_per_insert": 400, "bytes_moved": moved}
	}
	build := func(moved, uuidWritten float64) *report.Report {
		return likeReport(engine.MyRocks, engine.LikeTable{Name: "shop.orders", Key: "id", KeyType: "binary(16)", Rows: 1_000_000},
			likeLoad{name: "counter", kind: scheme.Baseline, ns: 2, colType: "BIGINT", pkBytes: 240_000, server: server(400, moved)},
			likeLoad{name: "traceid", ns: 20, colType: "BIGINT", pkBytes: 240_000, server: server(410, moved)},
			likeLoad{name: "uuidv4", ns: 60, colType: "BINARY(16)", keyBytes: 16, random: true, pkBytes: 260_000, server: server(uuidWritten, moved)})
	}
	v, err := build(0, 420).Decide(report.Need{}, engine.MyRocks) // the rows once each, whatever their order
	require.NoError(t, err)
	assert.Empty(t, v.Ranked)
	assert.Contains(t, v.CannotJudge, "no compaction moved or rewrote a byte in any load")
	assert.Contains(t, v.CannotJudge, "run with a larger -n")
	assert.ElementsMatch(t, []string{"traceid", "uuidv4"}, unjudged(v))

	v, err = build(1<<20, 1000).Decide(report.Need{}, engine.MyRocks)
	require.NoError(t, err)
	assert.Empty(t, v.CannotJudge)
	assert.Equal(t, []string{"traceid"}, ranked(v))
	assert.Contains(t, rejections(v)["uuidv4"], "bytes flushed and compacted 2.5x the counter's")
}
