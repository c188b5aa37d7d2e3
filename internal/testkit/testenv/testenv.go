// Package testenv gives tests the real servers and tools they need: it
// returns what the environment names, and when that is missing, skips
// the test, or fails it under CI=true (as .ci/run sets), so that a suite
// cannot pass in CI by skipping its servers.
package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run in CI, where a missing server or tool
// is a failure.
func CI() bool { return os.Getenv("CI") == "true" }

// Server returns the address in the environment variable env. If env is
// empty, it skips t with one line saying how to set it (for example
// "IDKIT_MYSQL_DSN='root@tcp(127.0.0.1:3306)/test'"), or fails t under
// CI=true.
func Server(t testing.TB, env, what, example string) string {
	t.Helper()
	addr := os.Getenv(env)
	if addr == "" {
		missing(t, "no "+what+": set "+env+"="+example+" to run")
	}
	return addr
}

// Tool returns the path of the program name, or skips t (fails it under
// CI=true) when it is not on PATH.
func Tool(t testing.TB, name, install string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		missing(t, "no "+name+" on PATH: "+install)
	}
	return bin
}

// Missing skips t with msg, which says what is missing and how to get it,
// or fails t under CI=true.
func Missing(t testing.TB, msg string) {
	t.Helper()
	missing(t, msg)
}

func missing(t testing.TB, msg string) {
	t.Helper()
	if CI() {
		t.Fatal(msg + " (CI=true makes this a failure)")
	}
	t.Skip(msg)
}
