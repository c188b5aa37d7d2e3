package testwait

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLoadText(t *testing.T) {
	for _, tt := range []struct {
		loadavg string
		cores   int
		want    string
	}{
		{"25.13 20.02 12.50 3/512 4242\n", 2, "; load average 25.13 on 2 cores (1 min)"},
		{"0.00 0.01 0.05 1/100 1\n", 8, "; load average 0.00 on 8 cores (1 min)"},
		{"", 2, ""},
	} {
		assert.Equal(t, tt.want, loadText(tt.loadavg, tt.cores), "loadText(%q, %d)", tt.loadavg, tt.cores)
	}
}
