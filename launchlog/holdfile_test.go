//go:build !linux

package launchlog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestHoldFileName(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]string{
		"traceid/node/7": "traceid%2Fnode%2F7.lock",
		"snowflake/twitter/datacenter=0,worker=7": "snowflake%2Ftwitter%2Fdatacenter=0,worker=7.lock",
		"..":      "...lock",
		"a b\x00": "a%20b%00.lock",
	} {
		assert.Equal(t, want, holdFileName(key), "%q", key)
	}
	long1, long2 := strings.Repeat("k", 1000)+"1", strings.Repeat("k", 1000)+"2"
	n1, n2 := holdFileName(long1), holdFileName(long2)
	assert.LessOrEqual(t, len(n1), 255, "a file name's limit")
	assert.NotEqual(t, n1, n2, "long keys that differ at the end")
	assert.NotEqual(t, holdFileName("a/b"), holdFileName("a%2Fb"), "escapes do not collide with keys")
}
