package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/idkit/idkit/cmd/idkit/internal/cli"
	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
	"github.com/idkit/idkit/fleet/fleettest"
	"github.com/idkit/idkit/internal/testkit/testcert"
	"github.com/idkit/idkit/internal/testkit/testwait"
)

// failDialTimeout is the dial timeout of the calls that must fail: each
// must end with its message within it (and the time a loaded machine
// takes to run the command), never hang.
const failDialTimeout = 2 * time.Second

// idkitBounded runs idkit as idkit does, and fails t if the command has
// not returned within testwait.Bound. It returns how long it ran.
func idkitBounded(t *testing.T, args ...string) (code int, stdout, stderr string, took time.Duration) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
		took           time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		code, stdout, stderr := clitest.Run(args...)
		done <- result{code, stdout, stderr, time.Since(start)}
	}()
	r := testwait.Recv(t, done, "end of idkit "+strings.Join(args, " "))
	return r.code, r.stdout, r.stderr, r.took
}

// requireOneLineFailure checks a call that must fail on etcd: exit
// status 1, nothing on stdout, one line on stderr holding want, within
// the dial timeout and the time the command takes besides.
func requireOneLineFailure(t *testing.T, code int, stdout, stderr string, took time.Duration, want string) {
	t.Helper()
	t.Logf("took %v: %s", took.Round(time.Millisecond), stderr)
	assert.Equal(t, 1, code, stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	assert.True(t, strings.HasSuffix(stderr, "\n"), "one line: %q", stderr)
	assert.Contains(t, stderr, want)
	// The dial timeout and more than a command takes besides, on a
	// machine loaded many times over: a hang would take cli.EtcdTimeout at
	// every retry, or forever.
	assert.Less(t, took, failDialTimeout+10*time.Second, "a failure within the dial timeout")
}

// tlsSetup is a member that requires client certificates, and the files
// of a client.
type tlsSetup struct {
	endpoint, prefix string
	ca, cert, key    string // the member's CA, a client certificate it signed
	otherCA          string // a CA that did not sign the member's certificate
	otherCert        string // a client certificate of otherCA, and
	otherKey         string // its key
	passwordFile     string // a password, which this member does not ask for
}

func startTLS(t *testing.T) tlsSetup {
	t.Helper()
	ca := testcert.NewCA(t)
	cluster := fleettest.StartWith(t, fleettest.Options{CA: ca.TLS()})
	dir := t.TempDir()
	s := tlsSetup{endpoint: cluster.Endpoint(0), prefix: fleettest.Prefix(t, cluster.Client())}
	s.ca = ca.WriteCA(t, dir, "ca")
	s.cert, s.key = ca.Issue(t, dir, "idkit-client", 2, false)
	other := testcert.NewCA(t)
	s.otherCA = other.WriteCA(t, dir, "other-ca")
	s.otherCert, s.otherKey = other.Issue(t, dir, "stranger", 2, false)
	s.passwordFile = filepath.Join(dir, "password")
	testcert.WriteFile(t, s.passwordFile, []byte("tls-pw\n"))
	return s
}

// TestEtcdClientTLS runs launch begin and nodes against a member that
// serves TLS only and requires a client certificate: with the right CA,
// certificate and key they work; with a wrong CA, without a client
// certificate or with one the member does not trust each fails with one
// line that names the problem, within the dial timeout.
func TestEtcdClientTLS(t *testing.T) {
	t.Parallel()
	s := startTLS(t)
	etcd := []string{"--etcd", s.endpoint, "--etcd-prefix", s.prefix}

	good := append([]string{"--etcd-cacert", s.ca, "--etcd-cert", s.cert, "--etcd-key", s.key}, etcd...)
	code, stdout, stderr, _ := idkitBounded(t, append([]string{"launch", "begin", "--ticket", "TLS-1"}, good...)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "1\n", stdout)
	code, stdout, stderr, _ = idkitBounded(t, append([]string{"new", "traceid", "-n", "2"}, good...)...)
	require.Equal(t, 0, code, stderr)
	assert.Len(t, strings.Fields(stdout), 2, "IDs on a node claimed through TLS")
	code, stdout, stderr, _ = idkitBounded(t, append([]string{"nodes", "--json"}, good...)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "[]\n", stdout, "the claim of new is released")

	timeout := []string{"--etcd-dial-timeout", failDialTimeout.String()}
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"wrong CA", []string{"--etcd-cacert", s.otherCA, "--etcd-cert", s.cert, "--etcd-key", s.key},
			"etcd: TLS: certificate signed by unknown authority (check --etcd-cacert)"},
		{"the system's CAs", []string{"--etcd-cert", s.cert, "--etcd-key", s.key},
			"etcd: TLS: certificate signed by unknown authority (check --etcd-cacert)"},
		{"wrong CA, with a user", []string{"--etcd-cacert", s.otherCA, "--etcd-cert", s.cert, "--etcd-key", s.key,
			"--etcd-user", "deploy", "--etcd-password-file", s.passwordFile},
			"etcd: TLS: certificate signed by unknown authority (check --etcd-cacert)"},
		{"no client certificate", []string{"--etcd-cacert", s.ca},
			"etcd: TLS: the server requires a client certificate (give --etcd-cert and --etcd-key)"},
		{"client certificate of another CA", []string{"--etcd-cacert", s.ca, "--etcd-cert", s.otherCert, "--etcd-key", s.otherKey},
			"etcd: TLS: the server refused the client certificate: unknown certificate authority (check --etcd-cert and --etcd-key)"},
	} {
		for _, cmd := range [][]string{{"launch", "begin"}, {"nodes"}} {
			t.Run(tc.name+"/"+strings.Join(cmd, " "), func(t *testing.T) {
				t.Parallel()
				args := append(append(append(slices.Clone(cmd), tc.flags...), timeout...), etcd...)
				code, stdout, stderr, took := idkitBounded(t, args...)
				requireOneLineFailure(t, code, stdout, stderr, took, tc.want)
			})
		}
	}
}

