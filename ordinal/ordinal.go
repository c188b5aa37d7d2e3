// Package ordinal takes a node number from a Kubernetes StatefulSet pod's
// ordinal, the stable index N in a pod named "<set>-N", for fleets that
// need node numbers without etcd.
//
// A StatefulSet of fixed size gives each pod a distinct ordinal, 0 to
// replicas-1, that it keeps across restarts, and never runs two pods with
// the same ordinal at once (pods are replaced, not doubled, unless the set
// is force-deleted). That is exactly a node number, and it is enough when:
//
//   - one StatefulSet issues IDs in each node range (per datacenter, say),
//     so the ordinal plus the range's first node is unique in the fleet;
//   - the set scales within the range, and a scaled-down pod's number is
//     free again once it is gone.
//
// Take a claim in etcd (package fleet) instead when several StatefulSets or
// Deployments share a range, when pods may be force-deleted or run outside
// Kubernetes, or when a stuck node must give up its number by a deadline.
//
// Never derive node numbers from a hash of the hostname or IP address:
// with 38 nodes in a 10-bit field, two share a number with more than even
// odds (the birthday bound), and nothing tells them apart.
//
// The ordinal comes from the environment variable POD_INDEX when set (pass
// the label apps.kubernetes.io/pod-index through the downward API), else
// from the hostname's "-N" suffix:
//
//	env:
//	- name: POD_INDEX
//	  valueFrom:
//	    fieldRef:
//	      fieldPath: metadata.labels['apps.kubernetes.io/pod-index']
package ordinal

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/idkit/idkit"
	"github.com/idkit/idkit/internal/errkind"
)

// EnvPodIndex is the environment variable Ordinal reads first.
const EnvPodIndex = "POD_INDEX"

// ErrInvalid reports an ordinal that cannot be read or does not fit the
// node range.
var ErrInvalid = errkind.New(idkit.ErrInvalid, "ordinal: invalid")

// Ordinal returns this pod's ordinal: POD_INDEX if set, else the suffix of
// the hostname.
func Ordinal() (int, error) {
	if v, ok := os.LookupEnv(EnvPodIndex); ok {
		n, err := parse(v)
		if err != nil {
			return 0, fmt.Errorf("%w: %s=%q, want a pod index 0 or more", ErrInvalid, EnvPodIndex, v)
		}
		return n, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return 0, fmt.Errorf("%w: no %s and no hostname: %w", ErrInvalid, EnvPodIndex, err)
	}
	return FromHostname(host)
}

// FromHostname returns the ordinal N of a StatefulSet pod's hostname
// "<set>-N".
func FromHostname(host string) (int, error) {
	i := strings.LastIndexByte(host, '-')
	if i < 1 {
		return 0, fmt.Errorf("%w: hostname %q has no -N suffix, want a StatefulSet pod name such as web-3 (or set %s)", ErrInvalid, host, EnvPodIndex)
	}
	n, err := parse(host[i+1:])
	if err != nil {
		return 0, fmt.Errorf("%w: hostname %q ends in %q, want -N with N a pod index 0 or more (or set %s)", ErrInvalid, host, host[i:], EnvPodIndex)
	}
	return n, nil
}

// Node returns the node number of ordinal n in the range lo to hi: lo+n,
// or an error if the set has more pods than the range has nodes. For a
// Snowflake layout with a datacenter field, lo and hi come from
// snowflake.Layout.NodeRange with the datacenter fixed.
func Node(n, lo, hi int) (int, error) {
	if lo < 0 || hi < lo {
		return 0, fmt.Errorf("%w: node range %d to %d, want 0 <= lo <= hi", ErrInvalid, lo, hi)
	}
	if n < 0 || n > hi-lo {
		return 0, fmt.Errorf("%w: ordinal %d, want 0 to %d for nodes %d to %d", ErrInvalid, n, hi-lo, lo, hi)
	}
	return lo + n, nil
}

// parse reads a decimal pod index without sign or leading zeros.
func parse(s string) (int, error) {
	if s == "" || (len(s) > 1 && s[0] == '0') || s[0] == '+' || s[0] == '-' {
		return 0, strconv.ErrSyntax
	}
	return strconv.Atoi(s)
}
