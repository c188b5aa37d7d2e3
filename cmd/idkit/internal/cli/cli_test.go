package cli

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseArgs(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		rest []string
		json bool
	}{
		{[]string{"1"}, []string{"1"}, false},
		{[]string{"--json", "1"}, []string{"1"}, true},
		{[]string{"1", "--json"}, []string{"1"}, true},
		{[]string{"1", "--json", "2"}, []string{"1", "2"}, true},
		{[]string{"--", "--json"}, []string{"--json"}, false},
		{[]string{"1", "--", "--json", "-x"}, []string{"1", "--json", "-x"}, false},
		{nil, nil, false},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			fs := NewFlags("test")
			asJSON := fs.Bool("json", false, "")
			rest, err := parseArgs(fs, tt.args)
			assert.NoError(t, err)
			assert.Equal(t, tt.rest, rest)
			assert.Equal(t, tt.json, *asJSON)
		})
	}
}

// nearest suggests a name only when one is clearly what was meant.
func TestNearest(t *testing.T) {
	t.Parallel()
	names := []string{"node", "n", "log", "wait", "thread-bits", "etcd", "etcd-user", "etcd-key"}
	for _, tt := range []struct{ in, want string }{
		{"nod", "node"},
		{"ndoe", "node"},
		{"NODE", "node"},
		{"thread-bit", "thread-bits"},
		{"threadbits", "thread-bits"},
		{"lgo", "log"},
		{"zzz", ""},
		{"x", ""},
		{"etcd-usr", "etcd-user"},
		{"etcd-k", "etcd-key"},
		{"etc", "etcd"},
		{"etcd-", "etcd"},
	} {
		assert.Equal(t, tt.want, nearest(tt.in, names), tt.in)
	}
}
