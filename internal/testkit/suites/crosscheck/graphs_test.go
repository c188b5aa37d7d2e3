package crosscheck

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// consumer is a program outside the repository that imports one shipping
// module, as an adopter's would, with a test of its own.
type consumer struct {
	module string // the module it requires
	main   string // main.go
	test   string // main_test.go
	has    []string
	// never are prefixes of module paths that must not be in its module
	// graph: servers, drivers, RPC and telemetry stacks it did not ask
	// for, the peers' ID libraries, and idkit's test modules.
	never []string
}

var (
	// servers are the servers and embedded engines only tests and compare
	// run (github.com/cockroachdb/: Pebble, compare's LSM tree).
	servers  = []string{"go.etcd.io/etcd/server", "modernc.org/sqlite", "go.mongodb.org/mongo-driver", "github.com/cockroachdb/"}
	raft     = []string{"go.etcd.io/raft"} // etcd's consensus, which etcd's client modules require for their types
	drivers  = []string{"github.com/jackc/pgx", "github.com/go-sql-driver/mysql", "github.com/redis/go-redis"}
	rpc      = []string{"google.golang.org/grpc", "connectrpc.com/", "github.com/prometheus/", "go.opentelemetry.io/"}
	peerLibs = []string{"github.com/oklog/ulid", "github.com/rs/xid", "github.com/segmentio/ksuid", "github.com/bwmarrin/snowflake", "github.com/sony/sonyflake"}
	etcd     = []string{"go.etcd.io/etcd/"}
	tests    = []string{core + "/internal/"} // the test kit's modules and the release tool
)

func without(lists ...[]string) []string { return slices.Concat(lists...) }

// withoutDriver is drivers but the one a store asks for.
func withoutDriver(keep string) []string {
	return slices.DeleteFunc(slices.Clone(drivers), func(d string) bool { return d == keep })
}

// errorTest is a consumer test: use() fails for the bad input it gives,
// with an error, not a panic.
const errorTest = `package main

import "testing"

func TestUse(t *testing.T) {
	if err := use(); err == nil {
		t.Fatal("bad input was accepted")
	} else {
		t.Log(err)
	}
}
`

var consumers = []consumer{{
	module: core,
	main: `package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/idkit/idkit/launchlog"
	"github.com/idkit/idkit/traceid"
)

func use() error {
	log, err := launchlog.New(launchlog.Options{Path: filepath.Join(os.TempDir(), "consumer-idkit.db")})
	if err != nil {
		return err
	}
	_, err = traceid.New(context.Background(), traceid.Options{Node: -1, Store: log})
	return err
}

func main() { fmt.Println(use()) }
`,
	test:  errorTest,
	has:   []string{"go.etcd.io/bbolt", "golang.org/x/sys"},
	never: without(servers, raft, drivers, rpc, peerLibs, etcd, tests),
}, {
	module: core + "/fleet",
	main: `package main

import (
	"fmt"

	"github.com/idkit/idkit/fleet"
)

func use() error {
	_, err := fleet.NewLog(fleet.LogOptions{})
	return err
}

func main() { fmt.Println(use()) }
`,
	test: errorTest,
	has:  []string{"go.etcd.io/etcd/client/v3"},
	// etcd's client brings gRPC, Prometheus' client and raft's types with
	// it: what any program on etcd's client has.
	never: without(servers, drivers, []string{"connectrpc.com/"}, peerLibs, tests),
}, {
	module: core + "/segment/pgstore",
	main: `package main

import (
	"context"
	"fmt"

	"github.com/idkit/idkit/segment/pgstore"
)

func use() error {
	_, err := pgstore.Open(context.Background(), "not a dsn", pgstore.Options{})
	return err
}

func main() { fmt.Println(use()) }
`,
	test:  errorTest,
	has:   []string{"github.com/jackc/pgx/v5"},
	never: without(servers, raft, withoutDriver("github.com/jackc/pgx"), rpc, peerLibs, etcd, tests),
}, {
	module: core + "/segment/mysqlstore",
	main: `package main

import (
	"context"
	"fmt"

	"github.com/idkit/idkit/segment/mysqlstore"
)

func use() error {
	_, err := mysqlstore.Open(context.Background(), "not a dsn", mysqlstore.Options{})
	return err
}

func main() { fmt.Println(use()) }
`,
	test:  errorTest,
	has:   []string{"github.com/go-sql-driver/mysql"},
	never: without(servers, raft, withoutDriver("github.com/go-sql-driver/mysql"), rpc, peerLibs, etcd, tests),
}, {
	module: core + "/segment/redisstore",
	main: `package main

import (
	"context"
	"fmt"

	"github.com/idkit/idkit/segment/redisstore"
)

func use() error {
	_, err := redisstore.Open(context.Background(), "", redisstore.Options{})
	return err
}

func main() { fmt.Println(use()) }
`,
	test:  errorTest,
	has:   []string{"github.com/redis/go-redis/v9"},
	never: without(servers, raft, withoutDriver("github.com/redis/go-redis"), rpc, peerLibs, etcd, tests),
}, {
	module: core + "/otelid",
	main: `package main

import (
	"context"
	"fmt"

	"github.com/idkit/idkit/otelid"
)

func use() error {
	_, err := otelid.NewIDGenerator(context.Background(), nil, otelid.Options{})
	return err
}

func main() { fmt.Println(use()) }
`,
	test:  errorTest,
	has:   []string{"go.opentelemetry.io/otel/sdk"},
	never: without(servers, raft, drivers, []string{"github.com/prometheus/", "connectrpc.com/"}, peerLibs, etcd, tests),
}, {
	module: core + "/proto",
	main: `package main

import (
	"fmt"

	idkitv1 "github.com/idkit/idkit/proto/idkit/v1"
)

func use() error {
	return fmt.Errorf("the service is %s", idkitv1.File_idkit_v1_idkit_proto.Services().Get(0).FullName())
}

func main() { fmt.Println(use()) }
`,
	test: errorTest,
	has:  []string{"connectrpc.com/connect", "google.golang.org/protobuf"},
	// gRPC's own module brings OpenTelemetry's API with it.
	never: without(servers, raft, drivers, []string{"github.com/prometheus/"}, peerLibs, etcd, tests),
}, {
	module: core + "/compare",
	main: `package main

import (
	"fmt"

	"github.com/idkit/idkit/compare"
)

func use() error {
	_, err := compare.Lookup("no-such-scheme")
	return err
}

func main() { fmt.Println(use()) }
`,
	test: errorTest,
	// compare measures the peers' libraries, on Pebble, SQLite and the
	// servers' drivers; it runs no server of its own.
	has:   []string{"github.com/cockroachdb/pebble/v2", "modernc.org/sqlite", "github.com/jackc/pgx/v5", "github.com/go-sql-driver/mysql", "github.com/oklog/ulid/v2"},
	never: without([]string{"go.etcd.io/etcd/server", "go.mongodb.org/mongo-driver"}, tests),
}, {
	module: core + "/serve",
	main: `package main

import (
	"context"
	"fmt"

	"github.com/idkit/idkit/serve"
)

func use() error {
	_, err := serve.New(context.Background(), serve.Options{})
	return err
}

func main() { fmt.Println(use()) }
`,
	test:  errorTest,
	has:   []string{"github.com/prometheus/client_golang", "connectrpc.com/connect"},
	never: without(servers, raft, drivers, peerLibs, etcd, tests),
}}

