//go:build linux

package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var deployDir = filepath.Join("..", "..", "..", "..", "deploy")

// TestDeployFiles reads the deploy directory as the harness does, without
// root: the unit's ExecStart takes every variable from idkit.env and
// every secret from a credential it loads from /etc/idkit; etcd serves
// clients and peers over TLS with client certificates, and the
// authentication script gives idkit its prefix alone; HAProxy accepts
// its configuration and sends the PROXY protocol to the servers, whose
// command line trusts it.
func TestDeployFiles(t *testing.T) {
	unit := filepath.Join(deployDir, "idkit.service")
	env, err := readEnvFile(filepath.Join(deployDir, "idkit.env"))
	require.NoError(t, err)
	argv, err := execStart(unit, env, "/run/credentials/idkit.service")
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/local/bin/idkit-full", "serve"}, argv[:2])
	assert.Contains(t, argv, "--etcd")
	assert.NotContains(t, argv, "--node", "each server claims its nodes")
	for _, flag := range []string{"--etcd-cacert", "--etcd-cert", "--etcd-key", "--tls-cert", "--tls-key", "--token-file", "--proxy-protocol"} {
		assert.Contains(t, argv, flag)
	}

	_, err = execStart(unit, map[string]string{}, "/run/credentials/idkit.service")
	assert.ErrorContains(t, err, "ExecStart uses ${IDKIT_ADDR}", "a variable the file does not set is named")

	// Every file the command line names is a credential the unit loads
	// from /etc/idkit, which only root reads: DynamicUser's user reads its
	// copy.
	creds, err := credentials(unit)
	require.NoError(t, err)
	loaded := make(map[string]bool)
	for _, c := range creds {
		assert.True(t, strings.HasPrefix(c[1], "/etc/idkit/"), "credential %s from %s", c[0], c[1])
		loaded[c[0]] = true
	}
	for _, arg := range argv {
		if name, ok := strings.CutPrefix(arg, "/run/credentials/idkit.service/"); ok {
			assert.True(t, loaded[name], "ExecStart reads %s, which no LoadCredential= loads", name)
		} else {
			assert.False(t, strings.HasPrefix(arg, "/etc/"), "ExecStart reads %s directly, which a DynamicUser cannot", arg)
		}
	}
	b, err := os.ReadFile(unit)
	require.NoError(t, err)
	assert.Contains(t, string(b), "\nDynamicUser=yes\n")
	_, err = specifiers("%h/x", "/c")
	assert.ErrorContains(t, err, `"%h/x" uses %h, which the harness does not expand`)

	flags, err := readEnvFile(filepath.Join(deployDir, "etcd.env"))
	require.NoError(t, err)
	for _, k := range []string{"ETCD_NAME", "ETCD_DATA_DIR", "ETCD_INITIAL_CLUSTER", "ETCD_INITIAL_CLUSTER_STATE", "ETCD_ELECTION_TIMEOUT",
		"ETCD_CERT_FILE", "ETCD_KEY_FILE", "ETCD_TRUSTED_CA_FILE", "ETCD_PEER_CERT_FILE", "ETCD_PEER_KEY_FILE", "ETCD_PEER_TRUSTED_CA_FILE"} {
		assert.Contains(t, flags, k)
	}
	assert.Equal(t, "true", flags["ETCD_CLIENT_CERT_AUTH"], "etcd requires client certificates")
	assert.Equal(t, "true", flags["ETCD_PEER_CLIENT_CERT_AUTH"], "etcd's peers require certificates")
	for _, k := range []string{"ETCD_LISTEN_PEER_URLS", "ETCD_LISTEN_CLIENT_URLS", "ETCD_INITIAL_ADVERTISE_PEER_URLS", "ETCD_ADVERTISE_CLIENT_URLS"} {
		assert.True(t, strings.HasPrefix(flags[k], "https://"), "%s=%s", k, flags[k])
	}
	for ep := range strings.SplitSeq(env["IDKIT_ETCD"], ",") {
		assert.True(t, strings.HasPrefix(ep, "https://"), "IDKIT_ETCD endpoint %s", ep)
	}

	auth, err := os.ReadFile(filepath.Join(deployDir, "etcd-auth.sh"))
	require.NoError(t, err)
	assert.Contains(t, string(auth), "etcdctl role grant-permission idkit readwrite idkit/ --prefix=true\n", "idkit's role is its prefix (serve's default --etcd-prefix)")
	assert.Equal(t, 1, strings.Count(string(auth), "grant-permission"), "idkit's role has no other permission")
	assert.Contains(t, string(auth), "\netcdctl auth enable\n")

	lb, err := os.ReadFile(filepath.Join(deployDir, "haproxy.cfg"))
	require.NoError(t, err)
	assert.Contains(t, string(lb), "send-proxy-v2", "the servers see each client's address")
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("haproxy is missing (apt-get install haproxy)")
		}
		t.Skip("haproxy is missing: the configuration is not checked")
	}
	check := exec.Command(haproxy, "-c", "-q", "-f", filepath.Join(deployDir, "haproxy.cfg"))
	check.Env = append(os.Environ(), "IDKIT_LB_ADDR=127.0.0.1:8443", "IDKIT_PROBE_PORT=8081",
		"IDKIT_S1=10.0.0.21:8443", "IDKIT_S2=10.0.0.22:8443", "IDKIT_S3=10.0.0.23:8443", "IDKIT_S4=10.0.0.24:8443")
	out, err := check.CombinedOutput()
	assert.NoError(t, err, "haproxy -c: %s", out)
}
