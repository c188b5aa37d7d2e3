package crosscheck

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/compare"
	"github.com/idkit/idkit/decimalid"
	"github.com/idkit/idkit/flake128"
	"github.com/idkit/idkit/fleet"
	"github.com/idkit/idkit/instagram"
	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/objectid"
	"github.com/idkit/idkit/ordinal"
	"github.com/idkit/idkit/otelid"
	"github.com/idkit/idkit/publicid"
	"github.com/idkit/idkit/segment"
	"github.com/idkit/idkit/segment/mysqlstore"
	"github.com/idkit/idkit/segment/pgstore"
	"github.com/idkit/idkit/segment/redisstore"
	"github.com/idkit/idkit/serve"
	"github.com/idkit/idkit/shardkey"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

// kinds are the kinds of error of package idkit, by name.
var kinds = map[string]error{
	"ErrInvalid": idkit.ErrInvalid, "ErrUnavailable": idkit.ErrUnavailable, "ErrNotDurable": idkit.ErrNotDurable,
	"ErrExhausted": idkit.ErrExhausted, "ErrNodeLost": idkit.ErrNodeLost, "ErrHeld": idkit.ErrHeld,
	"ErrCorrupt": idkit.ErrCorrupt, "ErrRefused": idkit.ErrRefused, "ErrClosed": idkit.ErrClosed,
}