// The TLS flags come from IDKIT_ETCD_* when not given, and a flag wins
// over its variable.
func TestEtcdClientTLSFromEnv(t *testing.T) {
	s := startTLS(t)
	t.Setenv(cli.EnvEtcdEndpoints, s.endpoint)
	t.Setenv(cli.EnvEtcdCACert, s.ca)
	t.Setenv(cli.EnvEtcdCert, s.cert)
	t.Setenv(cli.EnvEtcdKey, s.key)
	code, stdout, stderr, _ := idkitBounded(t, "launch", "begin", "--etcd-prefix", s.prefix)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "1\n", stdout, "the launch log in etcd, as $IDKIT_ETCD_ENDPOINTS says")
	code, stdout, stderr, _ = idkitBounded(t, "nodes", "--etcd-prefix", s.prefix)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "SPACE")

	t.Setenv(cli.EnvEtcdDialTimeout, failDialTimeout.String())
	for _, cmd := range [][]string{{"launch", "begin"}, {"nodes"}} {
		code, stdout, stderr, took := idkitBounded(t, append(cmd, "--etcd-prefix", s.prefix, "--etcd-cacert", s.otherCA)...)
		requireOneLineFailure(t, code, stdout, stderr, took, "certificate signed by unknown authority (check --etcd-cacert)")
	}
	t.Setenv(cli.EnvEtcdCACert, s.otherCA)
	for _, cmd := range [][]string{{"launch", "current"}, {"nodes"}} {
		code, stdout, stderr, took := idkitBounded(t, append(cmd, "--etcd-prefix", s.prefix)...)
		requireOneLineFailure(t, code, stdout, stderr, took, "certificate signed by unknown authority (check $IDKIT_ETCD_CACERT)")
		code, stdout, stderr, _ = idkitBounded(t, append(cmd, "--etcd-prefix", s.prefix, "--etcd-cacert", s.ca)...)
		assert.Equal(t, 0, code, "the flag wins over $IDKIT_ETCD_CACERT: %s", stderr)
		assert.NotEmpty(t, stdout)
	}
}

// authSetup is a member with authentication on and a user of a role that
// may write under the test's prefix.
type authSetup struct {
	endpoint, prefix string
	user, password   string
	passwordFile     string
}

func startAuth(t *testing.T) authSetup {
	t.Helper()
	s := authSetup{user: "deploy", password: "pw-" + strings.ReplaceAll(t.Name(), "/", "-") + "-7f3a9c"}
	cluster := fleettest.StartWith(t, fleettest.Options{Users: map[string]string{s.user: s.password}})
	s.endpoint, s.prefix = cluster.Endpoint(0), fleettest.Prefix(t, cluster.Client())
	s.passwordFile = filepath.Join(t.TempDir(), "password")
	testcert.WriteFile(t, s.passwordFile, []byte(s.password+"\n"))
	return s
}

// requireNoSecret fails t if out shows password.
func requireNoSecret(t *testing.T, password string, out ...string) {
	t.Helper()
	for _, o := range out {
		assert.NotContains(t, o, password, "the password appears in the output")
	}
}

