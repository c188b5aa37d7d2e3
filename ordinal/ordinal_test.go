package ordinal_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/ordinal"
	"github.com/idkit/idkit/snowflake"
	"github.com/idkit/idkit/traceid"
)

func TestFromHostname(t *testing.T) {
	for host, want := range map[string]int{"web-0": 0, "web-12": 12, "ids-east-7": 7} {
		n, err := ordinal.FromHostname(host)
		require.NoError(t, err, host)
		assert.Equal(t, want, n, host)
	}
	for _, host := range []string{"web", "-3", "web-", "web-07", "web-x", "web-+1", "web-1.5"} {
		_, err := ordinal.FromHostname(host)
		require.ErrorIs(t, err, ordinal.ErrInvalid, host)
		assert.Contains(t, err.Error(), "hostname")
	}
}

func TestOrdinalPrefersPodIndex(t *testing.T) {
	t.Setenv(ordinal.EnvPodIndex, "41")
	n, err := ordinal.Ordinal()
	require.NoError(t, err)
	assert.Equal(t, 41, n)

	t.Setenv(ordinal.EnvPodIndex, "x")
	_, err = ordinal.Ordinal()
	require.ErrorIs(t, err, ordinal.ErrInvalid)
	assert.Contains(t, err.Error(), `POD_INDEX="x"`)

	os.Unsetenv(ordinal.EnvPodIndex)
	host, err := os.Hostname()
	require.NoError(t, err)
	n, err = ordinal.Ordinal()
	if want, herr := ordinal.FromHostname(host); herr == nil {
		require.NoError(t, err)
		assert.Equal(t, want, n)
	} else {
		require.ErrorIs(t, err, ordinal.ErrInvalid)
	}
}

// The seed's fleet: 3 datacenters of up to 32 workers each on the Twitter
// layout, one StatefulSet per datacenter.
func TestNodePerDatacenter(t *testing.T) {
	l := snowflake.Twitter()
	seen := map[int]bool{}
	for dc := range int64(3) {
		lo, hi, err := l.NodeRange(map[string]int64{"datacenter": dc})
		require.NoError(t, err)
		for pod := range 32 {
			n, err := ordinal.Node(pod, int(lo), int(hi))
			require.NoError(t, err)
			fields, err := l.SplitNode(int64(n))
			require.NoError(t, err)
			assert.Equal(t, map[string]int64{"datacenter": dc, "worker": int64(pod)}, fields)
			require.False(t, seen[n])
			seen[n] = true
		}
		_, err = ordinal.Node(32, int(lo), int(hi))
		require.ErrorIs(t, err, ordinal.ErrInvalid)
		assert.Contains(t, err.Error(), "ordinal 32, want 0 to 31 for nodes")
	}
	n, err := ordinal.Node(7, 0, traceid.MaxNode)
	require.NoError(t, err)
	assert.Equal(t, 7, n)
	_, err = ordinal.Node(0, 5, 4)
	require.ErrorIs(t, err, ordinal.ErrInvalid)
}
