package compare

import (
	"context"
	"fmt"
	"strings"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/innodb"
	"github.com/idkit/idkit/compare/internal/engine/postgres"
)

// preflight checks, on every server of the plans, the rights the run
// needs: in a --like run on the source server first, and then on the
// server the loads go to. Between the two, once the source's rights are
// there, validate reads the table (nil: nothing to read), so that a table
// the run cannot copy is refused before the run creates anything, the
// check's own probe on MariaDB/MySQL included. It returns one ErrRights
// that lists every missing right.
func preflight(ctx context.Context, plans []engine.Target, like string, validate func() error) error {
	var missing []engine.MissingRight
	polite := false
	add := func(p engine.Target, m []engine.MissingRight) {
		missing = append(missing, m...)
		polite = polite || (p.Polite && len(m) > 0)
	}
	for _, p := range plans {
		if p.DSN == "" || p.Source == "" {
			continue
		}
		var m []engine.MissingRight
		var err error
		if p.Engine == engine.Postgres {
			m, err = postgres.SourceRights(ctx, p, like)
		} else {
			m, err = innodb.SourceRights(ctx, p, like)
		}
		if err != nil {
			return err
		}
		add(p, m)
	}
	if len(missing) == 0 && validate != nil {
		if err := validate(); err != nil {
			return err
		}
	}
	for _, p := range plans {
		if p.DSN == "" {
			continue
		}
		var m []engine.MissingRight
		var err error
		if p.Engine == engine.Postgres {
			m, err = postgres.Preflight(ctx, p)
		} else {
			m, err = innodb.Preflight(ctx, p)
		}
		if err != nil {
			return err
		}
		add(p, m)
	}
	if len(missing) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%v: the run needs these and has done nothing:", engine.ErrRights)
	for _, m := range missing {
		fmt.Fprintf(&b, "\n  %s: %s\n      %s", m.Where, m.What, m.Grant)
	}
	if polite {
		b.WriteString("\nor build the copies elsewhere with --scratch DSN: the source then needs SELECT on the table alone")
	}
	return &engine.RightsError{Msg: b.String()}
}