// TestEtcdAuth runs launch begin and nodes against a member with
// authentication on: with the user and the password from a file they
// work; with a bad password or no user each fails with one line that
// names the problem, within the dial timeout. The password never appears
// in the output.
func TestEtcdAuth(t *testing.T) {
	t.Parallel()
	s := startAuth(t)
	etcd := []string{"--etcd", s.endpoint, "--etcd-prefix", s.prefix}
	good := append([]string{"--etcd-user", s.user, "--etcd-password-file", s.passwordFile}, etcd...)

	code, stdout, stderr, _ := idkitBounded(t, append([]string{"launch", "begin", "--by", "ci"}, good...)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "1\n", stdout)
	requireNoSecret(t, s.password, stdout, stderr)
	code, stdout, stderr, _ = idkitBounded(t, append([]string{"nodes", "--json"}, good...)...)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "[]\n", stdout)
	requireNoSecret(t, s.password, stdout, stderr)

	dir := t.TempDir()
	wrong := filepath.Join(dir, "wrong")
	const wrongPassword = "not-the-password-31d9"
	testcert.WriteFile(t, wrong, []byte(wrongPassword+"\n"))
	timeout := []string{"--etcd-dial-timeout", failDialTimeout.String()}
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"bad password", []string{"--etcd-user", s.user, "--etcd-password-file", wrong},
			"etcd: authentication failed for user deploy (check --etcd-user and the password)"},
		{"unknown user", []string{"--etcd-user", "nobody", "--etcd-password-file", s.passwordFile},
			"etcd: authentication failed for user nobody (check --etcd-user and the password)"},
		{"no user", nil, "etcd: authentication required"},
	} {
		for _, cmd := range [][]string{{"launch", "begin"}, {"nodes"}} {
			t.Run(tc.name+"/"+strings.Join(cmd, " "), func(t *testing.T) {
				t.Parallel()
				args := append(append(append(slices.Clone(cmd), tc.flags...), timeout...), etcd...)
				code, stdout, stderr, took := idkitBounded(t, args...)
				requireOneLineFailure(t, code, stdout, stderr, took, tc.want)
				requireNoSecret(t, s.password, stdout, stderr)
				requireNoSecret(t, wrongPassword, stdout, stderr)
			})
		}
	}

	// No password on the command line: there is no flag for one.
	code, _, stderr = clitest.Run(append([]string{"nodes", "--etcd-user", s.user, "--etcd-password=" + s.password}, etcd...)...)
	assert.Equal(t, 2, code, stderr)
	requireNoSecret(t, s.password, stderr)
	code, _, stderr = clitest.Run(append([]string{"launch", "begin", "--etcd-user", s.user}, etcd...)...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, "--etcd-user deploy has no password")
}

// The user and the password come from IDKIT_ETCD_USER and
// IDKIT_ETCD_PASSWORD; a bad one fails without showing it.
func TestEtcdAuthFromEnv(t *testing.T) {
	s := startAuth(t)
	t.Setenv(cli.EnvEtcdEndpoints, s.endpoint)
	t.Setenv(cli.EnvEtcdUser, s.user)
	t.Setenv(cli.EnvEtcdPassword, s.password)
	code, stdout, stderr, _ := idkitBounded(t, "launch", "begin", "--etcd-prefix", s.prefix)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "1\n", stdout)
	requireNoSecret(t, s.password, stdout, stderr)
	code, stdout, stderr, _ = idkitBounded(t, "nodes", "--json", "--etcd-prefix", s.prefix)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "[]\n", stdout)
	requireNoSecret(t, s.password, stdout, stderr)

	const wrongPassword = "env-wrong-5be0"
	t.Setenv(cli.EnvEtcdPassword, wrongPassword)
	t.Setenv(cli.EnvEtcdDialTimeout, failDialTimeout.String())
	for _, cmd := range [][]string{{"launch", "begin"}, {"nodes"}} {
		code, stdout, stderr, took := idkitBounded(t, append(cmd, "--etcd-prefix", s.prefix)...)
		requireOneLineFailure(t, code, stdout, stderr, took, "etcd: authentication failed for user deploy (check --etcd-user and the password)")
		requireNoSecret(t, wrongPassword, stdout, stderr)
		// The file wins over the variable.
		code, stdout, stderr, _ = idkitBounded(t, append(cmd, "--etcd-prefix", s.prefix, "--etcd-password-file", s.passwordFile)...)
		assert.Equal(t, 0, code, stderr)
		requireNoSecret(t, s.password, stdout, stderr)
	}
}

// Every command that takes --etcd tells of the flags that reach a
// protected etcd.
func TestEtcdFlagsHelp(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"launch", "new", "inspect", "nodes", "serve"} {
		code, stdout, stderr := clitest.Run("help", cmd)
		require.Equal(t, 0, code, stderr)
		for _, flag := range []string{"--etcd-cacert", "--etcd-cert", "--etcd-key", "--etcd-user",
			"--etcd-password-file", "$IDKIT_ETCD_PASSWORD", "--etcd-dial-timeout", "$IDKIT_ETCD_ENDPOINTS"} {
			assert.Contains(t, stdout, flag, "help %s", cmd)
		}
		assert.Equal(t, 1, strings.Count(stdout, "--etcd-cacert FILE"), "help %s tells of the flags once", cmd)
	}
}
