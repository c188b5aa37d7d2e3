package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/bbolt"
	"github.com/idkit/idkit/compare/internal/scheme"
)

// Measured returns the names of the engines that ran, in report order.
func (r *Report) Measured() []string {
	var out []string
	for _, e := range r.Engines {
		if e.Skipped == "" {
			out = append(out, e.Name)
		}
	}
	return out
}

// EngineLoad returns the load of engine in run, if there is one.
func (run WriterRun) EngineLoad(eng string) (engine.Figures, bool) {
	i := slices.IndexFunc(run.Engines, func(l engine.Figures) bool { return l.Engine == eng })
	if i < 0 {
		return engine.Figures{}, false
	}
	return run.Engines[i], true
}

// LikeTable returns the user's table as the engine read it, or nil.
func (r *Report) LikeTable(eng string) *engine.LikeTable {
	for i := range r.Like {
		if r.Like[i].Engine == eng {
			return &r.Like[i]
		}
	}
	return nil
}

// likeTables returns, for each server of a --like run, the user's table
// today and every index of each scheme's copy after its load.
func (r *Report) likeTables() []Table {
	var out []Table
	for _, t := range r.Like {
		today := Table{
			Section: Section{
				ID:     "like-table-" + t.Engine,
				Title:  fmt.Sprintf("YOUR TABLE %s IN %s TODAY — read from the server's catalog and statistics", t.Name, EngineTitles[t.Engine]),
				Source: SourceMeasured,
				Note:   t.Describe(),
			},
			Head: []string{"index", "size", "leaf pages", "leaf density", "leaf frag"},
			Docs: []string{"what the index is on", "the index's size", "its leaf pages", "used bytes of its leaf pages over their size", "leaf pages out of physical order (PostgreSQL)"},
		}
		rowsName := "table (rows)"
		if t.Engine == engine.MyRocks {
			rowsName = "table (rows), on disk"
		}
		today.Rows = append(today.Rows, []string{rowsName, engine.MiB(float64(t.TableBytes)), "-", "-", "-"})
		for _, ix := range t.Indexes {
			today.Rows = append(today.Rows, ix.Cells())
		}
		out = append(out, today)

		after := Table{
			Section: Section{
				ID:     "like-indexes-" + t.Engine,
				Title:  fmt.Sprintf("EVERY INDEX OF THE COPIES OF %s IN %s — measured in this run, after each load: size, leaf density", t.Name, EngineTitles[t.Engine]),
				Source: SourceMeasured,
				Note:   []string{"the same rows in every copy but for the key: what differs between schemes is the key's index, and the heap or clustered index it orders"},
			},
			Head: []string{"scheme", "writers", "key type"},
			Docs: []string{"the scheme's short name", "interleaved writers whose keys were loaded", "the key column's type in the copy"},
		}
		names := r.likeIndexNames(t.Engine)
		for _, n := range names {
			after.Head = append(after.Head, n)
			after.Docs = append(after.Docs, "size and leaf density of the index "+n)
		}
		// The table today, its sizes scaled to the loads' N, for a row
		// beside the copies'.
		if t.Rows > 0 {
			scale := float64(r.Config.N) / float64(t.Rows)
			row := []string{"your table today", "-", t.KeyType}
			for _, n := range names {
				cell := "-"
				for _, ix := range t.Indexes {
					if ix.Name == n {
						cell = engine.MiB(float64(ix.Bytes) * scale)
						if ix.LeafDensity > 0 {
							cell += ", " + engine.Pct(ix.LeafDensity)
						}
					}
				}
				row = append(row, cell)
			}
			after.Rows = append(after.Rows, row)
			after.Note = append(after.Note, fmt.Sprintf("your table today: its indexes' sizes scaled from its %s rows to the loads' %s", engine.Thousands(t.Rows), engine.Thousands(int64(r.Config.N))))
		}
		for _, s := range r.Schemes {
			for _, run := range s.Runs {
				l, ok := run.EngineLoad(t.Engine)
				if !ok {
					continue
				}
				row := []string{s.Name, fmt.Sprint(run.Writers), l.ColumnType}
				for _, n := range names {
					cell := "-"
					for _, ix := range l.Indexes {
						if ix.Name == n {
							cell = engine.MiB(float64(ix.Bytes))
							if ix.LeafDensity > 0 {
								cell += ", " + engine.Pct(ix.LeafDensity)
							}
						}
					}
					row = append(row, cell)
				}
				after.Rows = append(after.Rows, row)
			}
		}
		out = append(out, after)
	}
	return out
}

