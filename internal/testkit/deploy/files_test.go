//go:build linux

package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var deployDir = filepath.Join("..", "..", "..", "deploy")

// TestDeployFiles reads the deploy directory as the harness does, without
// root: the unit's ExecStart takes every variable from idkit.env, the
// etcd flags set what the harness replaces, and HAProxy accepts its
// configuration.
func TestDeployFiles(t *testing.T) {
	env, err := readEnvFile(filepath.Join(deployDir, "idkit.env"))
	require.NoError(t, err)
	argv, err := execStart(filepath.Join(deployDir, "idkit.service"), env)
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/local/bin/idkit-full", "serve"}, argv[:2])
	assert.Contains(t, argv, "--etcd")
	assert.NotContains(t, argv, "--node", "each server claims its nodes")

	_, err = execStart(filepath.Join(deployDir, "idkit.service"), map[string]string{})
	assert.ErrorContains(t, err, "ExecStart uses ${IDKIT_ADDR}", "a variable the file does not set is named")

	flags, err := readEnvFile(filepath.Join(deployDir, "etcd.env"))
	require.NoError(t, err)
	for _, k := range []string{"ETCD_NAME", "ETCD_DATA_DIR", "ETCD_INITIAL_CLUSTER", "ETCD_INITIAL_CLUSTER_STATE", "ETCD_ELECTION_TIMEOUT"} {
		assert.Contains(t, flags, k)
	}

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
