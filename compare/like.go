package compare

import (
	"context"
	"fmt"
	"slices"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/innodb"
	"github.com/idkit/idkit/compare/internal/engine/postgres"
)

// readLike reads the user's table on the source server of plan, before
// the run creates anything: a table the copies cannot be made of is
// refused first.
func readLike(ctx context.Context, p engine.Target, name engine.LikeName, sample, n int) (*engine.Source, error) {
	if p.Engine == engine.Postgres {
		return postgres.ReadLike(ctx, p.Source, name, sample, n)
	}
	return innodb.ReadLike(ctx, p.Source, name, sample, n)
}

// engineTitles names the server engines in the tables' titles.
var engineTitles = map[string]string{engine.Postgres: "POSTGRESQL", engine.MySQL: "INNODB", engine.MyRocks: "MYROCKS"}

// likeTable returns the user's table as the engine read it, or nil.
func (r *Report) likeTable(eng string) *engine.LikeTable {
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
				Title:  fmt.Sprintf("YOUR TABLE %s IN %s TODAY — read from the server's catalog and statistics", t.Name, engineTitles[t.Engine]),
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
				Title:  fmt.Sprintf("EVERY INDEX OF THE COPIES OF %s IN %s — measured in this run, after each load: size, leaf density", t.Name, engineTitles[t.Engine]),
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
				l, ok := run.engineLoad(t.Engine)
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
			l, _ := run.engineLoad(eng)
			for _, ix := range l.Indexes {
				if !slices.Contains(names, ix.Name) {
					names = append(names, ix.Name)
				}
			}
		}
	}
	return names
}
