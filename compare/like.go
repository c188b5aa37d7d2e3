package compare

import (
	"context"

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
