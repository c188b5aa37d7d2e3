package publicid

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pinned are public IDs made by this construction under a fixed key, as
// it first produced them. Public IDs handed out must decode forever,
// so any change to the round function, the round count, the cycle walk or
// the text form fails here first: such a change needs a new key id, not an
// edit of these strings.
var pinned = []struct {
	domain Domain
	id     int64
	text   string
}{
	{Domain63, 1, "72FW5FNTKGS1WJ"},
	{Domain63, 9223372036854775807, "71FCJ5Z1XSXGTE"},
	{Domain53, 1, "75NG5RWK9DKM"},
	{Domain53, 9007199254740991, "76CH08Y7KZHN"},
}

func TestPinned(t *testing.T) {
	t.Parallel()
	key := Key{ID: 7, Secret: bytes.Repeat([]byte{0x5c}, 16)}
	for _, p := range pinned {
		c, err := New(p.domain, key)
		require.NoError(t, err)
		got, err := c.Encode(p.id)
		require.NoError(t, err)
		assert.Equal(t, p.text, got, "domain %d, ID %d", p.domain, p.id)
		back, err := c.Decode(p.text)
		require.NoError(t, err)
		assert.Equal(t, p.id, back)
	}
}
