package compare

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/compare/internal/scheme"
)

// TestDefaultRunLeavesShardsOut: without Spider, the schemes made for
// shards stay out of a run of every scheme, which keeps its length.
func TestDefaultRunLeavesShardsOut(t *testing.T) {
	o, err := Options{}.withDefaults()
	require.NoError(t, err)
	for _, s := range scheme.ForShards() {
		assert.False(t, slices.ContainsFunc(o.Schemes, func(x scheme.Scheme) bool { return x.Name == s.Name }), s.Name)
		_, err := scheme.Lookup(s.Name)
		assert.NoError(t, err, "%s can be named", s.Name)
	}
	o, err = Options{Engine: Spider}.withDefaults()
	require.NoError(t, err)
	assert.True(t, o.Spider)
	assert.Empty(t, o.Engine, "the verdict stays on the single server")
	_, err = Options{Engine: Spider, Shards: 1}.withDefaults()
	assert.ErrorIs(t, err, ErrOptions)
	assert.ErrorContains(t, err, "Shards = 1, want 0 (default 4) or 2..=16")
}