// sentinels are the exported errors of every public package, by name, with
// the name of the kind each is of.
var sentinels = map[string]struct {
	err  error
	kind string
}{
	"traceid.ErrSyntax": {traceid.ErrSyntax, "ErrInvalid"}, "traceid.ErrRange": {traceid.ErrRange, "ErrInvalid"},
	"traceid.ErrInvalid": {traceid.ErrInvalid, "ErrInvalid"}, "traceid.ErrStore": {traceid.ErrStore, "ErrUnavailable"},
	"traceid.ErrExhausted": {traceid.ErrExhausted, "ErrExhausted"}, "traceid.ErrNodeLost": {traceid.ErrNodeLost, "ErrNodeLost"},
	"traceid.ErrClosed": {traceid.ErrClosed, "ErrClosed"},

	"snowflake.ErrSyntax": {snowflake.ErrSyntax, "ErrInvalid"}, "snowflake.ErrRange": {snowflake.ErrRange, "ErrInvalid"},
	"snowflake.ErrInvalid": {snowflake.ErrInvalid, "ErrInvalid"}, "snowflake.ErrStore": {snowflake.ErrStore, "ErrUnavailable"},
	"snowflake.ErrClockBackwards": {snowflake.ErrClockBackwards, "ErrUnavailable"},
	"snowflake.ErrExhausted":      {snowflake.ErrExhausted, "ErrExhausted"}, "snowflake.ErrExpired": {snowflake.ErrExpired, "ErrExhausted"},
	"snowflake.ErrNodeLost": {snowflake.ErrNodeLost, "ErrNodeLost"}, "snowflake.ErrClosed": {snowflake.ErrClosed, "ErrClosed"},

	"flake128.ErrSyntax": {flake128.ErrSyntax, "ErrInvalid"}, "flake128.ErrRange": {flake128.ErrRange, "ErrInvalid"},
	"flake128.ErrInvalid": {flake128.ErrInvalid, "ErrInvalid"}, "flake128.ErrStore": {flake128.ErrStore, "ErrUnavailable"},
	"flake128.ErrClockBackwards": {flake128.ErrClockBackwards, "ErrUnavailable"},
	"flake128.ErrClosed":         {flake128.ErrClosed, "ErrClosed"}, "flake128.ErrNodeLost": {flake128.ErrNodeLost, "ErrNodeLost"},

	"decimalid.ErrSyntax": {decimalid.ErrSyntax, "ErrInvalid"}, "decimalid.ErrRange": {decimalid.ErrRange, "ErrInvalid"},
	"decimalid.ErrInvalid": {decimalid.ErrInvalid, "ErrInvalid"}, "decimalid.ErrSource": {decimalid.ErrSource, "ErrUnavailable"},
	"decimalid.ErrClosed": {decimalid.ErrClosed, "ErrClosed"},

	"objectid.ErrSyntax": {objectid.ErrSyntax, "ErrInvalid"}, "objectid.ErrRange": {objectid.ErrRange, "ErrInvalid"},
	"objectid.ErrInvalid": {objectid.ErrInvalid, "ErrInvalid"}, "objectid.ErrClosed": {objectid.ErrClosed, "ErrClosed"},

	"segment.ErrSyntax": {segment.ErrSyntax, "ErrInvalid"}, "segment.ErrRange": {segment.ErrRange, "ErrInvalid"},
	"segment.ErrInvalid": {segment.ErrInvalid, "ErrInvalid"}, "segment.ErrUnavailable": {segment.ErrUnavailable, "ErrUnavailable"},
	"segment.ErrExhausted": {segment.ErrExhausted, "ErrExhausted"}, "segment.ErrBadBlock": {segment.ErrBadBlock, "ErrCorrupt"},
	"segment.ErrClosed": {segment.ErrClosed, "ErrClosed"},

	"shardkey.ErrSyntax": {shardkey.ErrSyntax, "ErrInvalid"}, "shardkey.ErrRange": {shardkey.ErrRange, "ErrInvalid"},
	"shardkey.ErrInvalid": {shardkey.ErrInvalid, "ErrInvalid"},

	"pgstore.ErrNotDurable": {pgstore.ErrNotDurable, "ErrNotDurable"}, "pgstore.ErrUnavailable": {pgstore.ErrUnavailable, "ErrUnavailable"},
	"pgstore.ErrRefused": {pgstore.ErrRefused, "ErrRefused"}, "pgstore.ErrClosed": {pgstore.ErrClosed, "ErrClosed"},
	"mysqlstore.ErrNotDurable": {mysqlstore.ErrNotDurable, "ErrNotDurable"}, "mysqlstore.ErrUnavailable": {mysqlstore.ErrUnavailable, "ErrUnavailable"},
	"mysqlstore.ErrRefused": {mysqlstore.ErrRefused, "ErrRefused"}, "mysqlstore.ErrClosed": {mysqlstore.ErrClosed, "ErrClosed"},
	"redisstore.ErrNotDurable": {redisstore.ErrNotDurable, "ErrNotDurable"}, "redisstore.ErrUnavailable": {redisstore.ErrUnavailable, "ErrUnavailable"},
	"redisstore.ErrRefused": {redisstore.ErrRefused, "ErrRefused"}, "redisstore.ErrClosed": {redisstore.ErrClosed, "ErrClosed"},

	"launchlog.ErrInvalid": {launchlog.ErrInvalid, "ErrInvalid"}, "launchlog.ErrNetworkFS": {launchlog.ErrNetworkFS, "ErrInvalid"},
	"launchlog.ErrNoLaunch": {launchlog.ErrNoLaunch, "ErrInvalid"}, "launchlog.ErrLocked": {launchlog.ErrLocked, "ErrUnavailable"},
	"launchlog.ErrOpen": {launchlog.ErrOpen, "ErrUnavailable"}, "launchlog.ErrWrite": {launchlog.ErrWrite, "ErrUnavailable"}, "launchlog.ErrHeld": {launchlog.ErrHeld, "ErrHeld"},
	"launchlog.ErrLaunchesExhausted":   {launchlog.ErrLaunchesExhausted, "ErrExhausted"},
	"launchlog.ErrGeneratorsExhausted": {launchlog.ErrGeneratorsExhausted, "ErrExhausted"},
	"launchlog.ErrCorrupt":             {launchlog.ErrCorrupt, "ErrCorrupt"},
	"launchlog.ErrDisplaced":           {launchlog.ErrDisplaced, "ErrRefused"},
	"launchlog.ErrNodeLost":            {launchlog.ErrNodeLost, "ErrNodeLost"},

	"fleet.ErrInvalid": {fleet.ErrInvalid, "ErrInvalid"}, "fleet.ErrUnavailable": {fleet.ErrUnavailable, "ErrUnavailable"},
	"fleet.ErrClockSkew": {fleet.ErrClockSkew, "ErrUnavailable"}, "fleet.ErrRefused": {fleet.ErrRefused, "ErrRefused"},
	"fleet.ErrNoFreeNode": {fleet.ErrNoFreeNode, "ErrExhausted"}, "fleet.ErrNodeLost": {fleet.ErrNodeLost, "ErrNodeLost"},
	"fleet.ErrCorrupt": {fleet.ErrCorrupt, "ErrCorrupt"}, "fleet.ErrClosed": {fleet.ErrClosed, "ErrClosed"},

	"publicid.ErrSyntax": {publicid.ErrSyntax, "ErrInvalid"}, "publicid.ErrRange": {publicid.ErrRange, "ErrInvalid"},
	"publicid.ErrInvalid": {publicid.ErrInvalid, "ErrInvalid"}, "publicid.ErrUnknownKey": {publicid.ErrUnknownKey, "ErrInvalid"},
	"publicid.ErrUnknownConstruction": {publicid.ErrUnknownConstruction, "ErrInvalid"},

	"instagram.ErrInvalid": {instagram.ErrInvalid, "ErrInvalid"}, "ordinal.ErrInvalid": {ordinal.ErrInvalid, "ErrInvalid"},
	"otelid.ErrNil": {otelid.ErrNil, "ErrInvalid"}, "serve.ErrInvalid": {serve.ErrInvalid, "ErrInvalid"},
	"serve.ErrFileLimit": {serve.ErrFileLimit, "ErrInvalid"},

	"compare.ErrUnknownScheme": {compare.ErrUnknownScheme, "ErrInvalid"}, "compare.ErrOptions": {compare.ErrOptions, "ErrInvalid"},
	"compare.ErrKey": {compare.ErrKey, "ErrCorrupt"}, "compare.ErrNoSpace": {compare.ErrNoSpace, "ErrUnavailable"},
	"compare.ErrEmptyReport": {compare.ErrEmptyReport, "ErrInvalid"}, "compare.ErrLike": {compare.ErrLike, "ErrInvalid"},
	"compare.ErrRights": {compare.ErrRights, "ErrRefused"}, "compare.ErrNeed": {compare.ErrNeed, "ErrInvalid"},
	"compare.ErrSpiderMissing": {compare.ErrSpiderMissing, "ErrUnavailable"},
}

