package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/idkit/idkit/cmd/idkit/internal/clitest"
)

// deployment is what TestServeDocDeployment reads of a Kubernetes
// Deployment.
type deployment struct {
	Kind string
	Spec struct {
		Template struct {
			Metadata struct {
				Annotations map[string]string
			}
			Spec struct {
				Containers []struct {
					Name  string
					Args  []string
					Env   []struct{ Name string }
					Ports []struct {
						Name          string
						ContainerPort int `yaml:"containerPort"`
					}
					LivenessProbe  probe `yaml:"livenessProbe"`
					ReadinessProbe probe `yaml:"readinessProbe"`
					VolumeMounts   []struct {
						Name      string
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				}
				Volumes []struct{ Name string }
			}
		}
	}
}

type probe struct {
	HTTPGet struct {
		Path   string
		Port   int
		Scheme string
	} `yaml:"httpGet"`
}

// serveHelpFlags returns the flags that idkit serve --help lists, each
// with whether it takes a value (the flag lines of its help, "\t--name
// VALUE  what it does"), and the help.
func serveHelpFlags(t *testing.T) (flags map[string]bool, help string) {
	t.Helper()
	code, stdout, stderr := clitest.Run("serve", "--help")
	require.Equal(t, 0, code, stderr)
	help = stdout + stderr
	flags = map[string]bool{}
	name := regexp.MustCompile(`--([a-z0-9-]+)( [A-Z]+)?`)
	for line := range strings.SplitSeq(help, "\n") {
		if !strings.HasPrefix(line, "\t--") {
			continue
		}
		head, _, _ := strings.Cut(line[1:], "  ") // the flags, before what they do
		for _, m := range name.FindAllStringSubmatch(head, -1) {
			flags[m[1]] = m[2] != ""
		}
	}
	require.Contains(t, flags, "probe-addr", "the flags of idkit serve --help: %s", help)
	return flags, help
}

// docDeployment returns the Deployment in docs/serve.md's YAML blocks.
func docDeployment(t *testing.T) deployment {
	t.Helper()
	doc, err := os.ReadFile("../../../docs/serve.md")
	require.NoError(t, err)
	var found []deployment
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1) {
		dec := yaml.NewDecoder(bytes.NewReader(block[1]))
		for {
			var d deployment
			err := dec.Decode(&d)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "a YAML block of docs/serve.md:\n%s", block[1])
			if d.Kind == "Deployment" {
				found = append(found, d)
			}
		}
	}
	require.Len(t, found, 1, "Deployments in docs/serve.md")
	return found[0]
}

// TestServeDocDeployment holds the Kubernetes Deployment of
// docs/serve.md to the command: every flag it gives is one that idkit
// serve --help lists, and they all parse; the probes go to --probe-addr's
// port (HTTPS with --tls-cert), the scrape to --metrics-addr's, the main
// port asks for client certificates; and every file a flag names is in a
// mounted volume.
func TestServeDocDeployment(t *testing.T) {
	t.Parallel()
	known, help := serveHelpFlags(t)
	d := docDeployment(t)
	pod := d.Spec.Template.Spec
	require.Len(t, pod.Containers, 1)
	c := pod.Containers[0]
	require.NotEmpty(t, c.Args)
	require.Equal(t, "serve", c.Args[0])

	flags := map[string]string{}
	args := c.Args[1:]
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(args[i], "--"), "=")
		require.True(t, strings.HasPrefix(args[i], "--"), "argument %q is not a flag", args[i])
		takes, ok := known[name]
		require.True(t, ok, "--%s is not a flag of idkit serve --help", name)
		if takes && !hasValue {
			require.Less(t, i+1, len(args), "--%s without its value", name)
			i++
			value = args[i]
		}
		flags[name] = value
	}
	// The flags parse, with their values, as serve reads them: a bad
	// --schemes given last is the first error after parsing.
	code, _, stderr := clitest.Run(append(slices.Clone(c.Args), "--schemes", "nope")...)
	assert.Equal(t, 2, code, stderr)
	assert.Contains(t, stderr, `--schemes: unknown scheme "nope"`, "every flag of the Deployment parsed")
	for _, e := range c.Env {
		if strings.HasPrefix(e.Name, "IDKIT_") {
			assert.Contains(t, help, "$"+e.Name, "the environment variable %s is in idkit serve --help", e.Name)
		}
	}

	port := func(flag string) int {
		t.Helper()
		require.Contains(t, flags, flag)
		_, p, err := net.SplitHostPort(flags[flag])
		require.NoError(t, err, "--%s %s", flag, flags[flag])
		n, err := strconv.Atoi(p)
		require.NoError(t, err, "--%s %s", flag, flags[flag])
		return n
	}
	containerPorts := map[int]bool{}
	for _, p := range c.Ports {
		containerPorts[p.ContainerPort] = true
	}
	mainPort, probePort, metricsPort := port("addr"), port("probe-addr"), port("metrics-addr")
	for _, p := range []int{mainPort, probePort, metricsPort} {
		assert.True(t, containerPorts[p], "port %d is a container port", p)
	}
	assert.Len(t, map[int]bool{mainPort: true, probePort: true, metricsPort: true}, 3, "three listeners, three ports")

	// mTLS on the main port; the probes, which present no certificate,
	// on the probe listener, in HTTPS with the server's certificate.
	assert.NotEmpty(t, flags["tls-cert"])
	assert.NotEmpty(t, flags["tls-key"])
	assert.NotEmpty(t, flags["tls-client-ca"], "mutual TLS on the main port")
	for _, p := range []struct {
		name, path string
		probe      probe
	}{{"liveness", "/livez", c.LivenessProbe}, {"readiness", "/readyz", c.ReadinessProbe}} {
		assert.Equal(t, p.path, p.probe.HTTPGet.Path, p.name)
		assert.Equal(t, probePort, p.probe.HTTPGet.Port, "the %s probe goes to --probe-addr", p.name)
		assert.Equal(t, "HTTPS", p.probe.HTTPGet.Scheme, "the probe listener speaks HTTPS with --tls-cert")
	}
	ann := d.Spec.Template.Metadata.Annotations
	assert.Equal(t, "true", ann["prometheus.io/scrape"])
	assert.Equal(t, strconv.Itoa(metricsPort), ann["prometheus.io/port"], "Prometheus scrapes --metrics-addr")
	assert.Equal(t, "/metrics", ann["prometheus.io/path"])

	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
	}
	mounts := map[string]string{} // path → volume
	for _, m := range c.VolumeMounts {
		assert.True(t, volumes[m.Name], "volume %s of mount %s is defined", m.Name, m.MountPath)
		mounts[m.MountPath] = m.Name
	}
	for _, f := range []string{"tls-cert", "tls-key", "tls-client-ca", "token-file", "etcd-cacert", "etcd-cert", "etcd-key", "etcd-password-file"} {
		if file, ok := flags[f]; ok {
			_, mounted := mounts[path.Dir(file)]
			assert.True(t, mounted, "--%s %s is in a mounted volume", f, file)
		}
	}
}