// likeIndexNames returns the names of the indexes of engine's copies, in
// the order of the first load that has them.
func (r *Report) likeIndexNames(eng string) []string {
	var names []string
	for _, s := range r.Schemes {
		for _, run := range s.Runs {
			l, _ := run.EngineLoad(eng)
			for _, ix := range l.Indexes {
				if !slices.Contains(names, ix.Name) {
					names = append(names, ix.Name)
				}
			}
		}
	}
	return names
}

// Report is the outcome of a Run. Design holds what each layout claims,
// computed from its constants; everything else under Schemes was measured
// in the run. Sources says so for each group of fields.
type Report struct {
	Tool    string            `json:"tool"`
	Started time.Time         `json:"started"`
	Seconds float64           `json:"seconds"`
	Machine Machine           `json:"machine"`
	Config  Config            `json:"config"`
	Sources map[string]string `json:"sources"`
	// Engines lists every engine, measured or skipped.
	Engines []engine.Info `json:"engines"`
	// Like describes the user's table the server loads copied, on each
	// server, as it is today (a --like run only).
	Like []engine.LikeTable `json:"like,omitempty"`
	// Verdict ranks the schemes under the run's constraints, from the
	// figures measured in the run.
	Verdict *Verdict `json:"verdict,omitempty"`
	// Families ranks them on each engine family the run measured, the
	// B-tree and the LSM tree, and says what changes between the two.
	Families *Families `json:"families,omitempty"`
	// Topologies ranks them on one server and on the sharded tables the
	// run measured, by range and by hash, and says what each costs.
	Topologies *Topologies `json:"topologies,omitempty"`
	// Columns describes every figure the reports show, once for all
	// three of them.
	Columns []Column `json:"columns"`
	Schemes []Result `json:"schemes"`
}

// Machine describes where the run happened.
type Machine struct {
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPU        string `json:"cpu,omitempty"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
}

// Config is the options the run used, defaults filled in.
type Config struct {
	N           int       `json:"n"`
	Writers     int       `json:"writers"`
	Fills       []float64 `json:"fills"`
	BatchSize   int       `json:"batch_size"`
	ValueSize   int       `json:"value_size"`
	PageSize    int       `json:"page_size"`
	Sync        bool      `json:"sync"`
	SpeedTimeNs int64     `json:"speed_time_ns"`
	// CheckpointEvery is the database loads' checkpoint interval in
	// inserts.
	CheckpointEvery int `json:"checkpoint_every"`
	// Like is the table whose copies the server loads filled, and Sample
	// the most rows read from it (a --like run only).
	Like   string `json:"like,omitempty"`
	Sample int    `json:"sample,omitempty"`
	// Concurrent says the servers were also loaded by Writers
	// connections at once.
	Concurrent bool `json:"concurrent,omitempty"`
	// Shards is how many backends the Spider tables spread over (a run
	// with Spider only).
	Shards int `json:"shards,omitempty"`
	// Ranges is the range-partitioned store every run's keys are modelled
	// in (WriterRun.Ranges).
	Ranges engine.RangeModel `json:"ranges"`
}

// Result is one scheme's design and measurements.
type Result struct {
	Name     string      `json:"name"`
	Kind     scheme.Kind `json:"kind"`
	Module   string      `json:"module,omitempty"`
	Version  string      `json:"version,omitempty"`
	Summary  string      `json:"summary"`
	KeysNote string      `json:"keys_note,omitempty"`
	// Design is computed from the layout; DesignText says it in words.
	Design     scheme.Design `json:"design"`
	DesignText DesignText    `json:"design_text"`
	// Speed and Runs are measured.
	Speed scheme.Speed `json:"speed"`
	Runs  []WriterRun  `json:"runs"`
}

// DesignText is a Design in words, as the reports print it.
type DesignText struct {
	TimeOrder string `json:"time_order"`
	Lifetime  string `json:"lifetime"`
	Rate      string `json:"ids_per_second_per_node"`
}

// WriterRun is the key set of one writer count and its loads.
type WriterRun struct {
	Writers int          `json:"writers"`
	Order   scheme.Order `json:"order"`
	Size    scheme.Size  `json:"size"`
	// Randomness is how far the keys' bits are from coin flips.
	Randomness scheme.Randomness `json:"randomness"`
	// Ranges is where the inserts go in a range-partitioned store that
	// splits its ranges by size (engine.RangeModel, Config.Ranges): a
	// model, from the keys.
	Ranges engine.RangeShares `json:"ranges"`
	// Loads are the bbolt loads, one per fill setting.
	Loads []bbolt.Load `json:"loads"`
	// Engines are the database loads of the same keys, one per engine.
	Engines []engine.Figures `json:"engines,omitempty"`
}