// TestKinds holds every package's sentinels to their one kind: the one
// error vocabulary that callers test across schemes and stores.
func TestKinds(t *testing.T) {
	t.Parallel()
	for name, s := range sentinels {
		kind, ok := kinds[s.kind]
		require.True(t, ok, "%s: no kind %s", name, s.kind)
		assert.ErrorIs(t, s.err, kind, "%s (%q)", name, s.err)
		for other, k := range kinds {
			if other != s.kind {
				assert.False(t, errors.Is(s.err, k), "%s (%q) is also %s", name, s.err, other)
			}
		}
	}
	held := &launchlog.HeldError{Key: "k"}
	assert.ErrorIs(t, held, idkit.ErrHeld)
}

// TestEveryErrorHasAKind walks the source of every public package of the
// workspace but the root, which declares the kinds: each exported
// package-level variable named Err... is in sentinels, and so of a kind.
func TestEveryErrorHasAKind(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command")
	out, err := exec.Command(goTool, "list", "-f", "{{.Name}} {{.Dir}}", core+"/...").Output()
	require.NoError(t, err, "go list")
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, dir, _ := strings.Cut(line, " ")
		if name == "main" || name == "idkit" || strings.Contains(filepath.ToSlash(dir), "/internal/") || strings.Contains(filepath.ToSlash(dir), "/proto/") {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			for _, decl := range f.Decls {
				g, ok := decl.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, spec := range g.Specs {
					for _, id := range spec.(*ast.ValueSpec).Names {
						if id.IsExported() && strings.HasPrefix(id.Name, "Err") {
							seen++
							_, ok := sentinels[name+"."+id.Name]
							assert.True(t, ok, "%s.%s (%s) is not in sentinels: give it a kind and add it", name, id.Name, file)
						}
					}
				}
			}
		}
	}
	assert.Greater(t, seen, 60, "the walk found the sentinels")
}
