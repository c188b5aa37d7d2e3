package crosscheck

import (
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snippetVars gives each Go snippet of the docs, by page and number
// (README.md#2 is the README's second), the variables it takes from the
// text around it, as parameters of the function it is compiled in; ctx is
// always there. A snippet missing here fails the test, so that a new one
// is compiled too. A reason instead of parameters exempts a snippet that
// is not code.
var snippetVars = map[string]string{
	"README.md#1":        "batch []traceid.ID",
	"README.md#2":        "log *launchlog.Log",
	"README.md#3":        "log *launchlog.Log",
	"README.md#4":        "id traceid.ID",
	"README.md#5":        "g *traceid.Generator",
	"docs/fleet.md#1":    "endpoints []string, launch int",
	"docs/publicid.md#1": "traceID traceid.ID, page []byte, ids []int64",
	"docs/schemes.md#1":  "batch []traceid.ID",
	"docs/schemes.md#2":  "skip: the method set of a generator, listed as signatures",
	"docs/segment.md#1":  "batch []segment.ID",
	"docs/segment.md#2":  "",
	"docs/serve.md#1":    "",
	"docs/tracing.md#1":  "",
}

// snippetImports are the packages a snippet may use, under the names the
// docs use.
var snippetImports = []string{
	`"context"`, `"encoding/json"`, `"fmt"`, `"log/slog"`, `"net/http"`, `"os"`,
	`clientv3 "go.etcd.io/etcd/client/v3"`, `sdktrace "go.opentelemetry.io/otel/sdk/trace"`,
	`"github.com/idkit/idkit/decimalid"`, `"github.com/idkit/idkit/flake128"`, `"github.com/idkit/idkit/fleet"`,
	`"github.com/idkit/idkit/launchlog"`, `"github.com/idkit/idkit/objectid"`, `"github.com/idkit/idkit/otelid"`,
	`"github.com/idkit/idkit/publicid"`, `"github.com/idkit/idkit/segment"`, `"github.com/idkit/idkit/segment/mysqlstore"`,
	`"github.com/idkit/idkit/segment/pgstore"`, `"github.com/idkit/idkit/segment/redisstore"`,
	`"github.com/idkit/idkit/snowflake"`, `"github.com/idkit/idkit/store"`, `"github.com/idkit/idkit/traceid"`,
}

type snippet struct {
	name string // page#n
	line int    // of the fence in the page
	code string
}

var fence = regexp.MustCompile("^( *)```(\\w*)\\s*$")

// snippets returns the Go snippets of README.md and docs/*.md under root,
// dedented as a list item indents them.
func snippets(t *testing.T, root string) []snippet {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	pages = append([]string{filepath.Join(root, "README.md")}, pages...)
	var out []snippet
	for _, page := range pages {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, page)
		n, in, indent := 0, false, ""
		var code []string
		for i, line := range strings.Split(string(b), "\n") {
			m := fence.FindStringSubmatch(line)
			switch {
			case m != nil && !in:
				in, indent, code = true, m[1], nil
				if m[2] == "go" {
					n++
					out = append(out, snippet{name: fmt.Sprintf("%s#%d", filepath.ToSlash(rel), n), line: i + 1})
				} else {
					indent = "\x00" + indent // not Go: skip to the closing fence
				}
			case m != nil && in && m[1] == strings.TrimPrefix(indent, "\x00"):
				if !strings.HasPrefix(indent, "\x00") {
					out[len(out)-1].code = strings.Join(code, "\n")
				}
				in = false
			case in:
				code = append(code, strings.TrimPrefix(line, indent))
			}
		}
	}
	return out
}

// exportData returns a lookup of the compiled export data of the packages
// in snippetImports and all they import, built by go list -export in this
// workspace, for the gc importer.
func exportData(t *testing.T) func(path string) (io.ReadCloser, error) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command")
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}
	for _, imp := range snippetImports {
		f := strings.Fields(imp)
		args = append(args, strings.Trim(f[len(f)-1], `"`))
	}
	out, err := exec.Command(goTool, args...).Output()
	require.NoError(t, err, "go list -export")
	files := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, " "); ok && file != "" {
			files[path] = file
		}
	}
	return func(path string) (io.ReadCloser, error) {
		file, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}
}

// TestDocSnippetsCompile compiles every Go snippet of README.md and docs/
// verbatim, as the body of a function given ctx and the variables in
// snippetVars, against the packages of the workspace: a snippet that no
// longer matches the API fails here. Only an unused variable or import is
// allowed, as a snippet shows a call and leaves its result.
func TestDocSnippetsCompile(t *testing.T) {
	t.Parallel()
	list := snippets(t, repoRoot(t))
	require.Greater(t, len(list), 10, "the docs' Go snippets")

	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", exportData(t))
	var names []string
	for _, s := range list {
		names = append(names, s.name)
		vars, ok := snippetVars[s.name]
		if !assert.True(t, ok, "%s (line %d) is not in snippetVars: add the variables it takes", s.name, s.line) {
			continue
		}
		if strings.HasPrefix(vars, "skip: ") {
			continue
		}
		params := "ctx context.Context"
		if vars != "" {
			params += ", " + vars
		}
		src := "package snippets\n\nimport (\n\t" + strings.Join(snippetImports, "\n\t") + "\n)\n\n" +
			"func snippet(" + params + ") error {\n//line " + s.name + ":" + fmt.Sprint(s.line+1) + "\n" + s.code + "\nreturn nil\n}\n"
		f, err := parser.ParseFile(fset, s.name+".go", src, parser.SkipObjectResolution)
		if !assert.NoError(t, err, "%s does not parse as statements", s.name) {
			continue
		}
		var hard []string
		conf := types.Config{Importer: imp, Error: func(err error) {
			var te types.Error
			if errors.As(err, &te) && te.Soft && strings.Contains(te.Msg, "not used") {
				return
			}
			hard = append(hard, err.Error())
		}}
		_, _ = conf.Check("snippets", fset, []*ast.File{f}, nil)
		assert.Empty(t, hard, "%s does not compile against the workspace's packages:\n%s", s.name, s.code)
	}
	for name := range snippetVars {
		if strings.Contains(name, "#") {
			assert.Contains(t, names, name, "snippetVars names %s, which the docs no longer have", name)
		}
	}
	sort.Strings(names)
	t.Logf("%d snippets: %s", len(names), strings.Join(names, " "))
}
