package instagram_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/instagram"
)

// The tests that run next_id() in PostgreSQL are in
// internal/testkit/suites/crosscheck, a module of its own, so that the core
// module needs no database driver.

func TestInvalid(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		o    instagram.Options
		want string
	}{
		{instagram.Options{Shard: -1}, "Options.Shard = -1, want 0 to 8191"},
		{instagram.Options{Shard: 8192}, "Options.Shard = 8192, want 0 to 8191"},
		{instagram.Options{Schema: "Shard5"}, `Options.Schema = "Shard5", want 1 to 63 lower-case`},
		{instagram.Options{Schema: "a; drop table x"}, `Options.Schema = "a; drop table x"`},
		{instagram.Options{Sequence: "1seq"}, `Options.Sequence = "1seq"`},
	} {
		_, err := instagram.SQL(tt.o)
		assert.ErrorIs(t, err, instagram.ErrInvalid)
		assert.ErrorContains(t, err, tt.want)
	}
	sql, err := instagram.SQL(instagram.Options{})
	require.NoError(t, err)
	assert.Contains(t, sql, "CREATE OR REPLACE FUNCTION public.next_id(")
	assert.Contains(t, sql, "nextval('public.next_id_seq') % 1024")
}
