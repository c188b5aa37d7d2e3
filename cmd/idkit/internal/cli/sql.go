package cli

import (
	"errors"
	"io"
	"strings"

	"github.com/idkit/idkit/instagram"
)

var cmdSQL = &Command{
	Name:  "sql",
	Usage: "sql instagram [--shard N] [--schema NAME] [--sequence NAME]",
	Short: "print SQL that makes a database issue IDs",
	Long: `
Sql prints SQL to run on a database so that the database itself issues IDs.

	instagram  Instagram's next_id() PL/pgSQL function for PostgreSQL, for
	           one logical shard: ms since 2011-08-24T21:07:01.721Z (40
	           bits, so that IDs stay positive; an error from 2046-06-27 on)
	           | shard (13 bits) | nextval % 1024 (10 bits). Its IDs decode
	           with "idkit inspect snowflake --preset instagram". It creates
	           the schema and the sequence if missing and replaces the
	           function. At most 1024 IDs per millisecond per shard: the
	           1025th call in a millisecond repeats the first one's ID
	           (a primary key refuses it), as in Instagram's original.

Flags:
  --shard N        logical shard, 0 to 8191 (default 0)
  --schema NAME    schema of the function and its sequence (default public)
  --sequence NAME  sequence the function draws from (default next_id_seq)

Examples:

	idkit sql instagram --shard 5 --schema shard5 | psql "$DSN"
	psql "$DSN" -c 'CREATE TABLE shard5.photos (id bigint PRIMARY KEY DEFAULT shard5.next_id())'
`,
	Run: runSQL,
}

func runSQL(c *Console, args []string) error {
	if len(args) == 0 {
		return Usagef("sql needs a kind: instagram")
	}
	if args[0] != "instagram" {
		return Usagef("sql: unknown kind %q, want instagram", args[0])
	}
	fs := NewFlags("sql")
	var o instagram.Options
	fs.IntVar(&o.Shard, "shard", 0, "logical shard")
	fs.StringVar(&o.Schema, "schema", instagram.DefaultSchema, "schema")
	fs.StringVar(&o.Sequence, "sequence", instagram.DefaultSequence, "sequence")
	if err := ParseFlags(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	sql, err := instagram.SQL(o)
	if errors.Is(err, instagram.ErrInvalid) {
		// The package names its Options fields; the command, its flags.
		return usageError{sqlFlags.Replace(strings.TrimPrefix(err.Error(), instagram.ErrInvalid.Error()+": "))}
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(c.Stdout, sql)
	return err
}

// sqlFlags turns the Options fields that instagram.SQL's errors name into
// the flags that set them.
var sqlFlags = strings.NewReplacer("Options.Shard =", "--shard", "Options.Schema =", "--schema", "Options.Sequence =", "--sequence")