// TestModuleGraphs builds, outside the repository, a program that imports
// one shipping module, for each of them, and runs its test: its module
// graph (go list -m all) holds what the module needs, and nothing a
// program importing only it did not ask for: no etcd server, no driver of
// another database, no RPC or telemetry stack but its own, no peer ID
// library, no test module of idkit.
//
// The programs require the modules at the version in VERSION, served from
// the repository's directories (a replace in the program's go.mod, where
// only a main module's replace counts), or, as the release check runs
// this test, from the module proxy of IDKIT_RELEASE_PROXY at
// IDKIT_RELEASE_VERSION, as a user outside the repository gets them.
func TestModuleGraphs(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	version := strings.TrimSpace(string(must(os.ReadFile(filepath.Join(root, "VERSION")))))
	proxy := os.Getenv("IDKIT_RELEASE_PROXY")
	if proxy != "" {
		version = os.Getenv("IDKIT_RELEASE_VERSION")
		require.NotEmpty(t, version, "IDKIT_RELEASE_VERSION, the version the proxy serves")
	}
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go command")
	shipping := shippingModules(t, goTool, root)
	for _, m := range shipping {
		assert.True(t, m == core+"/cmd/idkit" || slices.ContainsFunc(consumers, func(c consumer) bool { return c.module == m }),
			"%s ships, and no consumer here holds its module graph", m)
	}
	for _, c := range consumers {
		t.Run(strings.TrimPrefix(c.module, core+"/"), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			goMod := "module example.com/consumer\n\ngo 1.26.0\n\nrequire " + c.module + " " + version + "\n"
			if proxy == "" {
				for _, m := range shipping {
					goMod += "\nreplace " + m + " => " + filepath.Join(root, strings.TrimPrefix(strings.TrimPrefix(m, core), "/")) + "\n"
				}
			}
			for name, text := range map[string]string{"go.mod": goMod, "main.go": c.main, "main_test.go": c.test} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
			}
			run := func(args ...string) string {
				cmd := exec.Command(goTool, args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
				if proxy != "" {
					cmd.Env = append(cmd.Env, "GOPROXY="+proxy, "GONOSUMDB="+core)
				}
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
				return string(out)
			}
			run("mod", "tidy")
			run("vet", ".")
			run("test", "-count=1", ".")
			graph := strings.Fields(run("list", "-m", "-f", "{{if not .Main}}{{.Path}}{{end}}", "all"))
			t.Logf("go list -m all: %d modules: %s", len(graph), strings.Join(graph, " "))
			assert.Contains(t, graph, c.module)
			for _, h := range c.has {
				assert.Contains(t, graph, h, "what %s needs", c.module)
			}
			for _, m := range graph {
				for _, n := range c.never {
					assert.False(t, strings.HasPrefix(m, n), "%s is in the module graph of a program that imports only %s", m, c.module)
				}
			}
		})
	}
}

// shippingModules returns the modules that idkit publishes: those of the
// workspace but those under internal/: the test kit's modules and the
// release tool.
func shippingModules(t *testing.T, goTool, root string) []string {
	t.Helper()
	cmd := exec.Command(goTool, "work", "edit", "-json")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go work edit -json")
	var work struct{ Use []struct{ DiskPath string } }
	require.NoError(t, json.Unmarshal(out, &work))
	var mods []string
	for _, u := range work.Use {
		d := filepath.ToSlash(filepath.Clean(u.DiskPath))
		if d == "internal" || strings.HasPrefix(d, "internal/") {
			continue
		}
		if d == "." {
			mods = append(mods, core)
		} else {
			mods = append(mods, core+"/"+d)
		}
	}
	return mods
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
