package compare

import (
	"context"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/idkit/idkit/compare/internal/scheme"

	"github.com/idkit/idkit/compare/internal/engine"
	"github.com/idkit/idkit/compare/internal/engine/innodb"
	"github.com/idkit/idkit/compare/internal/engine/postgres"

	"github.com/idkit/idkit/internal/testkit/testenv"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The plain-session tests load the same keys twice: through the engine,
// and through the server's own command-line client doing nothing but
// CREATE TABLE and INSERTs in 1,000-row batches. Index size and leaf
// density must agree within 10%: the report measures the engine, not a
// model of it.

const plainN = 100_000

// uuidKeys returns n random UUIDv4 keys from the registry's scheme.
func uuidKeys(t *testing.T, n int) engine.KeySet {
	t.Helper()
	s, err := scheme.Lookup("uuidv4")
	require.NoError(t, err)
	gens, err := s.New(1)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, scheme.CloseGenerators(gens)) })
	k, err := scheme.Generate(gens, s.KeyLen, n, nil)
	require.NoError(t, err)
	return k
}

// client runs a command-line client with script on stdin and returns its
// output, or skips when the client is not installed.
func client(t *testing.T, script string, name string, args ...string) string {
	t.Helper()
	bin := testenv.Tool(t, name, "install the server's client to run this test")
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", name, out)
	return string(out)
}

// lastFloats parses the last line of out as whitespace-separated numbers.
func lastFloats(t *testing.T, out string) []float64 {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var fs []float64
	for _, f := range strings.Fields(strings.ReplaceAll(lines[len(lines)-1], "|", " ")) {
		v, err := strconv.ParseFloat(f, 64)
		require.NoError(t, err, "in %q", out)
		fs = append(fs, v)
	}
	return fs
}

func TestPostgresAgreesWithPsql(t *testing.T) {
	t.Parallel()
	dsn := serverDSN(t, engine.EnvPostgresDSN)
	ctx := context.Background()
	keys := uuidKeys(t, plainN)
	value := make([]byte, DefaultValueSize)

	e, err := postgres.Open(ctx, dsn, "", false, engine.Limits{})
	require.NoError(t, err)
	got, err := e.Load(ctx, engine.Load{Keys: keys, Value: value, Batch: 1000, CheckpointEvery: 1000, Table: "plain"})
	require.NoError(t, e.Close(ctx))
	require.NoError(t, err)

	schema := "idkit_plain_" + engine.RunSuffix()
	var b strings.Builder
	fmt.Fprintf(&b, "SET client_min_messages = warning;\nCREATE SCHEMA %s;\nCREATE TABLE %s.t (id uuid PRIMARY KEY, payload bytea NOT NULL);\n", schema, schema)
	payload := `'\x` + hex.EncodeToString(value) + `'::bytea`
	for lo := 0; lo < plainN; lo += 1000 {
		b.WriteString("INSERT INTO " + schema + ".t (id, payload) VALUES ")
		for i := lo; i < lo+1000; i++ {
			if i > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "('%s', %s)", uuid.UUID(keys.At(i)), payload)
		}
		b.WriteString(";\n")
	}
	fmt.Fprintf(&b, "SELECT pg_relation_size('%[1]s.t_pkey'), avg_leaf_density FROM pgstatindex('%[1]s.t_pkey');\n", schema)
	fmt.Fprintf(&b, "DROP SCHEMA %s CASCADE;\n", schema)
	out := client(t, b.String(), "psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", dsn)
	want := lastFloats(t, out)
	require.Len(t, want, 2, "in %q", out)
	// The statements' own WAL is part of the server's WAL over the load.
	assert.GreaterOrEqual(t, got.Metrics["wal_bytes_lsn"], got.Metrics["wal_bytes"])
	assert.Positive(t, got.Metrics["wal_bytes"])
	t.Logf("engine: index %v bytes, density %v; psql: index %v bytes, density %v%%",
		got.Metrics["index_bytes"], got.Metrics["leaf_density"], want[0], want[1])
	assert.InEpsilon(t, want[0], got.Metrics["index_bytes"], 0.10, "index size")
	assert.InEpsilon(t, want[1]/100, got.Metrics["leaf_density"], 0.10, "leaf density")
}

func TestMySQLAgreesWithMariadbClient(t *testing.T) {
	t.Parallel()
	dsn := serverDSN(t, engine.EnvMySQLDSN)
	ctx := context.Background()
	keys := uuidKeys(t, plainN)
	value := make([]byte, DefaultValueSize)

	e, err := innodb.Open(ctx, dsn, "", false, engine.Limits{})
	require.NoError(t, err)
	got, err := e.Load(ctx, engine.Load{Keys: keys, Value: value, Batch: 1000, CheckpointEvery: 1000, Table: "plain"})
	require.NoError(t, e.Close(ctx))
	require.NoError(t, err)

	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	host, port := cfg.Addr, "3306"
	if h, p, ok := strings.Cut(cfg.Addr, ":"); ok {
		host, port = h, p
	}
	args := []string{"-N", "-B", "-u" + cfg.User, "-h" + host, "-P" + port}
	if cfg.Passwd != "" {
		args = append(args, "-p"+cfg.Passwd)
	}
	db := "idkit_plain_" + engine.RunSuffix()
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE DATABASE %[1]s;\nCREATE TABLE %[1]s.t (id BINARY(16) NOT NULL PRIMARY KEY, payload BINARY(%d) NOT NULL) ENGINE=InnoDB;\n", db, len(value))
	payload := "0x" + hex.EncodeToString(value)
	for lo := 0; lo < plainN; lo += 1000 {
		b.WriteString("INSERT INTO " + db + ".t (id, payload) VALUES ")
		for i := lo; i < lo+1000; i++ {
			if i > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "(0x%x, %s)", keys.At(i), payload)
		}
		b.WriteString(";\n")
	}
	// data_length is the clustered index: the rows live in it.
	fmt.Fprintf(&b, "ANALYZE TABLE %s.t;\n", db)
	fmt.Fprintf(&b, "SELECT (SELECT data_length FROM information_schema.tables WHERE table_schema = '%[1]s' AND table_name = 't'), "+
		"(SELECT sum(data_size) / (count(*) * @@innodb_page_size) FROM information_schema.INNODB_BUFFER_PAGE "+
		"WHERE table_name = '`%[1]s`.`t`' AND index_name = 'PRIMARY' AND page_type = 'INDEX');\n", db)
	out := client(t, b.String()+fmt.Sprintf("DROP DATABASE %s;\n", db), "mariadb", args...)
	want := lastFloats(t, out)
	require.Len(t, want, 2, "in %q", out)
	t.Logf("engine: index %v bytes, density %v; mariadb: index %v bytes, density %v",
		got.Metrics["index_bytes"], got.Metrics["leaf_density"], want[0], want[1])
	assert.InEpsilon(t, want[0], got.Metrics["index_bytes"], 0.10, "clustered index size")
	assert.InEpsilon(t, want[1], got.Metrics["leaf_density"], 0.10, "leaf density")
}
