package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	modv "golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// check is the release check: it publishes every shipping module of mods
// (the workspace in dir) to a module proxy in a temporary directory, at a
// test version, and uses them from there as a user outside the repository
// does: it runs the README's install line, and TestModuleGraphs builds and
// tests a one-import program of each module and checks its module graph.
// A replace directive, a placeholder version, or a requirement of another
// version than the one in VERSION fails it first.
func check(dir string, mods []module) error {
	version, err := currentVersion(dir)
	if err != nil {
		return err
	}
	found, err := problems(mods, version)
	if err != nil {
		return err
	}
	if len(found) > 0 {
		return fmt.Errorf("the modules cannot be published as they are:\n\t%s", strings.Join(found, "\n\t"))
	}
	tmp, err := os.MkdirTemp("", "idkit-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// A test version above any release, new each run: the module cache
	// keeps what it downloaded once, and a version is never served twice
	// with other contents.
	test := fmt.Sprintf("v0.999.%d", time.Now().Unix())
	defer forget(test)
	src := filepath.Join(tmp, "src")
	if err := copyTree(dir, src); err != nil {
		return err
	}
	copied, err := workspace(src)
	if err != nil {
		return err
	}
	if err := setVersion(copied, test); err != nil {
		return err
	}
	proxy := filepath.Join(tmp, "proxy")
	for _, m := range copied {
		if !m.Ships {
			continue
		}
		if err := publish(proxy, m, test); err != nil {
			return fmt.Errorf("publish %s: %w", m.Path, err)
		}
	}
	fmt.Printf("published %d modules at %s to %s\n", countShipping(copied), test, proxy)

	goproxy, err := goEnv("GOPROXY")
	if err != nil {
		return err
	}
	env := append(os.Environ(),
		"GOWORK=off", "GOFLAGS=-mod=mod",
		"GOPROXY=file://"+filepath.ToSlash(proxy)+","+goproxy,
		"GONOSUMDB="+root,
	)

	// The README's install line, from an empty directory.
	line, err := installLine(filepath.Join(dir, "README.md"))
	if err != nil {
		return err
	}
	empty, bin := filepath.Join(tmp, "empty"), filepath.Join(tmp, "bin")
	if err := os.Mkdir(empty, 0o755); err != nil {
		return err
	}
	fmt.Println("$", line)
	install := exec.Command("sh", "-c", line)
	install.Dir, install.Env = empty, append(env, "GOBIN="+bin)
	if out, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", line, err, out)
	}
	for _, prog := range []string{"idkit", "idkit-full"} {
		out, err := exec.Command(filepath.Join(bin, prog), "version").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s version: %w\n%s", prog, err, out)
		}
		if !bytes.Contains(out, []byte(test)) {
			return fmt.Errorf("%s version prints %q, want the version installed, %s", prog, strings.TrimSpace(string(out)), test)
		}
		fmt.Printf("$ %s version\n%s", prog, out)
	}

	// A program of each module, outside the repository.
	graphs := exec.Command("go", "test", "-count=1", "-run", "^TestModuleGraphs$", "-v", root+"/internal/testkit/suites/crosscheck")
	graphs.Dir = dir
	graphs.Env = append(os.Environ(), "IDKIT_RELEASE_PROXY=file://"+filepath.ToSlash(proxy)+","+goproxy, "IDKIT_RELEASE_VERSION="+test)
	graphs.Stdout, graphs.Stderr = os.Stdout, os.Stderr
	if err := graphs.Run(); err != nil {
		return fmt.Errorf("the one-import programs of the modules from the proxy: %w", err)
	}
	return nil
}

func countShipping(mods []module) int {
	n := 0
	for _, m := range mods {
		if m.Ships {
			n++
		}
	}
	return n
}

// publish writes module m at version into the file-based module proxy
// rooted at proxy, as the Go module proxy protocol lays it out.
func publish(proxy string, m module, version string) error {
	esc, err := modv.EscapePath(m.Path)
	if err != nil {
		return err
	}
	d := filepath.Join(proxy, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(d, version+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(f, modv.Version{Path: m.Path, Version: version}, m.Dir); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	mod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
	if err != nil {
		return err
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Now().UTC().Format(time.RFC3339))
	return errors.Join(
		os.WriteFile(filepath.Join(d, version+".mod"), mod, 0o644),
		os.WriteFile(filepath.Join(d, version+".info"), []byte(info), 0o644),
		os.WriteFile(filepath.Join(d, "list"), []byte(version+"\n"), 0o644),
	)
}

// installLine returns the README's install line: the go install command
// of idkit's programs, without its comment.
func installLine(readme string) (string, error) {
	f, err := os.Open(readme)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "go install "+root+"/cmd/idkit/") {
			return line, nil
		}
	}
	return "", fmt.Errorf("%s has no line that installs %s/cmd/idkit (go install)", readme, root)
}

// copyTree copies the files of the repository at dir that git tracks or
// would track (untracked but not ignored) to to.
func copyTree(dir, to string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		from := filepath.Join(dir, name)
		fi, err := os.Lstat(from)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed, not yet committed
		}
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// forget removes version of the repository's modules from the module
// cache, where the check's downloads left them.
func forget(version string) {
	cache, err := goEnv("GOMODCACHE")
	if err != nil {
		return
	}
	owner := filepath.Dir(filepath.FromSlash(root)) // github.com/idkit
	for _, base := range []string{filepath.Join(cache, owner), filepath.Join(cache, "cache", "download", owner)} {
		var doomed []string
		_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && strings.HasSuffix(d.Name(), "@"+version) {
				doomed = append(doomed, p)
				return fs.SkipDir
			}
			if !d.IsDir() && strings.HasPrefix(d.Name(), version+".") {
				doomed = append(doomed, p)
			}
			return nil
		})
		for _, p := range doomed {
			_ = filepath.WalkDir(p, func(q string, _ fs.DirEntry, _ error) error { return os.Chmod(q, 0o755) }) // the cache's files are read-only
			_ = os.RemoveAll(p)
		}
	}
}

func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}
